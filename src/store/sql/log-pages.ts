// What loadFrom reads from a SQL store: the row before the asked seq as proof, and at most one page of rows.
import { checkPageLimit } from "../page-limit.js";
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
 * @throws StorageError INVALID_PARAMS when `limit` is given and is not a positive integer.
 */
export function pageRead(fromSeq: number, limit: number | undefined): PageRead {
  checkPageLimit(limit);
  const proof = fromSeq > 0 ? 1 : 0;
  return { first: fromSeq - proof, take: limit === undefined ? undefined : limit + proof };
}

/**
 * The answer of `loadFrom(id, fromSeq)` from the rows {@link pageRead} named, framed; undefined
 * when the row before `fromSeq` is missing or damaged (the session was deleted and created again,
 * shorter): then the log is read again from 0, with `from` 0.
 */
export function suffixOf(
  framed: FramedLog,
  fromSeq: number,
): (FramedLog & { readonly from: number }) | undefined {
  if (fromSeq === 0) return { events: framed.events, tornTail: framed.tornTail, from: 0 };
  if (framed.events.length === 0) return undefined;
  return { events: framed.events.slice(1), tornTail: framed.tornTail, from: fromSeq };
}
