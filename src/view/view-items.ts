// The viewer's model of a session's events: timeline items built page by page from the rows the CLI shows, with each step's streamed chunks assembled.
import type {
  ContentBlock,
  PendingToolCall,
  SessionEvent,
  SessionHeader,
  StreamChunk,
  TokenUsage,
  TurnEndReason,
} from "../generated.js";
import { PendingCalls } from "../log/pending-calls.js";
import { assembleMessage } from "../replay/assemble.js";
import { rowOf, type TimelineRow } from "./timeline.js";

/** Where every item of a timeline starts: the event it shows, and the turn it lies in. */
interface At {
  /** The seq of the event the item starts at. */
  readonly seq: number;
  /** The turn the item lies in, when it lies in one. */
  readonly turn?: number;
  /**
   * Set when a reader cut long texts of the item to show it in bounded memory (the viewer's
   * server does): each cut member (`text`, `reasoning`, `arguments`) with its full length in
   * UTF-16 code units. The whole event is still read raw, by its seq.
   */
  readonly cut?: Readonly<Record<string, number>>;
}

/** A turn's start; `endSeq` and `reason` when its end was read in the same page. */
export interface ViewTurn extends At {
  readonly kind: "turn";
  readonly turn: number;
  /** How the turn was started, e.g. "message from user". */
  readonly trigger: string;
  readonly endSeq?: number;
  readonly reason?: TurnEndReason["kind"];
}

/** A turn's end: how it ended (completed, aborted, error, …) and what the log says of why. */
export interface ViewTurnEnd extends At {
  readonly kind: "turn-end";
  readonly turn: number;
  readonly reason: TurnEndReason["kind"];
  readonly detail?: string;
}

/** A step's start (one model call). */
export interface ViewStep extends At {
  readonly kind: "step";
  readonly turn: number;
  readonly step: number;
}

/** A message that is not the assistant's streamed answer: user, context, steering, a blocked prompt. */
export interface ViewMessage extends At {
  readonly kind: "message";
  readonly role: "user" | "assistant" | "context" | "steering" | "prompt-blocked";
  readonly text: string;
  /** Who injected a context or steering message: "user" or "plugin NAME". */
  readonly source?: string;
  /** Why a prompt was blocked. */
  readonly detail?: string;
}

/**
 * What the assistant said in one step: its streamed chunks assembled (text and reasoning deltas
 * joined; a block's `block-end` wins over its deltas). `partial` when the page holds only part of
 * the step's chunks (the step began in an earlier page, or goes on in a later one): such items of
 * one turn and step, consecutive, join into one by concatenating `text` and `reasoning`.
 */
export interface ViewAssistant extends At {
  readonly kind: "assistant";
  readonly turn: number;
  readonly step: number;
  /** The text blocks, joined by a blank line. */
  readonly text: string;
  /** The reasoning blocks, joined by a blank line; absent when there are none. */
  readonly reasoning?: string;
  /** The seqs of the first and last chunk assembled (both the item's seq when there were none). */
  readonly chunkSeqs: readonly [number, number];
  readonly chunkCount: number;
  readonly usage?: TokenUsage;
  /** The finish reason's kind ("stop", "tool-calls", …) when the step's `finish` chunk was read. */
  readonly finish?: string;
  /** The item holds only part of its step's chunks: `continued`, `unfinished`, or both. */
  readonly partial?: true;
  /** The step began before this item's page: its earlier chunks are in the item before. */
  readonly continued?: true;
  /** The step goes on after this item's page (or live batch): its later chunks come next. */
  readonly unfinished?: true;
}

/** A tool call (as a pending call names it), its arguments pretty-printed when they are JSON. */
export interface ViewToolCall extends At, PendingToolCall {
  readonly kind: "tool-call";
}

/**
 * A tool's result; `callSeq` and `name` when it answers a call: the pending call of its own step
 * with its callId (the log's tool-pairing rule), so a call id used again in a later step or turn
 * never names an earlier step's call. The viewer draws a result beside the call whose seq is
 * `callSeq`.
 */
