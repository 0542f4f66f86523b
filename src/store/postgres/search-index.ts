// The PostgreSQL search index: folded searchable text per event in a side table, made by the next search for the rows written since (writes only mark them); derived data, made when missing.
import type { ClientBase } from "pg";
import type { SessionEvent } from "../../generated.js";
import {
  anySearchable,
  foldForSearch,
  MAX_EXCERPTS,
  SEARCHABLE_TYPES_JSON,
  searchableText,
} from "../../log/search-text.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import type { SearchHit, SearchPage, SearchQuery } from "../backend.js";
import { decodeCursor } from "../listing/list-cursor.js";
import { checkListLimit } from "../listing/list-limit.js";
import * as sql from "../sql/core.js";
import { advisoryKey } from "./connection.js";
import type { Queries } from "./statements.js";

/**
 * Search pages go in list order, most recent activity first: they start strictly after this key,
 * above every stored session (as list-pages.ts's first page).
 */
const FIRST_PAGE = { at: Number.MAX_SAFE_INTEGER + 1, id: "" };

/** Event rows read at once while a new index is filled. */
const BACKFILL_PAGE = 5000;

/** Event rows read at once by the index step: a range of seqs of one session. */
const INDEX_PAGE = 4096;

/** The folded searchable texts of events, as insertSearchTexts binds them (none: undefined). */
function textArrays(
  events: readonly SessionEvent[],
): { seq: number[]; text: string[] } | undefined {
  const seq: number[] = [];
  const text: string[] = [];
  for (const event of events) {
    const found = searchableText(event);
    if (found === "") continue;
    seq.push(event.seq);
    text.push(foldForSearch(found));
  }
  return seq.length === 0 ? undefined : { seq, text };
}

/** The events of rows read for their texts, by session (a damaged row carries no text). */
function eventsOfRows(
  rows: readonly { sessionId: unknown; seq: unknown; type: unknown; data: unknown }[],
): Map<string, SessionEvent[]> {
  const bySession = new Map<string, SessionEvent[]>();
  for (const row of rows) {
    let data: unknown;
    try {
      data = JSON.parse(String(row.data));
    } catch {
      continue;
    }
    const id = String(row.sessionId);
    const event = { type: row.type, seq: Number(row.seq), data } as unknown as SessionEvent;
    const list = bySession.get(id) ?? [];
    list.push(event);
    bySession.set(id, list);
  }
  return bySession;
}

/**
 * Makes the index when the target schema has none, filling it from the stored events, in one
 * transaction under the layout's advisory lock (another process doing the same waits, then finds
 * it made). An index made by an earlier build (which wrote the texts with the events) gets the
 * table of rows waiting for their texts, empty.
 */
export async function ensureSearchIndex(
  client: ClientBase,
  queries: Queries,
  schema: string,
): Promise<void> {
  const made = async () =>
    (await queries.first(client, "searchIndexExists", {})) !== undefined &&
    (await queries.first(client, "searchPendingExists", {})) !== undefined;
  if (await made()) return;
  await queries.run(client, "beginWrite", {});
  try {
    await queries.rows(client, "lockLayoutCreation", {
      key: advisoryKey("seedline-layout", schema),
    });
    if (!(await made())) {
      const fill = (await queries.first(client, "searchIndexExists", {})) === undefined;
      await queries.run(client, "createSearchTexts", {});
      await queries.run(client, "createSearchPending", {});
      if (fill) await backfill(client, queries);
    }
    await queries.run(client, "commit", {});
  } catch (error) {
    await queries.run(client, "rollback", {}).catch(() => {
      // The connection is gone; the server rolled back. The error above is what callers hear.
    });
    throw error;
  }
}

async function backfill(client: ClientBase, queries: Queries): Promise<void> {
  let after = { afterSessionId: "", afterSeq: -1 };
  for (;;) {
    const rows = await queries.rows(client, "searchEventRows", { ...after, limit: BACKFILL_PAGE });
    for (const [sessionId, events] of eventsOfRows(rows)) {
      const arrays = textArrays(events);
      if (arrays !== undefined)
        await queries.run(client, "insertSearchTexts", { sessionId, ...arrays });
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < BACKFILL_PAGE) return;
    after = { afterSessionId: String(last.sessionId), afterSeq: Number(last.seq) };
  }
}

