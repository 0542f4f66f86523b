// A session as a readable timeline: turns, steps, messages and tool calls, with the seed boundary marked.
import type {
  ContentBlock,
  MessageSource,
  SessionEvent,
  SessionHeader,
  TurnEndReason,
} from "../generated.js";
import { excerpt, isoTime, type Palette, plural } from "./output.js";

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
      readonly chunks: number;
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
  | { readonly kind: "other"; readonly seq: number; readonly type: string; readonly text: string }
  | { readonly kind: "seed-boundary"; readonly inherited: number };

/** A session's timeline: its header, counts, and rows in log order. */
export interface Timeline {
  readonly header: SessionHeader;
  readonly eventCount: number;
  readonly seedLength: number;
  readonly rows: readonly TimelineRow[];
}

/**
 * The timeline of a log. Chunks are not rows: each step row counts its `assistant/chunk`s.
 * A `seed-boundary` row stands where the inherited
 * prefix (the header's `seedLength`) ends, when there is one.
 */
export function buildTimeline(header: SessionHeader, events: readonly SessionEvent[]): Timeline {
  const seedLength = header.seedLength ?? 0;
  const chunks = new Map<string, number>();
  for (const e of events) {
    if (e.type === "assistant/chunk") {
      const key = `${e.data.turn}/${e.data.step}`;
      chunks.set(key, (chunks.get(key) ?? 0) + 1);
    }
  }
  const toolNames = new Map<string, string>();
  const rows: TimelineRow[] = [];
  const boundary = () => {
    if (seedLength > 0) rows.push({ kind: "seed-boundary", inherited: seedLength });
  };
  for (const e of events) {
    if (e.seq === seedLength) boundary();
    const row = rowOf(e, chunks, toolNames);
    if (row !== undefined) rows.push(row);
  }
  if (seedLength >= events.length) boundary();
  return { header, eventCount: events.length, seedLength, rows };
}

function rowOf(
  e: SessionEvent,
  chunks: ReadonlyMap<string, number>,
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
        chunks: chunks.get(`${e.data.turn}/${e.data.step}`) ?? 0,
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

/**
 * The lines of a timeline for people: a header block, then one line per row (a step's end is
 * not a line: it only ends the step's indentation), inherited rows dimmed.
 */
export function renderTimeline(timeline: Timeline, paint: Palette): string[] {
  const { header, eventCount, seedLength, rows } = timeline;
  const lines = [`${paint.bold("session")} ${paint.bold(header.id)}`];
  const facts = [
    plural(eventCount, "event"),
    `created ${isoTime(header.createdAt)}`,
    ...(header.parentSession === undefined ? [] : [`forked from ${header.parentSession}`]),
    ...(seedLength > 0 ? [`${seedLength} inherited`] : []),
  ];
  lines.push(`  ${paint.dim(facts.join(" · "))}`);
  if (header.cwd !== undefined) lines.push(`  ${paint.dim("cwd")} ${paint.cyan(header.cwd)}`);
  lines.push("");
  const width = String(Math.max(0, eventCount - 1)).length;
  // Rows inside a turn are indented one level, rows inside a step two.
  let inTurn = false;
  let inStep = false;
  for (const row of rows) {
    if (row.kind === "seed-boundary") {
      lines.push(paint.yellow(`── seed boundary (${plural(row.inherited, "inherited event")}) ──`));
      continue;
    }
    if (row.kind === "step-end") {
      inStep = false;
      continue;
    }
    let depth = (inTurn ? 1 : 0) + (inStep ? 1 : 0);
    if (row.kind === "turn") {
      depth = 0;
      inTurn = true;
    } else if (row.kind === "turn-end") {
      depth = 0;
      inTurn = false;
      inStep = false;
    } else if (row.kind === "step") {
      depth = 1;
      inStep = true;
    }
    const body = `${"  ".repeat(depth)}${rowText(row, paint)}`;
    const seq = paint.dim(String(row.seq).padStart(width));
    lines.push(`${seq}  ${row.seq < seedLength ? paint.dim(stripped(body)) : body}`);
  }
  return lines;
}

function rowText(
  row: Exclude<TimelineRow, { kind: "seed-boundary" | "step-end" }>,
  paint: Palette,
): string {
  switch (row.kind) {
    case "turn":
      return paint.bold(`turn ${row.turn}`) + paint.dim(` · ${row.trigger}`);
    case "turn-end": {
      const reason = row.reason === "completed" ? paint.green(row.reason) : paint.red(row.reason);
      return `${paint.bold(`turn ${row.turn} end`)} · ${reason}${row.detail ? `: ${row.detail}` : ""}`;
    }
    case "step":
      return `${paint.blue(`step ${row.step}`)}${paint.dim(` · ${plural(row.chunks, "chunk")}`)}`;
    case "message": {
      const who =
        row.role === "user"
          ? paint.green("user")
          : row.role === "assistant"
            ? paint.magenta("assistant")
            : paint.yellow(row.role + (row.source ? ` (${row.source})` : ""));
      const detail = row.detail ? paint.dim(`  [${row.detail}]`) : "";
      return `${who}: ${row.text}${detail}`;
    }
    case "tool-call":
      return `${paint.cyan(`→ ${row.name}`)} ${paint.dim(row.arguments)}`;
    case "tool-result": {
      const label = `← ${row.name ?? row.callId}${row.isError ? " (error)" : ""}`;
      return `${row.isError ? paint.red(label) : paint.cyan(label)} ${row.text}`;
    }
    case "other":
      return `${paint.dim(row.type)} ${row.text}`;
  }
}

/** Text without SGR codes, so that a dimmed row is dim throughout rather than half-coloured. */
function stripped(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escape codes is the point.
  return text.replace(/\u001b\[[0-9;]*m/g, "");
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
