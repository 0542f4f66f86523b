// The opaque cursor of `list` pages: the order, and the sort key and id of the last session listed.
import { StorageError, show } from "../../errors.js";
import type { ListedSession, ListOrder } from "../backend.js";

/** Where a page ended: lists continue strictly after this key (`at` descending, then id descending). */
export interface ListKey {
  /** The sort key: `createdAt` or last activity, by the order. */
  readonly at: number;
  readonly id: string;
}

/** The key a listed session sorts by in `order`. */
export function keyOf(
  session: Pick<ListedSession, "header" | "updatedAt">,
  order: ListOrder,
): ListKey {
  return {
    at: order === "created" ? session.header.createdAt : session.updatedAt,
    id: session.header.id,
  };
}

/**
 * Encodes a page end as an opaque string. A `created` cursor keeps the shape earlier builds
 * issued (`[createdAt, id]`); an `activity` one is tagged, so neither continues the other order.
 */
export function encodeCursor(key: ListKey, order: ListOrder): string {
  const value = order === "created" ? [key.at, key.id] : [key.at, key.id, "activity"];
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

/**
 * Decodes a cursor made by {@link encodeCursor} for `order`.
 * @throws StorageError INVALID_PARAMS when it is not one (or was issued for the other order).
 */
export function decodeCursor(cursor: string, order: ListOrder): ListKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const tagged = order === "created" ? 2 : 3;
    if (
      Array.isArray(value) &&
      value.length === tagged &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === "string" &&
      (order === "created" || value[2] === "activity")
    ) {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // fall through to the error below
  }
  const message = `expected a cursor from a previous list page in ${order} order`;
  throw new StorageError("INVALID_PARAMS", `${message}, got ${show(cursor)}`, {
    errors: [{ instancePath: "/cursor", message }],
  });
}

/**
 * Newest first: `at` descending, then id descending, ids compared as UTF-8 bytes (the order
 * SQLite's BINARY collation gives), so every backend lists in the same order.
 */
export function compareNewestFirst(a: ListKey, b: ListKey): number {
  if (a.at !== b.at) return b.at - a.at;
  return Buffer.compare(Buffer.from(b.id, "utf8"), Buffer.from(a.id, "utf8"));
}

/** Whether `key` comes after the cursor's key in newest-first order. */
export function isAfter(key: ListKey, cursor: ListKey): boolean {
  return compareNewestFirst(cursor, key) < 0;
}

/**
 * One page of already-listed sessions: sorted in `order`, after the cursor, the first `limit`,
 * with a cursor when more follow. For backends that list by scanning (memory, JSONL by activity).
 */
export function pageOf(
  sessions: readonly ListedSession[],
  query: { readonly cursor?: string; readonly limit: number; readonly order?: ListOrder },
): { sessions: ListedSession[]; nextCursor?: string } {
  const order = query.order ?? "created";
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, order);
  // Ids compared as precomputed UTF-8 bytes: a sort of many sessions compares each many times.
  const sorted = sessions
    .map((session) => {
      const key = keyOf(session, order);
      return { session, key, bytes: Buffer.from(key.id, "utf8") };
    })
    .filter(({ key }) => after === undefined || isAfter(key, after))
    .sort((a, b) =>
      a.key.at !== b.key.at ? b.key.at - a.key.at : Buffer.compare(b.bytes, a.bytes),
    );
  const page = sorted.slice(0, query.limit);
  const last = page.at(-1);
  return {
    sessions: page.map(({ session }) => session),
    ...(sorted.length > query.limit && last ? { nextCursor: encodeCursor(last.key, order) } : {}),
  };
}
