// A session as timeline rows: turns, steps, messages and tool calls, the seed boundary marked; read at once or as events land.
import type {
  AssistantChunkEvent,
  ContentBlock,
  MessageSource,
  SessionEvent,
  SessionHeader,
  TurnEndReason,
} from "../generated.js";
import { excerpt, plural } from "./output.js";

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
  | { readonly kind: "seed-boundary"; readonly inherited: number };

/** A session's timeline: its header, counts, and rows in log order. */
export interface Timeline {
  readonly header: SessionHeader;
  /** The session's title (explicit, else derived from its first user message), when it has one. */
  readonly title?: string;
  readonly eventCount: number;
  readonly seedLength: number;
  /** The turn the log ends inside, when it does: in progress, or interrupted and not yet repaired. */
  readonly openTurn?: number;
  readonly rows: readonly TimelineRow[];
}

/** What a timeline is made of: a session as stored (a `Session` is one). */
export interface TimelineSource {
  readonly header: SessionHeader;
  readonly title?: string;
  readonly events: readonly SessionEvent[];
  readonly openTurn: number | undefined;
}

/**
 * Rows of one session's events: first the log as read, then (for a followed session) each batch
 * that lands after it. It remembers what later rows need of earlier events (tool names by call id).
 */
export class TimelineBuilder {
  readonly #toolNames = new Map<string, string>();

  /**
   * The timeline of a log read at once. Chunks are not rows: each step row counts its
   * `assistant/chunk`s. A `seed-boundary` row stands where the inherited prefix (the header's
   * `seedLength`) ends, when there is one.
   */
  timeline(source: TimelineSource): Timeline {
    const { header, events, openTurn } = source;
    const seedLength = header.seedLength ?? 0;
    const chunks = new Map<string, number>();
    for (const e of events) {
      if (e.type === "assistant/chunk") {
        const key = `${e.data.turn}/${e.data.step}`;
        chunks.set(key, (chunks.get(key) ?? 0) + 1);
      }
    }
    const rows: TimelineRow[] = [];
    const boundary = () => {
      if (seedLength > 0) rows.push({ kind: "seed-boundary", inherited: seedLength });
    };
    for (const e of events) {
      if (e.seq === seedLength) boundary();
      const row = rowOf(e, chunks, this.#toolNames);
      if (row !== undefined) rows.push(row);
    }
    if (seedLength >= events.length) boundary();
    return {
      header,
      ...(source.title === undefined ? {} : { title: source.title }),
      eventCount: events.length,
      seedLength,
      ...(openTurn === undefined ? {} : { openTurn }),
      rows,
    };
  }

  /**
   * The rows of events that landed after those already given, as they land: a step row has no
   * chunk count (its chunks are still to come) and each text or reasoning delta is a `chunk` row.
   * New events are never inherited, so no seed boundary is among them.
   */
  follow(events: readonly SessionEvent[]): TimelineRow[] {
    const rows: TimelineRow[] = [];
    for (const e of events) {
      const row = e.type === "assistant/chunk" ? chunkRow(e) : rowOf(e, undefined, this.#toolNames);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }
}

/** The timeline of a log read at once; see {@link TimelineBuilder.timeline}. */
export function buildTimeline(source: TimelineSource): Timeline {
  return new TimelineBuilder().timeline(source);
}

function chunkRow(e: AssistantChunkEvent): TimelineRow | undefined {
  const { chunk, turn, step } = e.data;
  if (chunk.type !== "text-delta" && chunk.type !== "reasoning-delta") return undefined;
  if (chunk.text === "") return undefined;
  const stream = chunk.type === "text-delta" ? "text" : "reasoning";
  return { kind: "chunk", seq: e.seq, turn, step, stream, text: chunk.text };
}

/** The row of an event; `chunks` counts each step's chunks, undefined when they are yet to come. */
function rowOf(
  e: SessionEvent,
  chunks: ReadonlyMap<string, number> | undefined,
  toolNames: Map<string, string>,
): TimelineRow | undefined {
  const { seq } = e;
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
      return {
        kind: "step",
        seq,
        turn: e.data.turn,
        step: e.data.step,
        ...(chunks === undefined
          ? {}
          : { chunks: chunks.get(`${e.data.turn}/${e.data.step}`) ?? 0 }),
      };
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
      toolNames.set(e.data.callId, e.data.name);
      return {
        kind: "tool-call",
        seq,
        callId: e.data.callId,
        name: e.data.name,
        arguments: excerpt(e.data.arguments, 80),
      };
    case "tool/result": {
      const name = toolNames.get(e.data.callId);
      return {
        kind: "tool-result",
        seq,
        callId: e.data.callId,
        ...(name === undefined ? {} : { name }),
        isError: e.data.isError,
        text: textOf(e.data.content),
      };
    }
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
        text: `seqs ${e.data.shadowedRange.start}–${e.data.shadowedRange.end} summarised: ${excerpt(e.data.summary, 60)}`,
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
  }
}

function textOf(content: readonly ContentBlock[], withResults = true): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "tool-result" && withResults) parts.push(textOf(block.content));
  }
  return excerpt(parts.join(" "));
}

function reasoningOf(content: readonly ContentBlock[]): string {
  const text = content
    .filter((b) => b.type === "reasoning")
    .map((b) => (b as { text: string }).text)
    .join(" ");
  return text === "" ? "" : `(reasoning) ${excerpt(text, 84)}`;
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
