// Auto mode's fork points: for each recorded call, the end of the last turn before it — where a divergence there forks.
import type { SessionEvent } from "../generated.js";

/** Turn boundaries of a replayed session, by recorded call. */
export interface ForkPoints {
  /**
   * Per recorded call (in log order, as `recordedCalls` lists them): the seq of the last
   * `turn/end` before its `step/start`, or -1 when no turn ended before it.
   */
  readonly beforeCall: readonly number[];
  /** The seq of the log's last `turn/end`, or -1 when none: where a call past the recording forks. */
  readonly atEnd: number;
}

/** The fork points of `events` (a whole log, inherited events included). */
export function forkPoints(events: readonly SessionEvent[]): ForkPoints {
  const beforeCall: number[] = [];
  let lastEnd = -1;
  for (const event of events) {
    if (event.type === "turn/end") lastEnd = event.seq;
    else if (event.type === "step/start") beforeCall.push(lastEnd);
  }
  return { beforeCall, atEnd: lastEnd };
}