export interface ViewToolResult extends At {
  readonly kind: "tool-result";
  readonly callId: string;
  /** The seq of the `tool/call` it answers; absent when it answers none. */
  readonly callSeq?: number;
  /** The name of the tool its call called. */
  readonly name?: string;
  readonly isError: boolean;
  readonly text: string;
}

/** Token usage of a turn. Not built by this module (usage rides on {@link ViewAssistant}); kept for the contract. */
export interface ViewUsage extends At {
  readonly kind: "usage";
  readonly turn: number;
  readonly usage: TokenUsage;
}

/** Where a fork child's inherited events end: `inherited` (its seedLength) events before `seq`. */
export interface ViewSeedBoundary extends At {
  readonly kind: "seed-boundary";
  readonly inherited: number;
}

/** Any other event (todos, compaction, hooks), described in one line. */
export interface ViewOther extends At {
  readonly kind: "other";
  readonly type: string;
  readonly text: string;
}

/** Another tool's transcript line (a `foreign/record`): where it came from, what it is, the start of its JSON. */
export interface ViewForeign extends At {
  readonly kind: "foreign";
  readonly source: string;
  readonly line: number;
  readonly what: string;
  readonly text: string;
}

/** One item of the viewer's timeline, discriminated by `kind`, in log order. */
export type ViewItem =
  | ViewTurn
  | ViewTurnEnd
  | ViewStep
  | ViewMessage
  | ViewAssistant
  | ViewToolCall
  | ViewToolResult
  | ViewUsage
  | ViewSeedBoundary
  | ViewOther
  | ViewForeign;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The step whose chunks are being gathered. */
interface OpenStep {
  readonly turn: number;
  readonly step: number;
  /** Whether its `step/start` was read by this builder (else the step began before its first page). */
  readonly startedHere: boolean;
  /** Blocks whose `block-start` is among the chunks gathered now (since the last item). */
  readonly startedBlocks: Set<number>;
  /** Whether an item of this step was handed on unfinished: what follows continues it. */
  cut: boolean;
  chunks: StreamChunk[];
  firstSeq: number;
  lastSeq: number;
  usage: TokenUsage | undefined;
  finish: string | undefined;
  /**
   * The step's last assistant item: made of its chunks (a later `assistant/message` completes it),
   * or of an `assistant/message` of a step that streamed none.
   */
  item: Mutable<ViewAssistant> | undefined;
  /** Whether {@link item} was made of chunks (else of a message). */
  itemOfChunks: boolean;
}

/** Where a {@link ViewItemBuilder} starts, when not at seq 0. */
export interface ViewItemStart {
  /**
   * The tool calls pending in the step open where the builder starts (calls read before it that
   * its results may answer); none unless given.
   */
  readonly pendingCalls?: PendingCalls;
}

/**
 * Builds view items from a session's events, read page by page (in seq order). It keeps only what
 * later events need of earlier ones: the open step's pending tool calls, the turn being read, and
 * the chunks of the step being read (never more than one step's). {@link add} answers the items of
 * a batch that are final; {@link flush} the rest (a step still being streamed, as a `partial`
 * item). A builder may start at any seq: a step that began before it gives `partial` items, and
 * its results answer the calls `start.pendingCalls` holds.
 */
export class ViewItemBuilder {
  readonly #seedLength: number;
  readonly #calls: PendingCalls;
  readonly #turns = new Map<number, Mutable<ViewTurn>>();
  #turn: number | undefined;
  #step: OpenStep | undefined;
  #count = 0;

  constructor(header: SessionHeader, start: ViewItemStart = {}) {
    this.#seedLength = header.seedLength ?? 0;
    this.#calls = start.pendingCalls?.clone() ?? new PendingCalls();
  }

