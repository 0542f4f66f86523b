// The storage errors every backend and the store raise alike: a stale seq, an absent session, a taken id.
import { StorageError, show } from "../../errors.js";

/** A batch that does not start where the stored log ends. */
export function seqConflict(
  id: string,
  expected: number,
  got: number,
): StorageError<"SEQ_CONFLICT"> {
  return new StorageError(
    "SEQ_CONFLICT",
    `expected the batch to start at seq ${expected} of session ${show(id)}, got ${got}`,
    { expectedSeq: expected },
  );
}

/** A parameter out of its bounds, named by its JSON pointer in the request's params. */
export function invalidParams(
  instancePath: string,
  message: string,
): StorageError<"INVALID_PARAMS"> {
  return new StorageError("INVALID_PARAMS", message, { errors: [{ instancePath, message }] });
}

/** No stored session with this id. */
export function sessionNotFound(id: string): StorageError<"SESSION_NOT_FOUND"> {
  return new StorageError("SESSION_NOT_FOUND", `expected a session ${show(id)}, found none`, {
    sessionId: id,
  });
}

/** A new session asked for an id that is taken. */
export function sessionTaken(id: string): StorageError<"SESSION_ALREADY_EXISTS"> {
  return new StorageError(
    "SESSION_ALREADY_EXISTS",
    `expected a new session id, got ${show(id)} which is taken`,
    { sessionId: id },
  );
}