/**
 * Leaves events just inserted at `fromSeq` (inside the write's transaction) to the next search,
 * which writes their texts: the session's range takes them in. Nothing is read of the events but
 * their types.
 */
export async function markWritten(
  client: ClientBase,
  queries: Queries,
  sessionId: string,
  fromSeq: number,
  events: readonly SerializedEvent[],
): Promise<void> {
  const last = events.at(-1);
  if (last === undefined || !anySearchable(events)) return;
  await queries.run(client, "markSearchPending", { sessionId, fromSeq, through: last.seq });
}

/** How the index step reaches the server: the backend's own connections, errors and retries. */
export interface IndexRunner {
  /** Runs one statement outside a transaction. */
  once<T>(work: (client: ClientBase) => Promise<T>): Promise<T>;
  /** Runs `work` in a write transaction of its own. */
  inTransaction<T>(work: (client: ClientBase) => Promise<T>): Promise<T>;
}

/**
 * The index step a search runs first: writes the texts of every session's rows waiting for them
 * (search_pending), {@link INDEX_PAGE} seqs a transaction. Each transaction shares the session's
 * row, so its writers wait (at most one page) and the rows read stay what they are until their
 * texts are written; two searches doing the same at once write each text once. With nothing
 * waiting it is one statement.
 */
export async function indexPending(queries: Queries, runner: IndexRunner): Promise<void> {
  const sessions = await runner.once((c) => queries.rows(c, "searchPendingSessions", {}));
  for (const { sessionId } of sessions) {
    const id = String(sessionId);
    for (let done = false; !done; ) {
      done = await runner.inTransaction(async (c) => {
        if ((await queries.first(c, "shareSessionRowForIndex", { sessionId: id })) === undefined) {
          return true; // deleted: its range went with it
        }
        const range = await queries.first(c, "searchPendingOf", { sessionId: id });
        if (range === undefined) return true;
        const fromSeq = Number(range.fromSeq);
        const through = Math.min(Number(range.through), fromSeq + INDEX_PAGE - 1);
        const rows = await queries.rows(c, "searchableRows", {
          sessionId: id,
          fromSeq,
          through,
          types: SEARCHABLE_TYPES_JSON,
        });
        const arrays = textArrays(eventsOfRows(rows).get(id) ?? []);
        if (arrays !== undefined) {
          await queries.run(c, "insertSearchTexts", { sessionId: id, ...arrays });
        }
        await queries.run(c, "advanceSearchPending", { sessionId: id, indexed: through });
        return through >= Number(range.through);
      });
    }
  }
}

/**
 * One page of matching sessions in list order, each with its first matching events, in two
 * statements on one snapshot (the caller's read transaction).
 * @throws StorageError INVALID_PARAMS for a limit out of range or a cursor list did not issue.
 */
export async function searchPage(
  client: ClientBase,
  queries: Queries,
  query: SearchQuery,
): Promise<SearchPage> {
  checkListLimit(query.limit);
  const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor, "activity");
  const terms = [...query.terms];
  const rows = await queries.rows(client, "searchSessions", {
    afterAt: after.at,
    afterId: after.id,
    cwd: query.cwd ?? null,
    terms,
    limit: query.limit + 1,
  });
  const ids = rows.slice(0, query.limit).map((row) => String(row.id));
  const matches = new Map<string, unknown[]>();
  if (ids.length > 0) {
    for (const m of await queries.rows(client, "searchMatches", {
      ids,
      terms,
      limit: MAX_EXCERPTS,
    })) {
      const list = matches.get(String(m.sessionId)) ?? [];
      list.push({ type: m.type, seq: m.seq, time: m.time, data: JSON.parse(String(m.data)) });
      matches.set(String(m.sessionId), list);
    }
  }
  const page = { limit: query.limit, order: "activity" } as const;
  return sql.listPage(rows, page, ({ lastSeq, updatedAt, ...row }): SearchHit => {
    const listed = sql.listedHit(sql.headerFromRow(row), lastSeq, updatedAt);
    return { ...listed, events: matches.get(listed.header.id) ?? [] };
  });
}
