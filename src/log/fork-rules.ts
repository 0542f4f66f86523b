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
 * source without a boundary forks to an empty child (`-1`, "copy nothing"). `closedAt` is the seq
 * of the `turn/end` that closes the marker's turn when it is stored: an OPEN_TURN error names it as
 * the nearest valid boundary after the asked one (and the seq before the turn's start as the one
 * before).
 * @throws SessionForkError INVALID_BOUNDARY (not a non-negative safe integer, or no event at that
 *   seq), then OPEN_TURN (the prefix ends inside a turn).
 */
export function resolveForkBoundary(
  length: number,
  boundary: unknown,
  markerAt: (boundary: number) => TurnMarker | undefined,
  closedAt?: number,
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
  if (marker?.type === "turn/start") throw openTurnError(boundary, marker, closedAt);
  return boundary;
}

/**
 * The OPEN_TURN error for `boundary` inside the turn `start` opens: it names the nearest valid
 * boundaries, the seq before the turn's start and the turn's `turn/end` (`closedAt`), when they exist.
 */
function openTurnError(
  boundary: number,
  start: TurnMarker,
  closedAt: number | undefined,
): SessionForkError<"OPEN_TURN"> {
  const before = start.seq > 0 ? start.seq - 1 : undefined;
  const after = closedAt !== undefined && closedAt > boundary ? closedAt : undefined;
  const valid = [
    ...(before === undefined ? [] : [`seq ${before} (before turn ${start.turn})`]),
    ...(after === undefined ? [] : [`seq ${after} (end of turn ${start.turn})`]),
  ];
  const expected =
    valid.length === 0
      ? "expected a boundary outside a turn (the log has none)"
      : `expected a boundary outside a turn: ${valid.join(" or ")}`;
  const open = after === undefined ? `open since seq ${start.seq}` : `from seq ${start.seq}`;
  return new SessionForkError(
    "OPEN_TURN",
    `${expected}, got ${boundary} inside turn ${start.turn} (${open})`,
    {
      boundary,
      turn: start.turn,
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
    },
  );
}

/**
 * Events read one at a time by seq (0 to `length - 1`): an array, or a log that parses only the
 * events asked for (the memory backend's, which keeps JSON text).
 */
export interface EventsBySeq {
  readonly length: number;
  at(seq: number): SessionEvent | undefined;
}

/** The last `turn/start` or `turn/end` at or before `boundary`, scanning back from it. */
export function lastTurnMarkerAt(events: EventsBySeq, boundary: number): TurnMarker | undefined {
  for (let seq = Math.min(boundary, events.length - 1); seq >= 0; seq--) {
    const event = events.at(seq) as SessionEvent;
    if (event.type === "turn/start" || event.type === "turn/end") {
      return { seq, type: event.type, turn: event.data.turn };
    }
  }
  return undefined;
}

/** The seq of the first `turn/end` after `boundary`, or undefined when none follows it. */
export function nextTurnEndAfter(events: EventsBySeq, boundary: number): number | undefined {
  for (let seq = boundary + 1; seq < events.length; seq++) {
    if ((events.at(seq) as SessionEvent).type === "turn/end") return seq;
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
