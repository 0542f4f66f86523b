// Reads recorded session files (a header line, then one event per line) and replay override files.

import { InvalidEventError, ReplayError, StorageError, show } from "../errors.js";
import {
  type ReplayEntry,
  type SessionEvent,
  type SessionHeader,
  validateReplayEntry,
} from "../generated.js";
import { admitEvent, LogState } from "../log/invariants.js";
import { freezeParsed } from "../log/json-value.js";
import {
  checkEventType,
  type LogLine,
  missingHeaderLine,
  parseEventLine,
  parseHeaderLine,
  textLines,
} from "../log/jsonl-codec.js";
import { schemaProblem } from "../util/schema-problem.js";

/** What replay needs of a header: the session, its creation time, and its seed boundary. */
export type SessionFileHeader = Pick<SessionHeader, "id" | "createdAt"> & {
  /** How many leading events were inherited (0 when the header has none). */
  readonly seedLength: number;
};

/** A recorded session: its header facts and its whole log, inherited events included. */
export interface SessionFile extends SessionFileHeader {
  /** The events after the header, frozen; read from a file, they were checked as a log. */
  readonly events: readonly SessionEvent[];
}

/** The default `location` in error details when the caller names no file. */
const TEXT = "session log text";

/**
 * The header of a session file: its first non-blank line, parsed as every reader of the JSONL
 * format parses it, as `{id, createdAt, seedLength}` with 0 for a missing `seedLength`.
 * @throws StorageError FORMAT_UNSUPPORTED for another format version (checked on the raw line
 *   first); CORRUPT_LOG (with `line`) for a missing header or a line that is not a valid header.
 */
export function parseSessionHeader(text: string, location = TEXT): SessionFileHeader {
  for (const line of nonBlankLines(text)) return headerOf(line, location);
  throw missingHeaderLine(location);
}

/**
 * The events of a session file: every non-blank line after the header, each checked as the
 * event at the next seq (schema, lossless JSON, the log invariants), as a log read from disk is.
 * @throws StorageError CORRUPT_LOG naming the 1-based line of a line that does not parse or
 *   breaks a rule (and for a header `seedLength` longer than the log); FORMAT_UNSUPPORTED for
 *   another format version or an unknown event type.
 */
export function parseSessionLog(text: string, location = TEXT): SessionEvent[] {
  return [...parseSessionFile(text, location).events];
}

/** The header and events of a session file; see `parseSessionHeader` and `parseSessionLog`. */
export function parseSessionFile(text: string, location = TEXT): SessionFile {
  let header: SessionFileHeader | undefined;
  const state = new LogState();
  const events: SessionEvent[] = [];
  for (const line of nonBlankLines(text)) {
    if (header === undefined) {
      header = headerOf(line, location);
      continue;
    }
    const seq = events.length;
    const raw = parseEventLine(line.text);
    if (raw === undefined) {
      const message = `expected event seq ${seq} as a JSON object, got ${show(line.text)}`;
      throw corrupt(location, line.number, message);
    }
    try {
      // A seq out of place is reported first, as admitEvent and the store's reader do.
      if (!Number.isSafeInteger(raw.seq) || raw.seq === seq) {
        checkEventType(raw, line.number, location);
      }
      const event = admitEvent(raw, seq, seq, "parsed");
      state.check(event, seq);
      state.apply(event);
      events.push(event);
    } catch (error) {
      if (error instanceof InvalidEventError) {
        const context = { seq: error.seq, rule: error.rule };
        throw corrupt(location, line.number, error.message, context, error);
      }
      throw error;
    }
  }
  if (header === undefined) throw missingHeaderLine(location);
  if (header.seedLength > events.length) {
    throw corrupt(
      location,
      undefined,
      `expected at least seedLength ${header.seedLength} events, got ${events.length}`,
    );
  }
  return { ...header, events };
}

/**
 * The entries of a replay override file: a JSON array of replay entries, frozen.
 * @throws ReplayError INVALID_PARAMS (with the JSON Pointer of the first bad entry) when the text
 *   is not such an array.
 */
export function parseReplayOverride(text: string, location = "replay override"): ReplayEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidOverride(location, "", `expected JSON, got ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) {
    throw invalidOverride(location, "", `expected an array of replay entries, got ${show(value)}`);
  }
  value.forEach((entry, i) => {
    if (!validateReplayEntry(entry)) {
      const found = schemaProblem(validateReplayEntry.errors);
      throw invalidOverride(
        location,
        `/${i}${found.instancePath}`,
        `expected a replay entry, got: ${found.message}`,
      );
    }
  });
  return freezeParsed(value as ReplayEntry[]);
}

/** The lines of `text` that hold more than white space, with their 1-based line numbers. */
function* nonBlankLines(text: string): Generator<LogLine> {
  for (const line of textLines(text)) if (line.text.trim() !== "") yield line;
}

function headerOf(line: LogLine, location: string): SessionFileHeader {
  const header = parseHeaderLine(line.text, location, line.number);
  return { id: header.id, createdAt: header.createdAt, seedLength: header.seedLength ?? 0 };
}

function corrupt(
  location: string,
  line: number | undefined,
  message: string,
  extra: { seq?: number; rule?: string } = {},
  cause?: unknown,
): StorageError<"CORRUPT_LOG"> {
  return new StorageError(
    "CORRUPT_LOG",
    `${location}${line === undefined ? "" : `:${line}`}: ${message}`,
    { location, ...(line === undefined ? {} : { line }), ...extra },
    cause === undefined ? undefined : { cause },
  );
}

function invalidOverride(
  location: string,
  instancePath: string,
  message: string,
): ReplayError<"INVALID_PARAMS"> {
  return new ReplayError("INVALID_PARAMS", `${location}: ${message}`, {
    errors: [{ instancePath, message }],
  });
}
