// The fork boundary rules: which prefixes of a log a fork may copy.

import { SessionForkError, show } from "../errors.js";
import type { SessionEvent } from "../generated.js";
import type { TurnMarker } from "./invariants.js";

/** What the boundary checks need to know of a source: its length and its turn markers up to the boundary. */
export interface ForkPoint {
  /** The number of events of the source. */
  readonly length: number;
  /** The last `turn/start` or `turn/end` at or before the boundary. */
  readonly marker: TurnMarker | undefined;
}

/**
 * Resolves and checks a fork boundary (inclusive). `boundary` defaults to the last event; an empty
 * source without a boundary forks to an empty child (`-1`, "copy nothing").
 * @throws SessionForkError INVALID_BOUNDARY (not a non-negative safe integer, or no event at that
 *   seq), then OPEN_TURN (the prefix ends inside a turn).
 */
export function resolveForkBoundary(
  length: number,
  boundary: unknown,
  markerAt: (boundary: number) => TurnMarker | undefined,
): number {
  if (boundary === undefined) {
    if (length === 0) return -1;
    boundary = length - 1;
  }
  if (
    typeof boundary !== "number" ||
    !Number.isSafeInteger(boundary) ||
    boundary < 0 ||
    boundary >= length
  ) {
    const lastSeq = length > 0 ? { lastSeq: length - 1 } : {};
    throw new SessionForkError(
      "INVALID_BOUNDARY",
      `expected a boundary naming an event (0 to ${length - 1}), got ${show(boundary)}`,
      {
        boundary: typeof boundary === "number" && Number.isFinite(boundary) ? boundary : -1,
        ...lastSeq,
      },
    );
  }
  const marker = markerAt(boundary);
  if (marker?.type === "turn/start") {
    throw new SessionForkError(
      "OPEN_TURN",
      `expected the prefix through seq ${boundary} to end outside a turn, got turn ${marker.turn} open (started at seq ${marker.seq})`,
      { boundary, turn: marker.turn },
    );
  }
  return boundary;
}

/** The last `turn/start` or `turn/end` at or before `boundary`, scanning back from it. */
export function lastTurnMarkerAt(
  events: readonly SessionEvent[],
  boundary: number,
): TurnMarker | undefined {
  for (let seq = Math.min(boundary, events.length - 1); seq >= 0; seq--) {
    const event = events[seq] as SessionEvent;
    if (event.type === "turn/start" || event.type === "turn/end") {
      return { seq, type: event.type, turn: event.data.turn };
    }
  }
  return undefined;
}

/**
 * The seq of the last `turn/end`, or undefined when no turn has ended. A caller that wants a
 * subagent's clipping fork (only completed turns) passes this as the boundary.
 */
export function lastCompletedTurnBoundary(events: readonly SessionEvent[]): number | undefined {
  for (let seq = events.length - 1; seq >= 0; seq--) {
    if ((events[seq] as SessionEvent).type === "turn/end") return seq;
  }
  return undefined;
}
