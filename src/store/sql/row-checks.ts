// Checks of what SQL statements are given or found, alike in both dialects: batch seqs, a copied prefix, a stored turn marker.
import { StorageError } from "../../errors.js";
import type { TurnMarker } from "../../log/invariants.js";
import { seqConflict } from "../errors/storage-errors.js";

/**
 * Checks that a batch for session `id` holds seqs `fromSeq`, `fromSeq + 1`… in order.
 * @throws StorageError SEQ_CONFLICT naming the first seq out of place.
 */
export function checkBatchSeqs(
  id: string,
  fromSeq: number,
  events: readonly { readonly seq: number }[],
): void {
  for (let i = 0; i < events.length; i++) {
    const seq = (events[i] as { readonly seq: number }).seq;
    if (seq !== fromSeq + i) throw seqConflict(id, fromSeq + i, seq);
  }
}

/**
 * Checks that a fork copied the whole prefix 0…`boundary` of its source (`location`: the source's
 * event rows): a hole in it is damage that the fork must not inherit.
 * @throws StorageError CORRUPT_LOG naming `location`.
 */
export function checkCopiedPrefix(copied: number, boundary: number, location: string): void {
  if (copied === boundary + 1) return;
  throw new StorageError(
    "CORRUPT_LOG",
    `expected events 0…${boundary} in ${location} to fork, found ${copied} rows`,
    { location },
  );
}

/**
 * The turn marker a lastTurnMarker row names, with the `turn` read from its data (undefined when
 * the data is not JSON), so that a damaged row is reported rather than failing the query;
 * `found` says what the row holds instead.
 * @throws StorageError CORRUPT_LOG naming `location` and the seq when it has no turn number.
 */
export function turnMarkerOf(
  row: { readonly seq: number; readonly type: string },
  turn: unknown,
  location: string,
  found: string,
): TurnMarker {
  if (
    typeof turn !== "number" ||
    !Number.isSafeInteger(turn) ||
    (row.type !== "turn/start" && row.type !== "turn/end")
  ) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a turn marker with a turn number at seq ${row.seq} of ${location}, found ${found}`,
      { location, seq: row.seq },
    );
  }
  return { seq: row.seq, type: row.type, turn };
}

/**
 * `forkPoint`'s `closedAt` from the `nextTurnEnd` row after the boundary: only a turn/end among the
 * `length` intact events counts (a torn trailing row is not one).
 */
export function closedAtOf(
  seq: number | string | undefined,
  length: number,
): { closedAt?: number } {
  if (seq === undefined) return {};
  const closedAt = Number(seq);
  return closedAt < length ? { closedAt } : {};
}