  /** The items of the next events, as far as they are final (a step's chunks wait for their end). */
  add(events: readonly SessionEvent[]): ViewItem[] {
    const items: ViewItem[] = [];
    for (const e of events) {
      this.#count = e.seq + 1;
      if (e.seq === this.#seedLength && this.#seedLength > 0) {
        this.#closeChunks(items);
        items.push({ kind: "seed-boundary", seq: e.seq, inherited: this.#seedLength });
      }
      if (e.type === "assistant/chunk") {
        this.#chunk(e.seq, e.data.turn, e.data.step, e.data.chunk);
        continue;
      }
      this.#closeChunks(items);
      this.#event(e, items);
    }
    return items;
  }

  /**
   * The items still held (the chunks of a step not yet ended, as a `partial` item), and, when
   * `atEnd` says the log ends here, the seed boundary of a log that is all inherited.
   */
  flush(atEnd = false): ViewItem[] {
    const items: ViewItem[] = [];
    const step = this.#step;
    if (step !== undefined && step.chunks.length > 0) {
      this.#closeChunks(items, true);
    }
    if (atEnd && this.#seedLength > 0 && this.#seedLength >= this.#count) {
      items.push({ kind: "seed-boundary", seq: this.#seedLength, inherited: this.#seedLength });
    }
    return items;
  }

  #chunk(seq: number, turn: number, step: number, chunk: StreamChunk): void {
    this.#turn = turn;
    let open = this.#step;
    if (open === undefined || open.turn !== turn || open.step !== step) {
      open = this.#openStep(turn, step, false);
    }
    if (open.chunks.length === 0) open.firstSeq = seq;
    open.lastSeq = seq;
    if (chunk.type === "usage") open.usage = chunk.usage;
    else if (chunk.type === "finish") open.finish = chunk.reason.kind;
    else if (chunk.type === "block-start") open.startedBlocks.add(chunk.index);
    open.chunks.push(chunk);
  }

  #openStep(turn: number, step: number, startedHere: boolean): OpenStep {
    this.#step = {
      turn,
      step,
      startedHere,
      startedBlocks: new Set(),
      cut: false,
      chunks: [],
      firstSeq: 0,
      lastSeq: 0,
      usage: undefined,
      finish: undefined,
      item: undefined,
      itemOfChunks: false,
    };
    return this.#step;
  }

  /** Turns the chunks gathered so far into an assistant item (`partial` when the step is unfinished). */
  #closeChunks(items: ViewItem[], unfinished = false): void {
    const step = this.#step;
    if (step === undefined || step.chunks.length === 0) return;
    // A run of chunks continues the step when the step began before this builder or its last item
    // was handed on unfinished. A block-end carries the whole block, whose earlier deltas were
    // then given already: only a block started in this run may take its block-end.
    const continued = step.cut || (!step.startedHere && step.item === undefined);
    const kept = continued
      ? step.chunks.filter((c) => c.type !== "block-end" || step.startedBlocks.has(c.index))
      : step.chunks;
    const item: Mutable<ViewAssistant> = {
      kind: "assistant",
      seq: step.firstSeq,
      turn: step.turn,
      step: step.step,
      ...contentText(assembled(kept)),
      chunkSeqs: [step.firstSeq, step.lastSeq],
      chunkCount: step.chunks.length,
    };
    if (step.usage !== undefined) item.usage = step.usage;
    if (step.finish !== undefined) item.finish = step.finish;
    if (continued) item.continued = true;
    if (unfinished) item.unfinished = true;
    if (continued || unfinished) item.partial = true;
    step.cut = unfinished;
    step.startedBlocks.clear();
    step.item = item;
    step.itemOfChunks = true;
    step.chunks = [];
    step.usage = undefined;
    step.finish = undefined;
    items.push(item);
  }

