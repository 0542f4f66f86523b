// Marks arrays of admitted events (validated and frozen throughout), so readers can trust them as a whole.
import type { SessionEvent } from "../generated.js";

const marked = new WeakSet<readonly SessionEvent[]>();

/**
 * Freezes `events` and records that every member was admitted by the invariants (validated, and
 * frozen throughout), so that a reader given this very array need not check each member again.
 * Only the session model calls it, on events it admitted; the array is returned.
 */
export function markAdmitted(events: SessionEvent[]): readonly SessionEvent[] {
  Object.freeze(events);
  marked.add(events);
  return events;
}

/**
 * Whether `events` is an array {@link markAdmitted} made: every member a valid event that is
 * frozen throughout (and so `surfaceOp` present exactly on the surface-eligible types). Any other
 * array, even one holding the same events, answers false and is checked member by member.
 */
export function isAdmitted(events: readonly SessionEvent[]): boolean {
  return marked.has(events);
}
