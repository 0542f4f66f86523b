// The opaque cursor of `list` pages: the (createdAt, id) of the last session listed.
import { StorageError, show } from "../errors.js";

/** Where a page ended: lists continue strictly after this key in newest-first order. */
export interface ListKey {
  readonly createdAt: number;
  readonly id: string;
}

/** Encodes a page end as an opaque string. */
export function encodeCursor(key: ListKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id]), "utf8").toString("base64url");
}

/**
 * Decodes a cursor made by {@link encodeCursor}.
 * @throws StorageError INVALID_PARAMS when it is not one.
 */
export function decodeCursor(cursor: string): ListKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && Number.isSafeInteger(value[0]) && typeof value[1] === "string") {
      return { createdAt: value[0], id: value[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new StorageError(
    "INVALID_PARAMS",
    `expected a cursor from a previous list page, got ${show(cursor)}`,
    {
      errors: [{ instancePath: "/cursor", message: "expected a cursor from a previous list page" }],
    },
  );
}

/**
 * Newest first: `createdAt` descending, then id descending, ids compared as UTF-8 bytes (the
 * order SQLite's BINARY collation gives), so every backend lists in the same order.
 */
export function compareNewestFirst(a: ListKey, b: ListKey): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return Buffer.compare(Buffer.from(b.id, "utf8"), Buffer.from(a.id, "utf8"));
}

/** Whether `key` comes after the cursor's key in newest-first order. */
export function isAfter(key: ListKey, cursor: ListKey): boolean {
  return compareNewestFirst(cursor, key) < 0;
}
