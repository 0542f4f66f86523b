// Helpers for the Claude Code import tests: the real transcripts beside the repository, what they hold counted straight from their JSON lines, and the same counted from a mapping.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { checkLogText, type LogProblem } from "../../src/cli/validate-log.js";
import type { SessionEvent } from "../../src/generated.js";
import type { MappedSession, MappedTranscript } from "../../src/import/transcript.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";

/** Real Claude Code transcripts other projects committed, read where they are. */
export const CLAUDE_CODE_FIXTURES = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "shared",
  "fixtures-real",
  "claude-code",
);

export const HAVE_CLAUDE_CODE_FIXTURES = existsSync(CLAUDE_CODE_FIXTURES);

/** One real transcript: its path (absolute), its name under the fixtures folder, its text. */
export interface Transcript {
  readonly path: string;
  readonly name: string;
  readonly text: string;
}

/** Every `*.jsonl` below the fixtures folder, sorted by name. */
export function claudeCodeTranscripts(): Transcript[] {
  const found: Transcript[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".jsonl")) {
        found.push({
          path,
          name: relative(CLAUDE_CODE_FIXTURES, path),
          text: readFileSync(path, "utf8"),
        });
      }
    }
  };
  walk(CLAUDE_CODE_FIXTURES);
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** What a transcript holds, or what a mapping of it holds: the counts the tests compare. */
export interface Counts {
  /** Prompt lines: user lines that are no tool result, meta line, compaction summary or interruption. */
  readonly userMessages: number;
  /** Assistant lines (each one `assistant/message`). */
  readonly assistantMessages: number;
  readonly toolCalls: number;
  readonly toolResults: number;
  /** Thinking blocks (reasoning). */
  readonly reasoning: number;
  /** Sidechain conversations: subagents (by `agentId`) and inline sidechains (by their first line). */
  readonly children: number;
  /** Later lines continuing a conversation from a line another line already continued (rewinds). */
  readonly branches: number;
}

type Json = Record<string, unknown>;

/** The JSON object lines of a transcript (comment lines and torn lines left out). */
function records(text: string): Json[] {
  const out: Json[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as Json);
    } catch {
      // a torn last line
    }
  }
  return out;
}

function blocks(record: Json): Json[] {
  const content = (record.message as Json | undefined)?.content;
  return Array.isArray(content) ? (content as Json[]) : [];
}

function textOf(record: Json): string {
  const content = (record.message as Json | undefined)?.content;
  if (typeof content === "string") return content;
  return blocks(record)
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

function isToolResultLine(record: Json): boolean {
  return record.type === "user" && blocks(record).some((b) => b.type === "tool_result");
}

/** Counts straight from the transcript's JSON, without the mapping's code. */
export function rawCounts(text: string): Counts {
  const lines = records(text);
  let userMessages = 0;
  let assistantMessages = 0;
  let toolCalls = 0;
  let toolResults = 0;
  let reasoning = 0;
  const families = new Set<string>();
  const continued = new Map<string, number>();
  for (const r of lines) {
    if (r.type === "user" && typeof r.message === "object") {
      const results = blocks(r).filter((b) => b.type === "tool_result").length;
      toolResults += results;
      const interruption = textOf(r).startsWith("[Request interrupted by user");
      if (results === 0 && r.isMeta !== true && r.isCompactSummary !== true && !interruption) {
        userMessages++;
      }
    }
    if (r.type === "assistant" && typeof r.message === "object") {
      assistantMessages++;
      toolCalls += blocks(r).filter((b) => b.type === "tool_use").length;
      reasoning += blocks(r).filter(
        (b) => b.type === "thinking" || b.type === "redacted_thinking",
      ).length;
    }
    if (r.isSidechain === true) {
      if (typeof r.agentId === "string") families.add(`agent ${r.agentId}`);
      else if (r.parentUuid === null) families.add(`root ${String(r.uuid)}`);
    }
    const parent = typeof r.parentUuid === "string" ? r.parentUuid : r.logicalParentUuid;
    if (
      typeof r.uuid === "string" &&
      typeof parent === "string" &&
      r.type !== "progress" &&
      !isToolResultLine(r)
    ) {
      continued.set(parent, (continued.get(parent) ?? 0) + 1);
    }
  }
  const uuids = new Set(lines.map((r) => r.uuid).filter((u) => typeof u === "string"));
  let branches = 0;
  for (const [parent, n] of continued) if (uuids.has(parent)) branches += n - 1;
  return {
    userMessages,
    assistantMessages,
    toolCalls,
    toolResults,
    reasoning,
    children: families.size,
    branches,
  };
}

/** The same counts from a mapping: each session's own events (after its seed), and its sessions. */
export function mappedCounts(mapped: MappedTranscript): Counts {
  const own = mapped.sessions.flatMap((s) => s.events.slice(s.header.seedLength ?? 0));
  const of = (type: SessionEvent["type"]) => own.filter((e) => e.type === type);
  return {
    userMessages: of("user/message").length,
    assistantMessages: of("assistant/message").length,
    toolCalls: of("tool/call").length,
    toolResults: of("tool/result").length,
    reasoning: of("assistant/message").flatMap((e) =>
      e.type === "assistant/message" ? e.data.content.filter((b) => b.type === "reasoning") : [],
    ).length,
    children: mapped.sessions.filter(
      (s) => s.header.parentSession !== undefined && s.header.seedLength === undefined,
    ).length,
    branches: mapped.sessions.filter((s) => s.header.seedLength !== undefined).length,
  };
}

/** The problems `seedline validate` finds in a mapped session, as its log text. */
export function checkMapped(session: MappedSession): readonly LogProblem[] {
  return checkLogText(logText(session), session.header.id).problems;
}

/** A mapped session as the JSONL text of a seedline log. */
export function logText(session: MappedSession): string {
  return formatHeaderLine(session.header) + session.events.map(formatEventLine).join("");
}

/** The offsets just past each newline of a text. */
export function lineEnds(text: string): number[] {
  const ends: number[] = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) ends.push(i + 1);
  return ends;
}