  #event(e: SessionEvent, items: ViewItem[]): void {
    // Most events name their turn: a page that begins inside a turn learns it from them.
    const named = (e.data as { turn?: unknown }).turn;
    if (typeof named === "number") this.#turn = named;
    switch (e.type) {
      case "step/start":
        this.#openStep(e.data.turn, e.data.step, true);
        break;
      case "assistant/message":
        this.#message(e.seq, e.data.turn, e.data.step, e.data.content, e.data.usage, items);
        return;
      default:
        break;
    }
    const open = this.#step;
    if ((e.type === "step/end" || e.type === "turn/end") && open?.cut === true) {
      // The step's last item was handed on unfinished: an empty item that continues it says it ended.
      items.push({
        kind: "assistant",
        seq: e.seq,
        turn: open.turn,
        step: open.step,
        text: "",
        chunkSeqs: [e.seq, e.seq],
        chunkCount: 0,
        partial: true,
        continued: true,
      });
      open.cut = false;
    }
    const row = rowOf(e, this.#calls);
    const item = row === undefined ? undefined : this.#itemOf(row);
    if (item !== undefined) items.push(item);
    if (e.type === "turn/end") {
      const started = this.#turns.get(e.data.turn);
      if (started !== undefined) {
        started.endSeq = e.seq;
        started.reason = e.data.reason.kind;
        this.#turns.delete(e.data.turn);
      }
      this.#turn = undefined;
    }
    if (e.type === "step/end") this.#step = undefined;
  }

  /**
   * An `assistant/message` completes the item its step's chunks made (its usage, when the chunks
   * gave none); a step that streamed no chunk is shown from its messages' content, each message an
   * item (an imported transcript writes one per line the tool wrote). In a step that began before
   * this builder, the chunks read earlier said the text already: only usage is added.
   */
  #message(
    seq: number,
    turn: number,
    stepNo: number,
    content: readonly ContentBlock[],
    usage: TokenUsage | undefined,
    items: ViewItem[],
  ): void {
    const step = this.#step;
    const same = step !== undefined && step.turn === turn && step.step === stepNo;
    if (same && step.item !== undefined && step.itemOfChunks && !step.cut) {
      if (usage !== undefined && step.item.usage === undefined) step.item.usage = usage;
      return;
    }
    // The message repeats what the chunks said: after chunks handed on before, only its usage is new.
    const continued = !same || !step.startedHere || step.cut;
    const item: Mutable<ViewAssistant> = {
      kind: "assistant",
      seq,
      turn,
      step: stepNo,
      ...(continued ? { text: "" } : contentText(content)),
      chunkSeqs: [seq, seq],
      chunkCount: 0,
    };
    if (usage !== undefined) item.usage = usage;
    // A message of tool calls alone says nothing the tool-call items do not (an imported
    // transcript writes one per tool_use line): no empty assistant item for it.
    if (!continued && item.text === "" && item.reasoning === undefined && usage === undefined)
      return;
    if (continued) {
      item.continued = true;
      item.partial = true;
    }
    if (same) {
      step.item = item;
      step.itemOfChunks = false;
      step.cut = false;
    }
    items.push(item);
  }

  #itemOf(row: TimelineRow): ViewItem | undefined {
    const turn = this.#turn === undefined ? {} : { turn: this.#turn };
    switch (row.kind) {
      case "turn": {
        const item: Mutable<ViewTurn> = { ...row };
        this.#turns.set(row.turn, item);
        return item;
      }
      case "turn-end":
        return row;
      case "step":
        return { kind: "step", seq: row.seq, turn: row.turn, step: row.step };
      case "step-end":
      case "chunk":
        return undefined;
      case "message":
        return { ...row, ...turn };
      case "tool-call":
        return { ...row, ...turn, arguments: prettyJson(row.arguments) };
      case "tool-result":
      case "other":
      case "foreign":
        return { ...row, ...turn };
      case "seed-boundary":
        return undefined;
    }
  }
}

/** The text and reasoning of content blocks, each kind's blocks joined by a blank line. */
function contentText(content: readonly ContentBlock[]): { text: string; reasoning?: string } {
  const text: string[] = [];
  const reasoning: string[] = [];
  for (const block of content) {
    if (block.type === "text") text.push(block.text);
    else if (block.type === "reasoning") reasoning.push(block.text);
  }
  return {
    text: text.join("\n\n"),
    ...(reasoning.length === 0 ? {} : { reasoning: reasoning.join("\n\n") }),
  };
}

