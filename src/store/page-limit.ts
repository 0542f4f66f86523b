// The page size of `loadFrom`: every backend refuses the same bad values the same way.
import { show } from "../errors.js";
import { invalidParams } from "./storage-errors.js";

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
