// Reads a transcript as JSON lines: each complete line parsed, a bad line refused by its number, a torn last line left for the next read.
import { cutToWidth, oneLine } from "../util/text-width.js";
import type { LineProblem } from "./transcript.js";

/** One parsed line of a transcript. */
export interface TranscriptLine {
  /** Its 1-based number in the file. */
  readonly line: number;
  /** The line as parsed: always a JSON object. */
  readonly record: Record<string, unknown>;
}

/** What {@link readTranscriptLines} found. */
export interface TranscriptLines {
  readonly lines: readonly TranscriptLine[];
  /** The lines that are not a JSON object (`outcome: "refused"`), in order. */
  readonly refused: readonly LineProblem[];
  /** How many UTF-16 units at the start of the text were read (see `MappedTranscript.consumed`). */
  readonly consumed: number;
}

/**
 * The lines of a transcript's text, in order. A line that is not a JSON object — not JSON, a `//`
 * comment (published samples carry them), an array or a number — is refused and named; a blank
 * line is skipped. The last line, when no newline ends it, is taken only when it parses as an
 * object: otherwise the tool is still writing it, and it is left (not counted, not consumed) for
 * the next read. A `\r` before a newline is part of the line end.
 */
export function readTranscriptLines(text: string): TranscriptLines {
  const lines: TranscriptLine[] = [];
  const refused: LineProblem[] = [];
  let consumed = 0;
  let number = 0;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const last = newline < 0;
    const end = last ? text.length : newline;
    const raw =
      text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    number++;
    const record = parseObject(raw);
    if (last && typeof record === "string") break;
    consumed = last ? text.length : newline + 1;
    start = consumed;
    if (record === undefined) continue;
    if (typeof record === "string")
      refused.push({ line: number, outcome: "refused", message: record });
    else lines.push({ line: number, record });
  }
  return { lines, refused, consumed };
}

/** The object a line holds; undefined for a blank line; why it is refused otherwise. */
function parseObject(raw: string): Record<string, unknown> | string | undefined {
  // Nearly every line is an object: try that first, and look closer only when it fails.
  if (raw.charCodeAt(0) === 123) {
    try {
      const value: unknown = JSON.parse(raw);
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        return value as Record<string, unknown>;
      }
    } catch {
      return `expected a JSON object, found ${describe(raw)} (not JSON)`;
    }
  }
  const trimmed = raw.trim();
  if (trimmed === "") return undefined;
  if (trimmed.startsWith("//"))
    return `expected a JSON object, found a // comment: ${describe(trimmed)}`;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return `expected a JSON object, found ${describe(trimmed)} (not JSON)`;
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  return `expected a JSON object, found ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}`;
}

/** The start of a line, quoted, on one line. */
function describe(text: string): string {
  return JSON.stringify(cutToWidth(oneLine(text), 60));
}
