// One page of `list` in either SQL dialect: the statement a query runs, its parameters, and the page its rows make.
import type { PostgresQueryName, SessionHeader, SqliteQueryName } from "../../generated.js";
import type { ListedSession, ListPage, ListQuery } from "../backend.js";
import { decodeCursor, encodeCursor, type ListKey } from "../list-cursor.js";
import { checkListLimit } from "../list-limit.js";

/** The list statements, one per filter, named alike in both dialects. */
export type ListStatement = Extract<SqliteQueryName & PostgresQueryName, `list${string}`>;

/** Lists start strictly after this key: above every stored session (createdAt is a safe integer). */
const FIRST_PAGE: ListKey = { createdAt: Number.MAX_SAFE_INTEGER + 1, id: "" };

/** A list statement and the values its parameters take (by parameter name). */
export interface ListRun {
  readonly name: ListStatement;
  readonly filter: {
    readonly cwd: string | undefined;
    readonly parentSession: string | undefined;
    readonly afterCreatedAt: number;
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
  const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor);
  const inCwd = query.cwd !== undefined;
  const name: ListStatement =
    query.parentSession === undefined
      ? inCwd
        ? "listSessionsInCwd"
        : "listSessions"
      : inCwd
        ? "listChildSessionsInCwd"
        : "listChildSessions";
  const filter = {
    cwd: query.cwd,
    parentSession: query.parentSession,
    afterCreatedAt: after.createdAt,
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
  limit: number,
  listed: (row: R) => S,
): ListPage & { readonly sessions: readonly S[] } {
  const sessions = rows.slice(0, limit).map(listed);
  const end = sessions.at(-1);
  return rows.length > limit && end !== undefined
    ? { sessions, nextCursor: encodeCursor(end.header) }
    : { sessions };
}

/** A listed session from its header and its last event row's seq and time (none: no events). */
export function listedSession(
  header: SessionHeader,
  lastSeq: number | null | undefined,
  lastTime: number | null | undefined,
): ListedSession {
  return typeof lastSeq === "number" && typeof lastTime === "number"
    ? { header, eventCount: lastSeq + 1, updatedAt: lastTime }
    : { header, eventCount: 0 };
}
