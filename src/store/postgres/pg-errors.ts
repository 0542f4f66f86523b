// What a failure of the PostgreSQL server or connection means for the store: lost, retryable, or a domain error.
import { DatabaseError } from "pg";
import { StorageError, StorageUnavailableError, show } from "../../errors.js";
import { storageRefused } from "../errors/storage-refusal.js";

/** Node socket errors that mean the server cannot be reached or the connection broke. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a connection the server ended or refused: class 08, shutdown / terminate
 * (57P01-57P03), idle session timeout (57P05) and idle-in-transaction timeout (25P03).
 */
const LOST_STATES = /^(08|57P0[1-35]|25P03)/;

/**
 * Messages of the driver's own errors for a connection that ended or could not be made, or whose
 * answer did not come within the query timeout (the connection is then dropped: its state is
 * unknown).
 */
const DRIVER_MESSAGES =
  /Connection terminated|not queryable|Client was closed|timeout exceeded when trying to connect|Connection refused|Query read timeout|^timeout expired$/i;

/** SQLSTATE query_canceled: statement_timeout (the only cancel this backend sends). */
const QUERY_CANCELED = "57014";

/** Whether `error` says the connection to the server is gone (or never came up). */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof StorageError) return false;
  if (error instanceof DatabaseError) return LOST_STATES.test(error.code ?? "");
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isConnectionLoss);
  return DRIVER_MESSAGES.test(error.message);
}

/**
 * Whether the server answered a statement with an error: the statement failed, so a statement run
 * as its own transaction (no BEGIN) committed nothing, whatever became of the connection after.
 */
export function isServerAnswer(error: unknown): boolean {
  return error instanceof DatabaseError;
}

/** Whether the server cancelled a statement that ran past statement_timeout (the connection is fine). */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof DatabaseError && error.code === QUERY_CANCELED;
}

/** Whether a transaction failed only because it ran into another one: run it again. */
export function isRetryable(error: unknown): boolean {
  return error instanceof DatabaseError && (error.code === "40001" || error.code === "40P01");
}

/** The SQLSTATE and table of a server error, when it is one. */
export function serverError(
  error: unknown,
): { code: string; table: string | undefined } | undefined {
  if (!(error instanceof DatabaseError) || error.code === undefined) return undefined;
  return { code: error.code, table: error.table };
}

/** SQLSTATE unique_violation. */
export const UNIQUE_VIOLATION = "23505";
/** SQLSTATE foreign_key_violation. */
export const FOREIGN_KEY_VIOLATION = "23503";

/**
 * The error a caller hears for a connection that broke during `what`, or could not be made.
 * @param committing whether the commit was in flight (a COMMIT, or a statement run as its own
 *   transaction that the server did not answer).
 */
export function connectionLost(
  error: unknown,
  location: string,
  what: string,
  committing: boolean,
): StorageUnavailableError {
  const reason = error instanceof Error ? error.message : show(error);
  const outcome = committing
    ? "the connection broke while the commit was in flight, so the outcome is unknown: reload the session, or retry the same append (an identical retry is acknowledged)"
    : "the server rolled the transaction back, so nothing of it was stored";
  return new StorageUnavailableError(
    "STORAGE_UNAVAILABLE",
    `expected a working connection to the PostgreSQL store ${location} to ${what}, got: ${reason}; ${outcome}`,
    { location, commitUnknown: committing },
    { cause: error },
  );
}

/** The error a caller hears for a statement the server cancelled after statement_timeout. */
export function timedOut(
  error: unknown,
  location: string,
  what: string,
  boundMs: number,
): StorageUnavailableError {
  const reason = error instanceof Error ? error.message : show(error);
  return new StorageUnavailableError(
    "STORAGE_UNAVAILABLE",
    `expected the PostgreSQL store ${location} to ${what} within statement_timeout (${boundMs} ms), got: ${reason}; the server rolled the transaction back, so nothing of it was stored`,
    { location, commitUnknown: false },
    { cause: error },
  );
}

/** The error a caller hears when no connection to the store can be made. */
export function unreachable(error: unknown, location: string): StorageUnavailableError {
  const reason = error instanceof Error ? error.message || String(error) : show(error);
  return new StorageUnavailableError(
    "STORAGE_UNAVAILABLE",
    `expected to reach the PostgreSQL store ${location}, got: ${reason}`,
    { location, commitUnknown: false },
    { cause: error },
  );
}

/**
 * A server error that reports a storage condition — SQLSTATE 53100 disk_full (no-space), 42501
 * insufficient_privilege (no-permission), 25006 read_only_sql_transaction (read-only) — as
 * STORAGE_REFUSED at `location`; anything else as it is. The server rolled the transaction back.
 */
export function refusedByServer(error: unknown, location: string): unknown {
  if (!(error instanceof DatabaseError)) return error;
  return storageRefused(error, location) ?? error;
}
