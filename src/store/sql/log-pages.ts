// What loadFrom reads from a SQL store: the row before the asked seq as proof, and at most one page of rows.
import { checkPageBytes, checkPageLimit, type PageBytes } from "../reads/page-limit.js";
import type { FramedLog } from "./event-frames.js";

/** The rows a `loadFrom` read asks for: from seq `first` on, at most `take` of them (undefined: all). */
export interface PageRead {
  readonly first: number;
  readonly take: number | undefined;
}

/**
 * The rows to read for `loadFrom(id, fromSeq, limit)`: from `fromSeq - 1` on when `fromSeq` > 0
 * (that row, intact, proves that the stored log still extends the prefix the caller knows), and
 * at most `limit` events after it.
 * @throws StorageError INVALID_PARAMS when `limit` or `maxBytes` is given and is not a positive
 *   integer.
 */
export function pageRead(fromSeq: number, limit: number | undefined, maxBytes?: number): PageRead {
  checkPageLimit(limit);
  checkPageBytes(maxBytes);
  const proof = fromSeq > 0 ? 1 : 0;
  return { first: fromSeq - proof, take: limit === undefined ? undefined : limit + proof };
}

/**
 * The answer of `loadFrom(id, fromSeq)` from the rows {@link pageRead} named, framed; undefined
 * when the row before `fromSeq` is missing or damaged (the session was deleted and created again,
 * shorter): then the log is read again from 0, with `from` 0.
 */
export function suffixOf(
  framed: FramedLog & { readonly cut?: true },
  fromSeq: number,
): (FramedLog & { readonly from: number; readonly cut?: true }) | undefined {
  const cut = framed.cut === true ? { cut: true as const } : {};
  if (fromSeq === 0) return { events: framed.events, tornTail: framed.tornTail, from: 0, ...cut };
  if (framed.events.length === 0) return undefined;
  return { events: framed.events.slice(1), tornTail: framed.tornTail, from: fromSeq, ...cut };
}

/**
 * The rows of a page read as they come, up to `budget`: the first `free` rows (the proof row)
 * pass unmeasured, each other row is offered at `size(row)`, and reading stops (the statement is
 * ended) before the first row the budget refuses, so the rows after it are never held.
 */
export function* rowsWithin<R>(
  rows: Iterable<R>,
  budget: PageBytes,
  free: number,
  size: (row: R) => number,
): Generator<R, void, undefined> {
  let at = 0;
  for (const row of rows) {
    if (at++ >= free && !budget.takes(size(row))) return;
    yield row;
  }
}

/** The stored size of a row of values: the UTF-8 bytes of its text values. */
export function valueRowBytes(row: readonly unknown[]): number {
  let bytes = 0;
  for (const value of row) if (typeof value === "string") bytes += Buffer.byteLength(value, "utf8");
  return bytes;
}