/** The blocks of chunks; a chunk stream whose block kinds contradict each other shows its deltas as text. */
function assembled(chunks: readonly StreamChunk[]): ContentBlock[] {
  try {
    return assembleMessage(chunks);
  } catch {
    const text = chunks.map((c) => (c.type === "text-delta" ? c.text : "")).join("");
    return [{ type: "text", text }];
  }
}

/** JSON arguments indented by two spaces; anything else as it is. */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One page of a session's view items, as the viewer's timeline reads it. */
export interface ViewPage {
  readonly items: ViewItem[];
  /** The seq the page starts at. */
  readonly fromSeq: number;
  /** The seq the next page starts at. */
  readonly nextSeq: number;
  /** The log's length when the page was read. */
  readonly length: number;
  /** Whether the page reaches the end of the log. */
  readonly done: boolean;
}

/**
 * The items of one page of events (`events`, read from `fromSeq`): built by a builder of its own,
 * so a step cut by the page's edges gives `partial` items. `done` adds a seed boundary at the end
 * of a log that is all inherited; `start` gives the calls pending where the page starts.
 */
export function viewItemsOfPage(
  header: SessionHeader,
  events: readonly SessionEvent[],
  done: boolean,
  start: ViewItemStart = {},
): ViewItem[] {
  const builder = new ViewItemBuilder(header, start);
  return [...builder.add(events), ...builder.flush(done)];
}

/**
 * Where to cut a page so it does not end inside a step that began in it: the index of the open
 * step's `step/start` when a step is still open at the end of `events` and did not begin at index
 * 0 (a step longer than a page is cut where the page ends); `events.length` otherwise.
 */
export function pageCut(events: readonly SessionEvent[]): number {
  let open: number | undefined;
  for (let i = 0; i < events.length; i++) {
    const type = (events[i] as SessionEvent).type;
    if (type === "step/start") open = i;
    else if (type === "step/end" || type === "turn/end") open = undefined;
  }
  return open === undefined || open === 0 ? events.length : open;
}

/**
 * Items of consecutive pages (or live batches) with each `unfinished` assistant item and the
 * `continued` one of the same turn and step after it joined into one: `text` and `reasoning`
 * concatenated, the chunk seqs spanned and counted, the last usage and finish kept. The joined
 * item is `continued` as the first was and `unfinished` as the last was.
 */
export function joinPartials(items: readonly ViewItem[]): ViewItem[] {
  const out: ViewItem[] = [];
  for (const item of items) {
    const last = out[out.length - 1];
    if (
      item.kind === "assistant" &&
      item.continued === true &&
      last?.kind === "assistant" &&
      last.unfinished === true &&
      last.turn === item.turn &&
      last.step === item.step
    ) {
      out[out.length - 1] = joined(last, item);
    } else {
      out.push(item);
    }
  }
  return out;
}

function joined(a: ViewAssistant, b: ViewAssistant): ViewAssistant {
  const reasoning = (a.reasoning ?? "") + (b.reasoning ?? "");
  const usage = b.usage ?? a.usage;
  const finish = b.finish ?? a.finish;
  const first = a.chunkCount > 0 ? a.chunkSeqs[0] : b.chunkSeqs[0];
  const last = b.chunkCount > 0 ? b.chunkSeqs[1] : a.chunkSeqs[1];
  return {
    kind: "assistant",
    seq: a.seq,
    turn: a.turn,
    step: a.step,
    text: a.text + b.text,
    ...(reasoning === "" ? {} : { reasoning }),
    chunkSeqs: [first, last],
    chunkCount: a.chunkCount + b.chunkCount,
    ...(usage === undefined ? {} : { usage }),
    ...(finish === undefined ? {} : { finish }),
    ...(a.continued || b.unfinished ? { partial: true } : {}),
    ...(a.continued ? { continued: true } : {}),
    ...(b.unfinished ? { unfinished: true } : {}),
  };
}
