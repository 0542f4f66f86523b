// Reads recorded session files (a header line, then one event per line) and replay override files.
import { hasCode, InvalidEventError, ReplayError, StorageError, show } from "../errors.js";
import {
  type ReplayEntry,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateReplayEntry,
  validateSessionHeaderLine,
} from "../generated.js";
import { admitEvent, LogState } from "../log/invariants.js";
import { freezeParsed } from "../log/json-value.js";

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
 * The header of a session file: its first non-blank line, as `{id, createdAt, seedLength}` with 0
 * for a missing `seedLength`.
 * @throws StorageError FORMAT_UNSUPPORTED for another format version (checked on the raw line
 *   first); CORRUPT_LOG (with `line`) for a missing header or a line that is not a valid header.
 */
export function parseSessionHeader(text: string, location = TEXT): SessionFileHeader {
  for (const [line, content] of lines(text)) return headerOf(content, line, location);
  throw corrupt(location, undefined, "expected a header line, got an empty file");
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
  for (const [line, content] of lines(text)) {
    if (header === undefined) {
      header = headerOf(content, line, location);
      continue;
    }
    const seq = events.length;
    const raw = parseLine(content, line, location);
    try {
      const event = admitEvent(raw, seq, seq, "parsed");
      state.check(event, seq);
      state.apply(event);
      events.push(event);
    } catch (error) {
      if (error instanceof InvalidEventError) {
        throw corrupt(location, line, error.message, { seq: error.seq, rule: error.rule }, error);
      }
      if (hasCode(error, "FORMAT_UNSUPPORTED")) {
        throw new StorageError(
          "FORMAT_UNSUPPORTED",
          `${location}:${line}: ${error.message}`,
          { ...error.details, location },
          { cause: error },
        );
      }
      throw error;
    }
  }
  if (header === undefined) throw corrupt(location, undefined, "expected a header line, got none");
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
      const e = validateReplayEntry.errors?.[0];
      throw invalidOverride(
        location,
        `/${i}${e?.instancePath ?? ""}`,
        `expected a replay entry, got: ${e?.message ?? "invalid"}`,
      );
    }
  });
  return freezeParsed(value as ReplayEntry[]);
}

/** The non-blank lines of `text` with their 1-based line numbers. */
function* lines(text: string): Generator<[number, string]> {
  let line = 0;
  let start = 0;
  while (start <= text.length) {
    const end = text.indexOf("\n", start);
    const stop = end === -1 ? text.length : end;
    line++;
    const content = text.slice(start, stop);
    if (content.trim() !== "") yield [line, content];
    start = stop + 1;
  }
}

function headerOf(content: string, line: number, location: string): SessionFileHeader {
  const raw = parseLine(content, line, location);
  const version = (raw as { version?: unknown } | null)?.version;
  if (typeof raw === "object" && raw !== null && version !== SESSION_FORMAT_VERSION) {
    if (typeof version === "number" || typeof version === "string") {
      throw new StorageError(
        "FORMAT_UNSUPPORTED",
        `${location}:${line}: expected session format version ${SESSION_FORMAT_VERSION}, got ${show(version)}`,
        { found: version, supported: SESSION_FORMAT_VERSION, location },
      );
    }
  }
  if (!validateSessionHeaderLine(raw)) {
    const e = validateSessionHeaderLine.errors?.[0];
    throw corrupt(
      location,
      line,
      `expected a session header line, got: ${e?.instancePath || "/"} ${e?.message ?? "invalid"}`,
    );
  }
  return { id: raw.id, createdAt: raw.createdAt, seedLength: raw.seedLength ?? 0 };
}

function parseLine(content: string, line: number, location: string): unknown {
  try {
    return JSON.parse(content);
  } catch (error) {
    throw corrupt(location, line, `expected a JSON line, got: ${(error as Error).message}`);
  }
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
