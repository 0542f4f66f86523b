// The JSONL text codec: the header line, event lines, their version checks, and a text split into numbered lines.

import { StorageError, show } from "../errors.js";
import {
  EVENT_TYPES,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateSessionHeaderLine,
} from "../generated.js";
import { problemText, schemaProblem } from "../util/schema-problem.js";
import { checkFormatVersion } from "./format-version.js";

/**
 * The header line of a log: `{"type":"session","version":…,"id":…,"createdAt":…}` plus `cwd`,
 * `parentSession` and `seedLength` when present, in that order, ending in `\n`.
 */
export function formatHeaderLine(header: SessionHeader): string {
  return `${JSON.stringify({ type: "session", ...canonicalHeader(header) })}\n`;
}

/** One event line: the event as `JSON.stringify` writes it (its canonical form), ending in `\n`. */
export function formatEventLine(event: SessionEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/**
 * Parses a header line into a `SessionHeader` with its members in canonical order.
 * @param line the header's 1-based line number, for errors (1 unless leading blank lines are
 *   passed over, as replay fixtures allow).
 * @throws StorageError FORMAT_UNSUPPORTED (a `version` other than {@link SESSION_FORMAT_VERSION},
 *   checked first, on the raw object); CORRUPT_LOG (not a JSON object, or not a valid header line;
 *   location and line).
 */
export function parseHeaderLine(text: string, location: string, line = 1): SessionHeader {
  const raw = parseEventLine(text);
  // A header without `version` is damaged rather than foreign: it falls to CORRUPT_LOG below.
  if (raw !== undefined && "version" in raw) checkFormatVersion(raw, location);
  if (raw === undefined || !validateSessionHeaderLine(raw)) {
    const why =
      raw === undefined
        ? "not a JSON object"
        : problemText(schemaProblem(validateSessionHeaderLine.errors));
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a session header on line ${line} of ${location}, got ${show(text)} (${why})`,
      { location, line },
    );
  }
  return canonicalHeader(raw);
}

/** The members of a header in canonical order (version, id, createdAt, cwd, parentSession, seedLength), absent ones left out. */
function canonicalHeader(header: SessionHeader): SessionHeader {
  return {
    version: header.version,
    id: header.id,
    createdAt: header.createdAt,
    ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
    ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
    ...(header.seedLength === undefined ? {} : { seedLength: header.seedLength }),
  };
}

/**
 * The error of a log without a header line (an empty text or file).
 * @returns StorageError CORRUPT_LOG (location, line 1), to be thrown by the caller.
 */
export function missingHeaderLine(location: string): StorageError<"CORRUPT_LOG"> {
  return new StorageError(
    "CORRUPT_LOG",
    `expected a header line on line 1 of ${location}, found none`,
    { location, line: 1 },
  );
}

/**
 * A line parsed as a plain JSON object (an event line, or a header line before its checks), or
 * undefined when it is not JSON or is an array, null or a scalar. The object is fresh from
 * `JSON.parse`: a member named `__proto__` is an ordinary own member (as `copyJsonValue` keeps
 * it), and its nesting is held to `MAX_JSON_DEPTH` when it is admitted as an event
 * (`admitEvent(…, "parsed")` freezes it in place and refuses deeper values as json-value).
 */
export function parseEventLine(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The error of a parsed event line whose `type` is a string outside the vocabulary of this format
 * version (a log of a newer build, not a damaged one), or undefined for a known type. A missing or
 * non-string type is left to the schema.
 * @returns StorageError FORMAT_UNSUPPORTED (found, supported, location), for the caller to throw
 *   or report.
 */
export function unknownEventType(
  event: Record<string, unknown>,
  line: number,
  location: string,
): StorageError<"FORMAT_UNSUPPORTED"> | undefined {
  if (typeof event.type !== "string" || KNOWN_TYPES.has(event.type)) return undefined;
  return new StorageError(
    "FORMAT_UNSUPPORTED",
    `expected an event type of session format version ${SESSION_FORMAT_VERSION}, got ${show(event.type)} on line ${line} of ${location}`,
    { found: event.type, supported: SESSION_FORMAT_VERSION, location },
  );
}

/** One line of a log, as a line source (a string or a file read in chunks) hands it over. */
export interface LogLine {
  /** The line's text without its `\n`. */
  readonly text: string;
  /** The 1-based line number; the header is line 1. */
  readonly number: number;
  /** The byte offset of the line's first byte. */
  readonly start: number;
  /** The byte offset just past the line's `\n` (past its last byte, for a fragment). */
  readonly end: number;
  /** False for a final fragment without `\n`: a torn tail, never parsed. */
  readonly terminated: boolean;
}

/**
 * The lines of a text, with line numbers and byte offsets (UTF-8), without building an array of
 * them. A final piece without `\n` comes as an unterminated fragment; an empty one is not a line.
 */
export function* textLines(text: string): Generator<LogLine> {
  let from = 0;
  let byte = 0;
  let number = 1;
  while (from < text.length) {
    const newline = text.indexOf("\n", from);
    const terminated = newline !== -1;
    const lineText = text.slice(from, terminated ? newline : text.length);
    const bytes = Buffer.byteLength(lineText, "utf8");
    const end = byte + bytes + (terminated ? 1 : 0);
    yield { text: lineText, number, start: byte, end, terminated };
    if (!terminated) return;
    from = newline + 1;
    byte = end;
    number++;
  }
}
