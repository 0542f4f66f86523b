// The page size of `loadFrom`, in events and in bytes: every backend refuses the same bad values the same way.
import { show } from "../../errors.js";
import { invalidParams } from "../errors/storage-errors.js";

/**
 * Checks a `loadFrom` page limit.
 * @throws StorageError INVALID_PARAMS when `limit` is given and is not a positive integer.
 */
export function checkPageLimit(limit: number | undefined): void {
  if (limit === undefined || (Number.isSafeInteger(limit) && limit > 0)) return;
  throw invalidParams(
    "/limit",
    `expected a page limit that is a positive integer, got ${show(limit)}`,
  );
}

/**
 * Checks a `loadFrom` byte budget.
 * @throws StorageError INVALID_PARAMS when `maxBytes` is given and is not a positive integer.
 */
export function checkPageBytes(maxBytes: number | undefined): void {
  if (maxBytes === undefined || (Number.isSafeInteger(maxBytes) && maxBytes > 0)) return;
  throw invalidParams(
    "/maxBytes",
    `expected a page byte budget that is a positive integer, got ${show(maxBytes)}`,
  );
}

/**
 * A page's byte budget as it is read: each event is offered with its stored size, and the page
 * takes it while its events add up to at most `maxBytes` (no bound when undefined). The first
 * event is always taken, so that a page moves on whatever the size of one event.
 */
export class PageBytes {
  readonly #maxBytes: number | undefined;
  #used = 0;
  #count = 0;
  /** Whether an event was refused: the page stopped before it (`cut`). */
  cut = false;

  constructor(maxBytes: number | undefined) {
    this.#maxBytes = maxBytes;
  }

  /** Whether the page takes an event of `size` bytes; once one is refused, none is taken. */
  takes(size: number): boolean {
    if (this.cut) return false;
    if (this.#maxBytes !== undefined && this.#count > 0 && this.#used + size > this.#maxBytes) {
      this.cut = true;
      return false;
    }
    this.#used += size;
    this.#count++;
    return true;
  }
}
