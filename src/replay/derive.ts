// Derives a replay script from recorded events: one entry per step, the model call that step made.
import { ReplayError, show } from "../errors.js";
import type { ReplayEntry, SessionEvent, StreamChunk, TurnEndReason } from "../generated.js";
import { isAdmitted } from "../log/admitted-events.js";
import { copyJsonValue } from "../log/json-value.js";

/** One recorded model call: its step and the chunks it streamed, in log order (frozen). */
interface RecordedStep {
  readonly turn: number;
  readonly step: number;
  readonly chunks: readonly StreamChunk[];
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
  return derive(events, sessionId, undefined);
}

/**
 * Every step of `events` with no faithful replay, in log order: the REPLAY_INCOMPLETE errors
 * {@link deriveReplayScript} would throw, the first of them first (empty when it derives a script).
 */
export function replayProblems(
  events: readonly SessionEvent[],
  sessionId = "",
): ReplayError<"REPLAY_INCOMPLETE">[] {
  const refused: ReplayError<"REPLAY_INCOMPLETE">[] = [];
  derive(events, sessionId, refused);
  return refused;
}

/** The script of `events`; a step with no faithful replay is thrown, or kept in `refused` when given. */
function derive(
  events: readonly SessionEvent[],
  sessionId: string,
  refused: ReplayError<"REPLAY_INCOMPLETE">[] | undefined,
): ReplayEntry[] {
  const entries: ReplayEntry[] = [];
  // The closed steps of the turn being read from its first unfinished one on (none while every
  // step so far finished): settled when its turn/end tells how the turn ended.
  let pending: RecordedStep[] = [];
  // The open step, if any, and its chunks so far: gathered in one array reused by every step and
  // copied out, at its exact length, when the step closes (no array grows chunk by chunk).
  let open = false;
  let openTurn = 0;
  let openStep = 0;
  const gathered: StreamChunk[] = [];
  let count = 0;
  // Admitted events form a valid log: each chunk belongs to the open step (the step-order rule)
  // and is taken as it is, shared with the events of the read that returned them (not frozen:
  // freezing a read's chunks would cost more than this pass). Any other array is checked chunk by
  // chunk, and its chunks copied unless frozen.
  const admitted = isAdmitted(events);
  const length = events.length;
  // Indexed, not for…of: V8 (Node 20) does not inline iteration over a frozen array (a log's
  // events are one), so for…of calls the iterator per event, which costs more than the index.
  for (let i = 0; i < length; i++) {
    const event = events[i] as SessionEvent;
    const type = event.type;
    // First, and alone: nearly every event of a log is a chunk.
    if (type === "assistant/chunk") {
      const data = event.data;
      if (admitted) gathered[count++] = data.chunk;
      else if (open && openTurn === data.turn && openStep === data.step) {
        gathered[count++] = frozenChunk(data.chunk);
      }
    } else if (type === "step/start") {
      if (open) closeStep(openTurn, openStep, gathered, count, pending, entries);
      open = true;
      openTurn = event.data.turn;
      openStep = event.data.step;
      count = 0;
    } else if (type === "step/end") {
      if (open) closeStep(openTurn, openStep, gathered, count, pending, entries);
      open = false;
    } else if (type === "turn/end") {
      if (open) closeStep(openTurn, openStep, gathered, count, pending, entries);
      open = false;
      if (pending.length > 0) {
        settle(pending, event.data.reason, sessionId, entries, refused);
        pending = [];
      }
    }
  }
  // A log that ends inside a turn (read as it stands, never repaired): no end reason explains it.
  if (open) closeStep(openTurn, openStep, gathered, count, pending, entries);
  settle(pending, undefined, sessionId, entries, refused);
  return entries;
}

/**
 * Closes a step with the first `count` chunks gathered, copied out and frozen. A step whose last
 * chunk is `finish` gives its entry at once, unless a step before it in its turn waits in
 * `pending` (entries stay in log order); any other waits there for its turn's end.
 */
function closeStep(
  turn: number,
  step: number,
  gathered: readonly StreamChunk[],
  count: number,
  pending: RecordedStep[],
  entries: ReplayEntry[],
): void {
  const chunks = Object.freeze(gathered.slice(0, count));
  // Read while the step's last chunk is recent (likely still cached), not at the turn's end.
  if (pending.length === 0 && chunks[count - 1]?.type === "finish") {
    entries.push(Object.freeze({ kind: "chunks", chunks }));
  } else {
    pending.push({ turn, step, chunks });
  }
}

/**
 * The chunk itself when frozen, else a frozen copy, so that a script never aliases the mutable
 * objects of an array the caller built.
 */
function frozenChunk(chunk: StreamChunk): StreamChunk {
  if (Object.isFrozen(chunk)) return chunk;
  const copied = copyJsonValue(chunk);
  return "value" in copied ? (copied.value as StreamChunk) : chunk;
}

/**
 * Appends the entries of one turn's pending steps, given how the turn ended (undefined: it did
 * not). The last of them is the turn's last step. A step with no faithful replay is thrown, or
 * kept in `refused` when given.
 */
function settle(
  steps: readonly RecordedStep[],
  reason: TurnEndReason | undefined,
  sessionId: string,
  entries: ReplayEntry[],
  refused: ReplayError<"REPLAY_INCOMPLETE">[] | undefined,
): void {
  const last = steps.length - 1;
  for (let i = 0; i <= last; i++) {
    const s = steps[i] as RecordedStep;
    const chunks = s.chunks;
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
    } else if (reason?.kind === "aborted" && i === last) {
      entries.push(Object.freeze({ kind: "hang", chunks }));
    } else {
      const why = reason === undefined ? "a turn left open" : `a turn that ended ${reason.kind}`;
      const error = new ReplayError(
        "REPLAY_INCOMPLETE",
        `expected step ${s.step} of turn ${s.turn} in session ${show(sessionId)} to end ` +
          `with a finish chunk, a recorded error or an abort, got ${why} after ` +
          `${chunks.length} chunk(s) with ${chunks.at(-1)?.type ?? "none"} last`,
        { sessionId, turn: s.turn, step: s.step },
      );
      if (refused === undefined) throw error;
      refused.push(error);
    }
  }
}
