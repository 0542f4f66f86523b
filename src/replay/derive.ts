// Derives a replay script from recorded events: one entry per step, the model call that step made.
import { ReplayError, show } from "../errors.js";
import type { ReplayEntry, SessionEvent, StreamChunk, TurnEndReason } from "../generated.js";
import { isAdmitted } from "../log/admitted-events.js";
import { copyJsonValue } from "../log/json-value.js";

/** One recorded model call: its step and the chunks it streamed, in log order. */
interface RecordedStep {
  readonly turn: number;
  readonly step: number;
  readonly chunks: StreamChunk[];
}

/**
 * The script of `events`: one entry per step (`step/start` … `step/end`), in log order, from that
 * step's `assistant/chunk` payloads. A step whose last chunk is `finish` gives `chunks`; else the
 * step a turn's `error` reason names gives `throw` (its message and code); else the last step of
 * an `aborted` turn gives `hang`. Events are taken as given: a fork child's caller slices at its
 * `seedLength` first (see `sessionScript`). One pass, each event touched once.
 * @param sessionId names the recorded session in REPLAY_INCOMPLETE ("" when not given).
 * @throws ReplayError REPLAY_INCOMPLETE for the first step, in log order, with no faithful replay
 *   (a turn closed as `interrupted` by crash repair, a stream cut off with nothing to explain it).
 */
export function deriveReplayScript(events: readonly SessionEvent[], sessionId = ""): ReplayEntry[] {
  const entries: ReplayEntry[] = [];
  // The steps of the turn being read; settled when its turn/end tells how the turn ended.
  let steps: RecordedStep[] = [];
  let open: RecordedStep | undefined;
  // Admitted events form a valid log, frozen throughout: each chunk belongs to the open step (the
  // step-order rule) and is taken as it is. Any other array is checked chunk by chunk.
  const admitted = isAdmitted(events);
  for (const event of events) {
    switch (event.type) {
      // First: nearly every event of a log is a chunk.
      case "assistant/chunk":
        if (admitted) {
          (open as RecordedStep).chunks.push(event.data.chunk);
        } else if (open?.turn === event.data.turn && open.step === event.data.step) {
          open.chunks.push(frozenChunk(event.data.chunk));
        }
        break;
      case "step/start":
        open = { turn: event.data.turn, step: event.data.step, chunks: [] };
        steps.push(open);
        break;
      case "step/end":
        open = undefined;
        break;
      case "turn/end":
        settle(steps, event.data.reason, sessionId, entries);
        steps = [];
        open = undefined;
        break;
      default:
        break;
    }
  }
  // A log that ends inside a turn (read as it stands, never repaired): no end reason explains it.
  settle(steps, undefined, sessionId, entries);
  return entries;
}

/**
 * The chunk itself when frozen (every stored or parsed event is), else a frozen copy, so that a
 * script never aliases a caller's mutable objects.
 */
function frozenChunk(chunk: StreamChunk): StreamChunk {
  if (Object.isFrozen(chunk)) return chunk;
  const copied = copyJsonValue(chunk);
  return "value" in copied ? (copied.value as StreamChunk) : chunk;
}

/** Appends the entries of one turn's steps, given how the turn ended (undefined: it did not). */
function settle(
  steps: readonly RecordedStep[],
  reason: TurnEndReason | undefined,
  sessionId: string,
  entries: ReplayEntry[],
): void {
  steps.forEach((s, i) => {
    const chunks = Object.freeze(s.chunks);
    if (chunks.at(-1)?.type === "finish") {
      entries.push(Object.freeze({ kind: "chunks", chunks }));
    } else if (reason?.kind === "error" && reason.step === s.step) {
      entries.push(
        Object.freeze({
          kind: "throw",
          chunks,
          message: reason.message,
          ...(reason.code === undefined ? {} : { code: reason.code }),
        }),
      );
    } else if (reason?.kind === "aborted" && i === steps.length - 1) {
      entries.push(Object.freeze({ kind: "hang", chunks }));
    } else {
      const why = reason === undefined ? "a turn left open" : `a turn that ended ${reason.kind}`;
      throw new ReplayError(
        "REPLAY_INCOMPLETE",
        `expected step ${s.step} of turn ${s.turn} in session ${show(sessionId)} to end ` +
          `with a finish chunk, a recorded error or an abort, got ${why} after ` +
          `${chunks.length} chunk(s) with ${chunks.at(-1)?.type ?? "none"} last`,
        { sessionId, turn: s.turn, step: s.step },
      );
    }
  });
}
