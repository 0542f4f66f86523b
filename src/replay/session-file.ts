// Reads recorded session files (a header line, then one event per line) and replay override files.

import { InvalidEventError, ReplayError, StorageError, show } from "../errors.js";
import {
  type ReplayEntry,
  type SessionEvent,
  type SessionHeader,
  validateReplayEntry,
} from "../generated.js";
import { freezeParsed } from "../log/json-value.js";
import { type LineProblem, readLogText } from "../log/log-text.js";
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
  const { header } = readLogText(
    text,
    location,
    { header: () => "stop", problem: (problem) => fail(problem, location) },
    { skipBlankLines: true },
  );
  return headerFacts(header as SessionHeader);
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
  const events: SessionEvent[] = [];
  const { header } = readLogText(
    text,
    location,
    { event: (event) => events.push(event), problem: (problem) => fail(problem, location) },
    { skipBlankLines: true },
  );
  return { ...headerFacts(header as SessionHeader), events };
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

function headerFacts(header: SessionHeader): SessionFileHeader {
  return { id: header.id, createdAt: header.createdAt, seedLength: header.seedLength ?? 0 };
}

/**
 * Throws the error of the first problem of a session file: the codec's own (a header, an unknown
 * event type), or CORRUPT_LOG naming the line (not for `seed-length`), with the seq and rule of a
 * broken rule.
 */
function fail(problem: LineProblem, location: string): never {
  const { cause } = problem;
  if (cause instanceof InvalidEventError) {
    const context = { seq: cause.seq, rule: cause.rule };
    throw corrupt(location, problem.line, problem.message, context, cause);
  }
  if (cause !== undefined) throw cause;
  throw corrupt(
    location,
    problem.rule === "seed-length" ? undefined : problem.line,
    problem.message,
  );
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
