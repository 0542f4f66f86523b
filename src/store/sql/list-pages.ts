// One page of `list` in either SQL dialect: the statement a query runs, its parameters, and the page its rows make.
import type { PostgresQueryName, SessionHeader, SqliteQueryName } from "../../generated.js";
import type { ListedSession, ListOrder, ListPage, ListQuery } from "../backend.js";
import { decodeCursor, encodeCursor, keyOf, type ListKey } from "../listing/list-cursor.js";
import { checkListLimit } from "../listing/list-limit.js";
import { derivedOf } from "./summary-rows.js";

/** The list statements, one per filter, named alike in both dialects. */
export type ListStatement = Extract<SqliteQueryName & PostgresQueryName, `list${string}`>;

/** Lists start strictly after this key: above every stored session (times are safe integers). */
const FIRST_PAGE: ListKey = { at: Number.MAX_SAFE_INTEGER + 1, id: "" };

/** A list statement and the values its parameters take (by parameter name). */
export interface ListRun {
  readonly name: ListStatement;
  readonly filter: {
    readonly cwd: string | undefined;
    readonly parentSession: string | undefined;
    readonly afterAt: number;
    readonly afterId: string;
    readonly limit: number;
  };
}

/**
 * The list statement `query` runs (by its filters) and its parameters: after the cursor's key (or
 * above every session), one row more than the page, which tells whether another page follows.
 * @throws StorageError INVALID_PARAMS for a limit out of range or a cursor no backend issued.
 */
export function listRun(query: ListQuery): ListRun {
  checkListLimit(query.limit);
  const order = query.order ?? "created";
  const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor, order);
  const inCwd = query.cwd !== undefined;
  const base =
    query.parentSession === undefined
      ? inCwd
        ? "listSessionsInCwd"
        : "listSessions"
      : inCwd
        ? "listChildSessionsInCwd"
        : "listChildSessions";
  const name: ListStatement = order === "created" ? base : `${base}ByActivity`;
  const filter = {
    cwd: query.cwd,
    parentSession: query.parentSession,
    afterAt: after.at,
    afterId: after.id,
    limit: query.limit + 1,
  };
  return { name, filter };
}

/**
 * The page that the rows of {@link listRun}'s statement make: the first `limit` rows, each
 * listed by `listed`, and a cursor after the last one when the extra row came.
 */
export function listPage<R, S extends ListedSession = ListedSession>(
  rows: readonly R[],
  query: { readonly limit: number; readonly order?: ListOrder },
  listed: (row: R) => S,
): ListPage & { readonly sessions: readonly S[] } {
  const order = query.order ?? "created";
  const sessions = rows.slice(0, query.limit).map(listed);
  const end = sessions.at(-1);
  return rows.length > query.limit && end !== undefined
    ? { sessions, nextCursor: encodeCursor(keyOf(end, order), order) }
    : { sessions };
}

/** The summary members of a list row: last activity and the two titles. */
export interface SummaryColumns {
  readonly updatedAt: number | string;
  readonly title: string | null;
  readonly derivedTitle: string | null;
}

/**
 * A search hit's listed session from its header, its last event's seq (none when it has no
 * events) and its last activity (the summary's, which search pages are ordered by): search
 * results carry no titles, they are looked up apart.
 */
export function listedHit(
  header: SessionHeader,
  lastSeq: number | null | undefined,
  updatedAt: number | string,
): ListedSession {
  return listedSession(header, lastSeq, { updatedAt, title: null, derivedTitle: null });
}

/** A listed session from its header, its last event row's seq (none: no events) and its summary. */
export function listedSession(
  header: SessionHeader,
  lastSeq: number | null | undefined,
  summary: SummaryColumns,
): ListedSession {
  const title = summary.title ?? derivedOf(summary.derivedTitle);
  return {
    header,
    eventCount: typeof lastSeq === "number" ? lastSeq + 1 : 0,
    updatedAt: Number(summary.updatedAt),
    ...(title === undefined ? {} : { title }),
  };
}
