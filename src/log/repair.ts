// Crash repair: the events that close a turn left open when its writer died.
import type { SessionEvent } from "../generated.js";
import { LogState } from "./invariants.js";
import type { EventOf } from "./types.js";

/** The text of the synthetic result given to a tool call that never returned. */
export const INTERRUPTED_RESULT_TEXT =
  "interrupted: the session stopped before this tool call returned; no result was recorded";

/**
 * The closers of an interrupted turn, in order: a synthetic interrupted `tool/result` for each
 * unanswered `tool/call` of the open step, `step/end` if a step is open, then
 * `turn/end {reason: interrupted}`. They continue the seq and copy `time` from the last event.
 * A balanced log gets none. `events` must be a valid log.
 */
export function interruptedTurnClosers(events: readonly SessionEvent[]): SessionEvent[] {
  const state = new LogState();
  for (const event of events) state.apply(event);
  return closersFor(state, events.at(-1)?.time ?? 0);
}

/** The closers for a log whose running state is `state` (see {@link interruptedTurnClosers}). */
export function closersFor(state: LogState, time: number): SessionEvent[] {
  const turn = state.openTurn;
  if (turn === undefined) return [];
  let seq = state.length;
  const closers: SessionEvent[] = [];
  const step = state.openStep;
  if (step !== undefined) {
    for (const call of state.openCalls.calls()) {
      const result: EventOf<"tool/result"> = {
        type: "tool/result",
        seq: seq++,
        time,
        data: {
          turn,
          step,
          callId: call.data.callId,
          content: [{ type: "text", text: INTERRUPTED_RESULT_TEXT }],
          isError: true,
          error: { name: "InterruptedError", code: "interrupted" },
        },
        sourceEventSeqs: [call.seq],
        surfaceOp: "append",
      };
      closers.push(result);
    }
    closers.push({ type: "step/end", seq: seq++, time, data: { turn, step } });
  }
  closers.push({
    type: "turn/end",
    seq: seq++,
    time,
    data: { turn, reason: { kind: "interrupted" } },
  });
  return closers;
}
