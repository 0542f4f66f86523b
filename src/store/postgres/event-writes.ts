// The statements of the PostgreSQL backend's writes that insert a session's rows: the session, its events in chunks, and what a failed insert means.
import type { PoolClient } from "pg";
import { StorageError, show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../errors/storage-errors.js";
import * as sql from "../sql/core.js";
import { FOREIGN_KEY_VIOLATION, serverError, UNIQUE_VIOLATION } from "./pg-errors.js";
import { eventArrays } from "./rows.js";
import { markWritten } from "./search-index.js";
import {
  POSTGRES_TABLES,
  type PostgresQueryParams,
  type PostgresQueryRows,
  paramsFrom,
  type Queries,
} from "./statements.js";
import type { WriterLocks } from "./writer-locks.js";

/** Rows per insertEvents statement: bounds the size of one bind message for a large import. */
export const INSERT_CHUNK = 1000;

/**
 * Locks the row of a stored session for this transaction and returns the seq its next event
 * takes. The seq is read in a statement of its own after the lock is granted, so that it counts
 * every append committed before.
 * @throws StorageError SESSION_NOT_FOUND.
 */
export async function lockForWrite(queries: Queries, c: PoolClient, id: string): Promise<number> {
  if ((await queries.first(c, "lockSessionRow", { sessionId: id })) === undefined) {
    throw sessionNotFound(id);
  }
  const last = await queries.first(c, "appendPoint", { sessionId: id });
  return sql.lengthAfter(last?.lastSeq);
}

/** Inserts a session's row and its summary. @throws StorageError SESSION_ALREADY_EXISTS. */
export async function insertSession(
  queries: Queries,
  c: PoolClient,
  header: SessionHeader,
): Promise<void> {
  try {
    await queries.run(c, "insertSession", paramsFrom("insertSession", header));
  } catch (error) {
    if (serverError(error)?.code === UNIQUE_VIOLATION) throw sessionTaken(header.id);
    throw error;
  }
  await queries.run(c, "insertSummary", { sessionId: header.id, updatedAt: header.createdAt });
  await queries.run(c, "clearTitle", { sessionId: header.id });
}

/**
 * What an insert of the events from seq `from` failed with: SESSION_NOT_FOUND for a session
 * row gone, SEQ_CONFLICT when another writer stored one of the seqs first, else the error.
 */
export function insertFailure(error: unknown, id: string, from: number, count: number): unknown {
  const failure = serverError(error);
  if (failure?.code === FOREIGN_KEY_VIOLATION) return sessionNotFound(id);
  if (failure?.code === UNIQUE_VIOLATION && failure.table === POSTGRES_TABLES.events.name) {
    return new StorageError(
      "SEQ_CONFLICT",
      `expected seqs ${from}…${from + count - 1} of session ${show(id)} to be free, got one another writer stored first`,
      { expectedSeq: from },
      { cause: error },
    );
  }
  return error;
}

/**
 * Inserts events from seq `fromSeq`, {@link INSERT_CHUNK} to a statement, marks them for the next
 * search's index step and moves the session's summary, all in the transaction of `c`.
 */
export async function insertEvents(
  queries: Queries,
  c: PoolClient,
  id: string,
  fromSeq: number,
  events: readonly SerializedEvent[],
): Promise<void> {
  sql.checkBatchSeqs(id, fromSeq, events);
  for (let start = 0; start < events.length; start += INSERT_CHUNK) {
    const chunk = events.slice(start, start + INSERT_CHUNK);
    try {
      await queries.run(c, "insertEvents", eventArrays(id, chunk));
    } catch (error) {
      throw insertFailure(error, id, fromSeq + start, chunk.length);
    }
    // After the events: a conflict above is reported as the events' own.
    await markWritten(c, queries, id, fromSeq + start, chunk);
  }
  const last = events.at(-1);
  if (last === undefined) return;
  // The summary moves in the same transaction as the events it summarises.
  await queries.run(c, "touchSummary", {
    sessionId: id,
    lastSeq: last.seq,
    updatedAt: last.time,
    derivedTitle: sql.batchTitle(events),
  });
}

/**
 * Runs appendEvents for the chunk starting at `from`. When its check of the append point fails,
 * the point is read again after the session row lock (the statement's snapshot may predate the
 * lock, see appendEvents): a conflict when it differs, else the statement runs once more (its
 * snapshot now counts every append committed before the lock).
 */
export async function appendChunk(
  queries: Queries,
  locks: WriterLocks,
  c: PoolClient,
  id: string,
  from: number,
  count: number,
  params: PostgresQueryParams<"appendEvents">,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let row: PostgresQueryRows["appendEvents"] | undefined;
    try {
      row = await queries.first(c, "appendEvents", params);
    } catch (error) {
      throw insertFailure(error, id, from, count);
    }
    if (row?.found !== true) throw sessionNotFound(id);
    if (row.held !== true) locks.gone(id);
    if (row.appendable === true) return;
    const next =
      attempt === 1
        ? sql.lengthAfter((await queries.first(c, "appendPoint", { sessionId: id }))?.lastSeq)
        : sql.lengthAfter(row.lastSeq);
    if (attempt > 1 || next !== from) throw seqConflict(id, next, from);
  }
}
