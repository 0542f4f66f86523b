// `fork --at-turn N`: the fork boundary that ends turn N (its turn/end seq), found by reading the log page by page.
import { SessionForkError } from "../errors.js";
import type { SessionStore } from "../store/session-store.js";

/**
 * The seq of the `turn/end` of turn `turn` in session `id`, read page by page until it is found.
 * @throws SessionForkError INVALID_BOUNDARY when the session has no such turn or the turn is not
 *   closed; the message names the closed turns. StorageError SESSION_NOT_FOUND as `pages` does.
 */
export async function turnEndBoundary(
  store: SessionStore,
  id: string,
  turn: number,
): Promise<number> {
  let first: number | undefined;
  let last: number | undefined;
  let open: number | undefined;
  let lastSeq = -1;
  for await (const page of store.pages(id)) {
    for (const event of page.events) {
      if (event.type === "turn/start") open = event.data.turn;
      if (event.type !== "turn/end") continue;
      if (event.data.turn === turn) return event.seq;
      open = undefined;
      first ??= event.data.turn;
      last = event.data.turn;
    }
    lastSeq = page.nextSeq - 1;
  }
  const closed =
    first === undefined || last === undefined
      ? "the session has no closed turn"
      : first === last
        ? `the closed turn is ${first}`
        : `the closed turns are ${first} to ${last}`;
  const why = open === turn ? "still open" : "no such turn";
  throw new SessionForkError(
    "INVALID_BOUNDARY",
    `expected --at-turn to name a closed turn (${closed}), got ${turn} (${why})`,
    { boundary: -1, ...(lastSeq >= 0 ? { lastSeq } : {}) },
  );
}
