// Pages of stored events as the store hands them out: read options, checks, and stored logs judged as damage.
import { InvalidEventError, StorageError, show } from "../../errors.js";
import { type SessionEvent, type SessionHeader, validateSessionHeader } from "../../generated.js";
import { markAdmitted } from "../../log/admitted-events.js";
import { checkFormatVersion } from "../../log/format-version.js";
import { admitEvent } from "../../log/invariants.js";
import type { SessionLog } from "../../log/session-log.js";
import { invalidParams } from "../errors/storage-errors.js";
import { checkPageBytes } from "./page-limit.js";

/** The page size of `read` when none is given. */
export const DEFAULT_READ_LIMIT = 1000;

/** The largest page `read` returns; longer reads go page by page (`pages`). */
export const MAX_READ_LIMIT = 10_000;

/**
 * The most stored bytes of events a page holds unless asked otherwise: a page stops before the
 * event that would take it past this (always holding its first event), so that reading a log of
 * big events (large tool outputs, file reads) holds one page of them, never thousands.
 */
export const DEFAULT_PAGE_BYTES = 16 * 1024 * 1024;

/** Which events `read` returns. */
export interface ReadOptions {
  /** The seq of the first event; 0 when absent. */
  readonly fromSeq?: number;
  /** The most events to return: {@link DEFAULT_READ_LIMIT} when absent, at most {@link MAX_READ_LIMIT}. */
  readonly limit?: number;
  /**
   * The most stored bytes of events to return (each event counts what the backend stores of it:
   * at least the JSON of its `data`, at most its JSON line): {@link DEFAULT_PAGE_BYTES} when
   * absent. A page always holds its first event, whatever its size.
   */
  readonly maxBytes?: number;
}

/** One page of a session's stored events. */
export interface EventPage {
  readonly header: SessionHeader;
  /**
   * The events from `fromSeq` on, checked against the schema, at most `limit`: fresh objects of
   * this read (not frozen; their types are read-only).
   */
  readonly events: readonly SessionEvent[];
  /** The seq after the last event returned: where the next page starts. */
  readonly nextSeq: number;
  /**
   * Whether the page reaches the end of the stored log (a `fromSeq` at or past the end too); a
   * page cut short by `limit` or by `maxBytes` is not done.
   */
  readonly done: boolean;
  /** Whether `fromSeq` was past the end of the stored log (then `events` is empty). */
  readonly pastEnd: boolean;
  /** Whether a torn tail follows the intact events (only told on the page that reaches the end). */
  readonly tornTail: boolean;
}

/**
 * Checks `read`'s options, the same in the SDK as over the wire.
 * @throws StorageError INVALID_PARAMS naming `/fromSeq`, `/limit` or `/maxBytes`.
 */
export function checkReadOptions(options: ReadOptions): {
  fromSeq: number;
  limit: number;
  maxBytes: number;
} {
  const fromSeq = options.fromSeq ?? 0;
  checkSeq(fromSeq, "/fromSeq");
  const limit = options.limit ?? DEFAULT_READ_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_READ_LIMIT) {
    throw invalidParams(
      "/limit",
      `expected a limit from 1 to ${MAX_READ_LIMIT}, got ${show(limit)}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_PAGE_BYTES;
  checkPageBytes(maxBytes);
  return { fromSeq, limit, maxBytes };
}

/**
 * Checks a seq given as a parameter.
 * @throws StorageError INVALID_PARAMS naming `instancePath` when it is not an integer >= 0.
 */
export function checkSeq(seq: number, instancePath: string): void {
  if (Number.isSafeInteger(seq) && seq >= 0) return;
  throw invalidParams(instancePath, `expected a seq (an integer >= 0), got ${show(seq)}`);
}

/**
 * Checks the header of a stored log: its format version, then its shape.
 * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG naming `location`.
 */
export function checkStoredHeader(
  header: unknown,
  location: string,
): asserts header is SessionHeader {
  checkFormatVersion(header, location);
  if (!validateSessionHeader(header)) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a valid header in ${location}, got ${show(header)}`,
      { location },
    );
  }
}

/**
 * Stored events from seq `from`, checked against the schema (and kept as parsed); with `log`
 * (which must end at `from`), also checked against the invariants and applied to it.
 * @throws StorageError CORRUPT_LOG (a broken rule: damage), FORMAT_UNSUPPORTED.
 */
export function admitStored(
  raw: unknown[],
  from: number,
  location: string,
  log?: SessionLog,
): readonly SessionEvent[] {
  return asCorruption(location, () => {
    if (log !== undefined) return log.admit(raw, "parsed");
    const events = raw as SessionEvent[];
    for (let i = 0; i < raw.length; i++) events[i] = admitEvent(raw[i], from + i, i, "parsed");
    return markAdmitted(events);
  });
}

/**
 * Checks that a stored log holds at least its header's `seedLength` events.
 * @throws StorageError CORRUPT_LOG naming `location`.
 */
export function checkSeedLength(header: SessionHeader, length: number, location: string): void {
  if ((header.seedLength ?? 0) <= length) return;
  throw new StorageError(
    "CORRUPT_LOG",
    `expected at least seedLength ${header.seedLength} events in ${location}, got ${length}`,
    { location },
  );
}

/** Runs `read`, turning a broken rule in stored events into CORRUPT_LOG. */
export function asCorruption<T>(location: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof InvalidEventError) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected a valid stored log in ${location}: ${error.message}`,
        { location, seq: error.seq, rule: error.rule },
        { cause: error },
      );
    }
    throw error;
  }
}
