// A session as timeline rows: turns, steps, messages and tool calls, the seed boundary marked; read at once or as events land.
import type {
  AssistantChunkEvent,
  ContentBlock,
  MessageSource,
  SessionEvent,
  SessionHeader,
  TurnEndReason,
} from "../generated.js";
import { PendingCalls } from "../log/pending-calls.js";
import { plural } from "../util/plural.js";
import { cutToWidth, oneLine } from "../util/text-width.js";

/** One row of a timeline; `seq` is the event it shows. */
export type TimelineRow =
  | { readonly kind: "turn"; readonly seq: number; readonly turn: number; readonly trigger: string }
  | {
      readonly kind: "turn-end";
      readonly seq: number;
      readonly turn: number;
      readonly reason: TurnEndReason["kind"];
      readonly detail?: string;
    }
  | {
      readonly kind: "step";
      readonly seq: number;
      readonly turn: number;
      readonly step: number;
      /** The step's `assistant/chunk`s; absent on a row shown as it lands (its chunks follow). */
      readonly chunks?: number;
    }
  | {
      readonly kind: "step-end";
      readonly seq: number;
      readonly turn: number;
      readonly step: number;
    }
  | {
      readonly kind: "message";
      readonly seq: number;
      readonly role: "user" | "assistant" | "context" | "steering" | "prompt-blocked";
      readonly text: string;
      readonly source?: string;
      readonly detail?: string;
    }
  | {
      readonly kind: "tool-call";
      readonly seq: number;
      readonly callId: string;
      readonly name: string;
      readonly arguments: string;
    }
  | {
      readonly kind: "tool-result";
      readonly seq: number;
      readonly callId: string;
      /**
       * The seq of the `tool/call` it answers: the pending call of its own step with its callId
       * (a call id used again in another step names that step's call); absent when it answers none.
       */
      readonly callSeq?: number;
      /** The name of the tool its call called, when it answers one. */
      readonly name?: string;
      readonly isError: boolean;
      readonly text: string;
    }
  | {
      /** The text of one streamed `assistant/chunk` (a text or reasoning delta), as it landed. */
      readonly kind: "chunk";
      readonly seq: number;
      readonly turn: number;
      readonly step: number;
      readonly stream: "text" | "reasoning";
      readonly text: string;
    }
  | { readonly kind: "other"; readonly seq: number; readonly type: string; readonly text: string }
  | {
      /** A `foreign/record`: another tool's transcript line, shown collapsed (its JSON one click away). */
      readonly kind: "foreign";
      readonly seq: number;
      /** The tool the line comes from, e.g. "claude-code". */
      readonly source: string;
      /** The line's number in the tool's file. */
      readonly line: number;
      /** What the record is, by its own `type` (and `subtype`, `data.type` or `payload.type`), when it says. */
      readonly what: string;
      /** The start of the record's JSON, on one line (at most {@link FOREIGN_PREVIEW_WIDTH} columns). */
      readonly text: string;
    }
  | { readonly kind: "seed-boundary"; readonly inherited: number };

/** A session's timeline: its header, counts, and rows in log order. */
export interface Timeline extends TimelineSummary {
  readonly rows: readonly TimelineRow[];
}

/** What a timeline says besides its rows. */
export interface TimelineSummary {
  readonly header: SessionHeader;
  /** The session's title (explicit, else derived from its first user message), when it has one. */
  readonly title?: string;
  readonly eventCount: number;
  readonly seedLength: number;
  /** The turn the log ends inside, when it does: in progress, or interrupted and not yet repaired. */
  readonly openTurn?: number;
}

/** A step row whose chunk count is still growing while its step is read. */
type OpenStepRow = { -readonly [K in keyof StepRow]: StepRow[K] };
type StepRow = Extract<TimelineRow, { kind: "step" }>;

/**
 * Rows of one session's events, read page by page: first the log as stored ({@link read}, then
 * {@link finish}), then (for a followed session) each batch that lands after it ({@link follow}).
 * Rows carry their text whole; cutting it is the renderer's business. It remembers only what
 * later rows need of earlier events (the open step's pending tool calls) and the rows of the step
 * being read, so its memory does not grow with the length of the log.
 */
export class TimelineBuilder {
  readonly #header: SessionHeader;
  readonly #seedLength: number;
  readonly #calls = new PendingCalls();
  #count = 0;
  #openTurn: number | undefined;
  /** The open step's row and the rows after it: held until the step's chunk count is final. */
  #step: OpenStepRow | undefined;
  #held: TimelineRow[] = [];

  constructor(header: SessionHeader) {
    this.#header = header;
    this.#seedLength = header.seedLength ?? 0;
  }

