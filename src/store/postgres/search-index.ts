// The PostgreSQL search index: folded searchable text per event in a side table, kept in the write transactions; derived data, made when missing.
import type { ClientBase } from "pg";
import type { SessionEvent } from "../../generated.js";
import { foldForSearch, MAX_EXCERPTS, searchableText } from "../../log/search-text.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { serializedSearchText } from "../../log/serialized-event.js";
import type { SearchHit, SearchPage, SearchQuery } from "../backend.js";
import { decodeCursor } from "../list-cursor.js";
import { checkListLimit } from "../list-limit.js";
import * as sql from "../sql/core.js";
import { advisoryKey } from "./connection.js";
import type { Queries } from "./statements.js";

/** The relations of the index: not part of the versioned layout, so the layout policy leaves them be. */
export function isSearchRelation(name: string): boolean {
  return name === "search_texts" || name === "search_texts_pkey";
}

/** Lists start strictly after this key: above every stored session (as list-pages.ts's first page). */
/** Search pages go newest created first (the key before every session's). */
const FIRST_PAGE = { at: Number.MAX_SAFE_INTEGER + 1, id: "" };

/** Event rows read at once while a new index is filled. */
const BACKFILL_PAGE = 5000;

/** The folded searchable texts of events, as insertSearchTexts binds them (none: undefined). */
function textArrays(
  events: readonly (SessionEvent | SerializedEvent)[],
  textOf: (event: SessionEvent | SerializedEvent) => string,
): { seq: number[]; text: string[] } | undefined {
  const seq: number[] = [];
  const text: string[] = [];
  for (const event of events) {
    const found = textOf(event);
    if (found === "") continue;
    seq.push(event.seq);
    text.push(foldForSearch(found));
  }
  return seq.length === 0 ? undefined : { seq, text };
}

/**
 * Makes the index when the target schema has none, filling it from the stored events, in one
 * transaction under the layout's advisory lock (another process doing the same waits, then finds
 * it made).
 */
export async function ensureSearchIndex(
  client: ClientBase,
  queries: Queries,
  schema: string,
): Promise<void> {
  if ((await queries.first(client, "searchIndexExists", {})) !== undefined) return;
  await queries.run(client, "beginWrite", {});
  try {
    await queries.rows(client, "lockLayoutCreation", {
      key: advisoryKey("seedline-layout", schema),
    });
    if ((await queries.first(client, "searchIndexExists", {})) === undefined) {
      await queries.run(client, "createSearchTexts", {});
      await backfill(client, queries);
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
    const bySession = new Map<string, SessionEvent[]>();
    for (const row of rows) {
      let data: unknown;
      try {
        data = JSON.parse(String(row.data));
      } catch {
        continue; // a damaged row carries no text
      }
      const event = { type: row.type, seq: row.seq, data } as unknown as SessionEvent;
      const list = bySession.get(String(row.sessionId)) ?? [];
      list.push(event);
      bySession.set(String(row.sessionId), list);
    }
    for (const [sessionId, events] of bySession) {
      const arrays = textArrays(events, searchableText);
      if (arrays !== undefined)
        await queries.run(client, "insertSearchTexts", { sessionId, ...arrays });
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < BACKFILL_PAGE) return;
    after = { afterSessionId: String(last.sessionId), afterSeq: Number(last.seq) };
  }
}

/**
 * The folded searchable texts of serialized events, as appendEvents binds them (`textSeq`, `text`;
 * empty arrays when none has text).
 */
export function serializedTextArrays(events: readonly SerializedEvent[]): {
  textSeq: number[];
  text: string[];
} {
  const arrays = textArrays(events, (event) => serializedSearchText(event as SerializedEvent));
  return { textSeq: arrays?.seq ?? [], text: arrays?.text ?? [] };
}

/** Indexes events just inserted (inside the write's transaction). */
export async function insertSearchTexts(
  client: ClientBase,
  queries: Queries,
  sessionId: string,
  events: readonly SerializedEvent[],
): Promise<void> {
  const arrays = textArrays(events, (event) => serializedSearchText(event as SerializedEvent));
  if (arrays !== undefined)
    await queries.run(client, "insertSearchTexts", { sessionId, ...arrays });
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
  const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor, "created");
  const terms = [...query.terms];
  const rows = await queries.rows(client, "searchSessions", {
    afterCreatedAt: after.at,
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
  return sql.listPage(rows, { limit: query.limit }, ({ lastSeq, lastTime, ...row }): SearchHit => {
    const listed = sql.listedHit(sql.headerFromRow(row), lastSeq, lastTime);
    return { ...listed, events: matches.get(listed.header.id) ?? [] };
  });
}
