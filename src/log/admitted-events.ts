// Marks arrays of admitted events (validated against the schema and the invariants), so readers can trust them as a whole.
import type { SessionEvent } from "../generated.js";

const marked = new WeakSet<readonly SessionEvent[]>();

/**
 * Freezes the array `events` (not its members) and records that every member was admitted by the
 * invariants, so that a reader given this very array need not check each member again. The
 * members are fresh from a read or the log's own, shared with no caller, and are not frozen:
 * their types say they are read-only. Only the session model calls it, on events it admitted;
 * the array is returned.
 */
export function markAdmitted(events: SessionEvent[]): readonly SessionEvent[] {
  Object.freeze(events);
  marked.add(events);
  return events;
}

/**
 * Whether `events` is an array {@link markAdmitted} made: every member a valid event (and so
 * `surfaceOp` present exactly on the surface-eligible types). Any other
 * array, even one holding the same events, answers false and is checked member by member.
 */
export function isAdmitted(events: readonly SessionEvent[]): boolean {
  return marked.has(events);
}