  /**
   * The rows of the next events of the log as stored (in seq order, from seq 0), as far as they are
   * final. Chunks are not rows: each step row counts its `assistant/chunk`s, so a step's rows are
   * handed on once the step ends. A `seed-boundary` row stands where the inherited prefix ends.
   */
  read(events: readonly SessionEvent[]): TimelineRow[] {
    const rows: TimelineRow[] = [];
    for (const e of events) {
      this.#count = e.seq + 1;
      if (e.seq === this.#seedLength && this.#seedLength > 0) this.#emit(rows, this.#boundary());
      if (e.type === "turn/start") this.#openTurn = e.data.turn;
      if (e.type === "turn/end") this.#openTurn = undefined;
      if (e.type === "assistant/chunk") {
        const step = this.#step;
        if (step !== undefined && step.turn === e.data.turn && step.step === e.data.step) {
          step.chunks = (step.chunks ?? 0) + 1;
        }
        continue;
      }
      if (e.type === "step/start" || e.type === "step/end" || e.type === "turn/end") {
        rows.push(...this.#release());
      }
      const row = rowOf(e, this.#calls);
      if (row === undefined) continue;
      if (row.kind === "step") {
        this.#step = { ...row, chunks: 0 };
        this.#held.push(this.#step);
      } else {
        this.#emit(rows, row);
      }
    }
    return rows;
  }

  /** The rows still held when the log read ends, and the seed boundary when the log is all inherited. */
  finish(): TimelineRow[] {
    const rows = this.#release();
    if (this.#seedLength > 0 && this.#seedLength >= this.#count) rows.push(this.#boundary());
    return rows;
  }

  /** The counts of what was read so far. */
  summary(): TimelineSummary {
    return {
      header: this.#header,
      eventCount: this.#count,
      seedLength: this.#seedLength,
      ...(this.#openTurn === undefined ? {} : { openTurn: this.#openTurn }),
    };
  }

  /**
   * The rows of events that landed after those already read, as they land: a step row has no
   * chunk count (its chunks are still to come) and each text or reasoning delta is a `chunk` row.
   * New events are never inherited, so no seed boundary is among them.
   */
  follow(events: readonly SessionEvent[]): TimelineRow[] {
    const rows: TimelineRow[] = [];
    for (const e of events) {
      const row = e.type === "assistant/chunk" ? chunkRow(e) : rowOf(e, this.#calls);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  #boundary(): TimelineRow {
    return { kind: "seed-boundary", inherited: this.#seedLength };
  }

  #emit(rows: TimelineRow[], row: TimelineRow): void {
    if (this.#step === undefined) rows.push(row);
    else this.#held.push(row);
  }

  #release(): TimelineRow[] {
    const held = this.#held;
    this.#held = [];
    this.#step = undefined;
    return held;
  }
}

function chunkRow(e: AssistantChunkEvent): TimelineRow | undefined {
  const { chunk, turn, step } = e.data;
  if (chunk.type !== "text-delta" && chunk.type !== "reasoning-delta") return undefined;
  if (chunk.text === "") return undefined;
  const stream = chunk.type === "text-delta" ? "text" : "reasoning";
  return { kind: "chunk", seq: e.seq, turn, step, stream, text: chunk.text };
}

/**
 * The row of an event (a step row without its chunk count), its text whole. `calls` follows the
 * event (see {@link PendingCalls.follow}): every step/start, step/end, tool/call and tool/result
 * of the log must pass through here in order, and a result's row names the call it answers.
 */
export function rowOf(e: SessionEvent, calls: PendingCalls): TimelineRow | undefined {
  const { seq } = e;
  const answered = calls.follow(e);
  switch (e.type) {
    case "turn/start":
      return {
        kind: "turn",
        seq,
        turn: e.data.turn,
        trigger: `${e.data.trigger.kind} from ${sourceName(e.data.trigger.source)}`,
      };
    case "turn/end": {
      const detail = reasonDetail(e.data.reason);
      return {
        kind: "turn-end",
        seq,
        turn: e.data.turn,
        reason: e.data.reason.kind,
        ...(detail === undefined ? {} : { detail }),
      };
    }
    case "step/start":
      return { kind: "step", seq, turn: e.data.turn, step: e.data.step };
    case "user/message":
      return { kind: "message", seq, role: "user", text: textOf(e.data.content) };
    case "context/message":
      return {
        kind: "message",
        seq,
        role: "context",
        text: textOf(e.data.content),
        source: sourceName(e.data.source),
      };
    case "steering/message":
      return {
        kind: "message",
        seq,
        role: "steering",
        text: textOf(e.data.content),
        source: sourceName(e.data.source),
      };
    case "prompt/blocked":
      return {
        kind: "message",
        seq,
        role: "prompt-blocked",
        text: textOf(e.data.content),
        detail: e.data.reason,
      };
    case "assistant/message": {
      const text = textOf(e.data.content, false);
      const calls = e.data.content.filter((b) => b.type === "tool-call").length;
      const usage = e.data.usage;
      const detail = [
        calls > 0 ? plural(calls, "tool call") : "",
        usage ? `${usage.inputTokens} in / ${usage.outputTokens} out tokens` : "",
      ]
        .filter((s) => s !== "")
        .join(", ");
      return {
        kind: "message",
        seq,
        role: "assistant",
        text: text === "" ? reasoningOf(e.data.content) : text,
        ...(detail === "" ? {} : { detail }),
      };
    }
    case "tool/call":
      return {
        kind: "tool-call",
        seq,
        callId: e.data.callId,
        name: e.data.name,
        arguments: e.data.arguments,
      };
    case "tool/result":
      return {
        kind: "tool-result",
        seq,
        callId: e.data.callId,
        ...(answered === undefined ? {} : { callSeq: answered.seq, name: answered.data.name }),
        isError: e.data.isError,
        text: textOf(e.data.content),
      };
    case "todo/write": {
      const done = e.data.todos.filter((t) => t.status === "completed").length;
      return {
        kind: "other",
        seq,
        type: e.type,
        text: `${done}/${plural(e.data.todos.length, "todo")} completed`,
      };
    }
    case "compact/start":
      return { kind: "other", seq, type: e.type, text: `turn ${e.data.turn}` };
    case "compact/summary":
      return {
        kind: "other",
        seq,
        type: e.type,
        text: `seqs ${e.data.shadowedRange.start}–${e.data.shadowedRange.end} summarised: ${e.data.summary}`,
      };
    case "compact/end":
      return {
        kind: "other",
        seq,
        type: e.type,
        text: e.data.error === undefined ? "done" : `failed: ${e.data.error}`,
      };
    case "hook/invoked":
      return {
        kind: "other",
        seq,
        type: e.type,
        text: `${e.data.point} ${e.data.handlerId} (${e.data.dialect})`,
      };
    case "hook/result":
      return {
        kind: "other",
        seq,
        type: e.type,
        text: `${e.data.point} ${e.data.handlerId}: ${e.data.decision}`,
      };
    case "step/end":
      return { kind: "step-end", seq, turn: e.data.turn, step: e.data.step };
    case "assistant/chunk":
      return undefined;
    case "foreign/record":
      return {
        kind: "foreign",
        seq,
        source: e.data.source,
        line: e.data.line,
        what: recordKind(e.data.record),
        text: cutToWidth(oneLine(JSON.stringify(e.data.record)), FOREIGN_PREVIEW_WIDTH),
      };
  }
}

/** How many columns of a foreign record's JSON a row shows. */
export const FOREIGN_PREVIEW_WIDTH = 200;

/**
 * What a foreign record is, as it names itself: its `type`, with the kind one level down in
 * parentheses when it has one (`subtype`, or the `type` of its `data` or `payload` — Claude Code's
 * system and progress lines, Codex's wrapped items); "" when it names none.
 */
export function recordKind(record: unknown): string {
  if (record === null || typeof record !== "object" || Array.isArray(record)) return "";
  const r = record as Record<string, unknown>;
  if (typeof r.type !== "string") return "";
  const inner = [r.subtype, typeOf(r.data), typeOf(r.payload)].find((k) => typeof k === "string");
  return inner === undefined ? r.type : `${r.type} (${inner})`;
}

function typeOf(value: unknown): unknown {
  return value !== null && typeof value === "object"
    ? (value as { type?: unknown }).type
    : undefined;
}

function textOf(content: readonly ContentBlock[], withResults = true): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "tool-result" && withResults) parts.push(textOf(block.content));
  }
  return parts.join(" ");
}

function reasoningOf(content: readonly ContentBlock[]): string {
  const text = content
    .filter((b) => b.type === "reasoning")
    .map((b) => (b as { text: string }).text)
    .join(" ");
  return text === "" ? "" : `(reasoning) ${text}`;
}

function sourceName(source: MessageSource): string {
  return source.kind === "user" ? "user" : `plugin ${source.plugin}`;
}

function reasonDetail(reason: TurnEndReason): string | undefined {
  switch (reason.kind) {
    case "aborted":
      return reason.reason;
    case "error":
      return `step ${reason.step}: ${reason.message}${reason.code ? ` (${reason.code})` : ""}`;
    case "rejected":
      return reason.reason;
    default:
      return undefined;
  }
}
