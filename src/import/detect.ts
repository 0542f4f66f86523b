// Recognises whose transcript a text is from its first records: Claude Code's lines or Codex's rollout items.
import type { TranscriptFormat } from "./transcript.js";

/** Record types only a Codex rollout writes (each line `{timestamp, type, payload}`). */
const CODEX_TYPES = new Set([
  "session_meta",
  "response_item",
  "event_msg",
  "turn_context",
  "compacted",
]);

/** Record types only a Claude Code transcript writes. */
const CLAUDE_CODE_TYPES = new Set([
  "user",
  "assistant",
  "system",
  "summary",
  "progress",
  "file-history-snapshot",
  "queue-operation",
  "last-prompt",
  "custom-title",
  "attachment",
]);

/** How many lines {@link detectTranscriptFormat} reads at most before it gives up. */
const LINES_READ = 20;

/**
 * The tool that wrote a transcript, told by its first JSON object lines (blank, comment and
 * unparsable lines passed over): a Codex rollout wraps every record as `{type, payload}` with
 * `type` one of its record types; a Claude Code line has one of Claude Code's types, or a
 * `sessionId`, `uuid` or `leafUuid`. Undefined when the first lines tell neither.
 */
export function detectTranscriptFormat(text: string): TranscriptFormat | undefined {
  let start = 0;
  for (let read = 0; read < LINES_READ && start < text.length; read++) {
    const newline = text.indexOf("\n", start);
    const line = text.slice(start, newline < 0 ? text.length : newline).trim();
    start = newline < 0 ? text.length : newline + 1;
    if (!line.startsWith("{")) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    const format = formatOf(record as Record<string, unknown>);
    if (format !== undefined) return format;
  }
  return undefined;
}

function formatOf(record: Record<string, unknown>): TranscriptFormat | undefined {
  const type = record.type;
  if (typeof type === "string" && CODEX_TYPES.has(type) && typeof record.payload === "object") {
    return "codex";
  }
  if (typeof type === "string" && CLAUDE_CODE_TYPES.has(type)) return "claude-code";
  if (["sessionId", "uuid", "leafUuid"].some((key) => typeof record[key] === "string")) {
    return "claude-code";
  }
  return undefined;
}
