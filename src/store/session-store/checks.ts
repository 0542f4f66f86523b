// What the store checks of what a caller names before anything is read or stored (ids, header text), the header it makes of them, and the errors it refuses with.
import { SeedlineError, SessionForkError, show } from "../../errors.js";
import { SESSION_FORMAT_VERSION, type SessionHeader, validateSessionId } from "../../generated.js";
import { isWellFormed } from "../../util/well-formed.js";
import { invalidParams } from "../errors/storage-errors.js";
import { DEFAULT_MAX_WRITER_LOCKS, type SessionStoreOptions } from "./options.js";
import { UNPACKED_TEXT_BUDGET } from "./text-budget.js";

/** The header of a new session, in the schema's member order; `seedLength` only when above 0. */
export function makeHeader(fields: {
  id: string;
  createdAt: number;
  cwd?: string | undefined;
  parentSession?: string | undefined;
  seedLength?: number | undefined;
}): SessionHeader {
  if (!Number.isSafeInteger(fields.createdAt) || fields.createdAt < 0) {
    throw invalidParams(
      "/meta/createdAt",
      `expected a non-negative safe integer createdAt, got ${show(fields.createdAt)}`,
    );
  }
  return {
    version: SESSION_FORMAT_VERSION,
    id: fields.id,
    createdAt: fields.createdAt,
    ...(fields.cwd === undefined ? {} : { cwd: fields.cwd }),
    ...(fields.parentSession === undefined ? {} : { parentSession: fields.parentSession }),
    ...(fields.seedLength ? { seedLength: fields.seedLength } : {}),
  };
}

export function checkSessionId(id: unknown, instancePath: string): asserts id is string {
  if (!validateSessionId(id) || !isWellFormed(id)) {
    throw invalidParams(
      instancePath,
      `expected a session id (1 to 256 UTF-16 units, no control characters, well-formed Unicode), got ${show(id)}`,
    );
  }
}

/**
 * Header text must be well-formed Unicode without U+0000: PostgreSQL and SQLite store text as
 * UTF-8, where a lone surrogate becomes U+FFFD, so `"s\udbff"` and `"s\ufffd"` would name one
 * session, and PostgreSQL text cannot hold U+0000 at all (no path holds one either). Refused on
 * every backend alike. (Event data keeps both exactly: it is stored as escaped JSON text.)
 */
export function checkText(value: string | undefined, instancePath: string): void {
  if (value !== undefined && (!isWellFormed(value) || value.includes("\u0000"))) {
    throw invalidParams(
      instancePath,
      `expected well-formed Unicode text without U+0000 (no lone UTF-16 surrogate), got ${show(value)}`,
    );
  }
}

export function forkChildTaken(id: string): SessionForkError<"SESSION_ALREADY_EXISTS"> {
  return new SessionForkError(
    "SESSION_ALREADY_EXISTS",
    `expected a new child id, got ${show(id)} which is taken`,
    {
      sessionId: id,
    },
  );
}

export function notLive(id: string): SeedlineError<"SESSION_NOT_LIVE"> {
  return new SeedlineError(
    "SESSION_NOT_LIVE",
    `expected the store's current Session for ${show(id)}, got a stale or detached one`,
    { sessionId: id },
  );
}

/**
 * The limits a store is set up with, its options' or the defaults.
 * @throws StorageError INVALID_PARAMS for a `maxWriterLocks` below 1 or an `unpackedTextBudget`
 *   below 0, or either not an integer.
 */
export function storeLimits(options: SessionStoreOptions): {
  maxWriterLocks: number;
  unpackedTextBudget: number;
} {
  const max = options.maxWriterLocks ?? DEFAULT_MAX_WRITER_LOCKS;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw invalidParams(
      "/maxWriterLocks",
      `expected maxWriterLocks to be an integer >= 1, got ${show(max)}`,
    );
  }
  const budget = options.unpackedTextBudget ?? UNPACKED_TEXT_BUDGET;
  if (!Number.isSafeInteger(budget) || budget < 0) {
    throw invalidParams(
      "/unpackedTextBudget",
      `expected unpackedTextBudget to be an integer >= 0, got ${show(budget)}`,
    );
  }
  return { maxWriterLocks: max, unpackedTextBudget: budget };
}
