// The page size of `list`: its default and its maximum, as the session/list params schema states them.
import { StorageError, show } from "../../errors.js";
import { RPC_METHOD, RPC_PARAM_BOUNDS } from "../../generated.js";

const BOUNDS = RPC_PARAM_BOUNDS[RPC_METHOD.sessionList].limit;

/** The page size of `list` when none is given. */
export const DEFAULT_LIST_LIMIT: number = BOUNDS.default;

/** The largest page size `list` accepts; larger listings page with the cursor. */
export const MAX_LIST_LIMIT: number = BOUNDS.maximum;

/**
 * Checks a `list` page size, the same in every backend as over the wire.
 * @throws StorageError INVALID_PARAMS when it is not an integer from `minimum` to {@link MAX_LIST_LIMIT}.
 */
export function checkListLimit(limit: number): void {
  if (Number.isInteger(limit) && limit >= BOUNDS.minimum && limit <= MAX_LIST_LIMIT) return;
  const message = `expected a limit from ${BOUNDS.minimum} to ${MAX_LIST_LIMIT}, got ${show(limit)}`;
  throw new StorageError("INVALID_PARAMS", message, {
    errors: [{ instancePath: "/limit", message }],
  });
}
