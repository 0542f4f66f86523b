// Helpers for the Codex import tests: the real rollouts beside the repository, counts read straight from their lines, and the log check of a mapped session.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { checkLogText, type LogProblem } from "../../src/cli/validate-log.js";
import type { SessionEvent, StreamChunk } from "../../src/generated.js";
import type { MappedSession } from "../../src/import/transcript.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";

/** Real Codex rollouts other projects committed (their origins are listed beside them), read where they are. */
export const CODEX_FIXTURES = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "shared",
  "fixtures-real",
  "codex",
);

export const HAVE_CODEX_FIXTURES = existsSync(CODEX_FIXTURES);

/** One real rollout: its path under the fixtures folder and its text. */
export interface Rollout {
  readonly name: string;
  readonly text: string;
}

/** Every `*.jsonl` under the fixtures folder, sorted by path. */
export function codexRollouts(): Rollout[] {
  const found: Rollout[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".jsonl")) {
        found.push({ name: relative(CODEX_FIXTURES, path), text: readFileSync(path, "utf8") });
      }
    }
  };
  walk(CODEX_FIXTURES);
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** What a rollout holds, counted from its raw JSON lines without the mapping's code. */
export interface RolloutCounts {
  /** Prompts the user typed: Codex's `event_msg` `user_message` lines. */
  readonly prompts: number;
  /** Text parts of assistant `message` items. */
  readonly assistantTexts: number;
  /** Reasoning parts: `summary` parts plus `content` parts of `reasoning` items. */
  readonly reasoning: number;
  /** `function_call`, `custom_tool_call`, `local_shell_call` and `web_search_call` items. */
  readonly toolCalls: number;
  /** `function_call_output` and `custom_tool_call_output` items. */
  readonly toolResults: number;
  /** Developer and system messages, user-role messages no `user_message` follows, `compacted` lines. */
  readonly context: number;
  /** `task_started` lines, or (a rollout without them) prompts. */
  readonly turns: number;
  /** `task_complete` and `turn_aborted` lines. */
  readonly turnEnds: number;
  /** Non-blank lines. */
  readonly lines: number;
}

type Line = { readonly type?: string; readonly payload?: Record<string, unknown> };

export function rawCounts(text: string): RolloutCounts {
  const lines = text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Line);
  const item = (l: Line | undefined) => (l?.type === "response_item" ? l.payload : undefined);
  const event = (l: Line | undefined) => (l?.type === "event_msg" ? l.payload?.type : undefined);
  const count = (test: (l: Line, i: number) => boolean) => lines.filter(test).length;
  const sum = (f: (l: Line) => number) => lines.reduce((n, l) => n + f(l), 0);
  const length = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  const prompts = count((l) => event(l) === "user_message");
  const tasks = count((l) => event(l) === "task_started");
  return {
    prompts,
    assistantTexts: sum((l) =>
      item(l)?.type === "message" && item(l)?.role === "assistant" ? length(item(l)?.content) : 0,
    ),
    reasoning: sum((l) =>
      item(l)?.type === "reasoning" ? length(item(l)?.summary) + length(item(l)?.content) : 0,
    ),
    toolCalls: count((l) =>
      ["function_call", "custom_tool_call", "local_shell_call", "web_search_call"].includes(
        String(item(l)?.type),
      ),
    ),
    toolResults: count((l) =>
      ["function_call_output", "custom_tool_call_output"].includes(String(item(l)?.type)),
    ),
    context:
      count(
        (l) =>
          item(l)?.type === "message" && ["developer", "system"].includes(String(item(l)?.role)),
      ) +
      count(
        (l, i) =>
          item(l)?.type === "message" &&
          item(l)?.role === "user" &&
          event(lines[i + 1]) !== "user_message",
      ) +
      count((l) => l.type === "compacted"),
    turns: tasks > 0 ? tasks : prompts,
    turnEnds: count((l) => ["task_complete", "turn_aborted"].includes(String(event(l)))),
    lines: lines.length,
  };
}

/** The same counts, read from a mapped session's events. */
export function mappedCounts(events: readonly SessionEvent[]): Omit<RolloutCounts, "lines"> {
  const ofType = (type: string) => events.filter((e) => e.type === type).length;
  const ended = (kind: string) =>
    events.filter((e) => {
      const chunk: StreamChunk | undefined =
        e.type === "assistant/chunk" ? e.data.chunk : undefined;
      return chunk?.type === "block-end" && chunk.block.type === kind;
    }).length;
  return {
    prompts: ofType("user/message") + ofType("steering/message"),
    assistantTexts: ended("text"),
    reasoning: ended("reasoning"),
    toolCalls: ended("tool-call"),
    toolResults: ofType("tool/result"),
    context: ofType("context/message"),
    turns: ofType("turn/start"),
    turnEnds: ofType("turn/end"),
  };
}

/** The `foreign/record` events of a log (a type the schema of this build does not have yet). */
export function foreignRecords(events: readonly SessionEvent[]): ForeignRecord[] {
  return events.filter(
    (e) => (e.type as string) === "foreign/record",
  ) as unknown as ForeignRecord[];
}

/** The agreed shape of a foreign record. */
export interface ForeignRecord {
  readonly type: "foreign/record";
  readonly seq: number;
  readonly time: number;
  readonly data: { readonly source: string; readonly line: number; readonly record: unknown };
}

/**
 * The log without its foreign records, seqs renumbered and every seq an event names
 * (`sourceEventSeqs`, a replace's `start`/`end`, a compaction's shadowed seqs) moved with them.

 */
export function withoutForeignRecords(events: readonly SessionEvent[]): SessionEvent[] {
  const moved = new Map<number, number>();
  for (const e of events) if ((e.type as string) !== "foreign/record") moved.set(e.seq, moved.size);
  const at = (seq: number): number => {
    const to = moved.get(seq);
    if (to === undefined) throw new Error(`expected seq ${seq} to be an event kept, found none`);
    return to;
  };
  return events
    .filter((e) => (e.type as string) !== "foreign/record")
    .map((e) => {
      const copy = structuredClone(e) as SessionEvent & {
        seq: number;
        sourceEventSeqs?: number[];
        surfaceOp?: unknown;
      };
      copy.seq = at(e.seq);
      if (copy.sourceEventSeqs !== undefined) copy.sourceEventSeqs = copy.sourceEventSeqs.map(at);
      const op = copy.surfaceOp as { start: number; end: number } | string | undefined;
      if (typeof op === "object") copy.surfaceOp = { ...op, start: at(op.start), end: at(op.end) };
      if (copy.type === "compact/summary") {
        const data = copy.data as unknown as {
          shadowedRange: { start: number; end: number };
          shadowedSeqs: number[];
        };
        data.shadowedRange = {
          start: at(data.shadowedRange.start),
          end: at(data.shadowedRange.end),
        };
        data.shadowedSeqs = data.shadowedSeqs.map(at);
      }
      return copy;
    });
}

/** The problems `seedline validate` finds in a mapped session, written as a JSONL log. */
export function checkMapped(session: MappedSession, file: string): readonly LogProblem[] {
  const text = formatHeaderLine(session.header) + session.events.map(formatEventLine).join("");
  return checkLogText(text, file).problems;
}

/** The offsets just past each line of `text` (the prefix of its first k lines is `text.slice(0, ends[k - 1])`). */
export function lineEnds(text: string): number[] {
  const ends: number[] = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) ends.push(i + 1);
  if (ends.at(-1) !== text.length) ends.push(text.length);
  return ends;
}
