// A session's log in memory: validated on the way in (all-or-nothing per batch), immutable on the way out.

import { isDeepStrictEqual } from "node:util";
import { InvalidEventError, StorageError, show } from "../errors.js";
import type { DerivedMessage, SessionEvent, SessionHeader } from "../generated.js";
import { markAdmitted } from "./admitted-events.js";
import {
  LogState,
  type Ownership,
  RefusedEvent,
  settleEvent,
  TakenBatch,
  type TakenEvent,
  type TurnMarker,
} from "./invariants.js";
import { deriveMessages } from "./surface.js";

/** A batch that passed every check against a given log state, ready to commit. */
export interface PreparedBatch {
  /** The new events, frozen (empty when the whole batch repeated stored events). */
  readonly events: readonly SessionEvent[];
  /** The seq the batch starts at (the log's length when it was prepared). */
  readonly fromSeq: number;
  /** The log's next seq once committed. */
  readonly nextSeq: number;
  /** The log the batch was prepared against. */
  readonly log: SessionLog;
}

/**
 * The ordered events of one session, with the running state the invariants need. Every event is
 * checked where it enters (seed or append); stored events are frozen and never change.
 */
export class SessionLog {
  readonly header: SessionHeader;
  #events: SessionEvent[] = [];
  #state = new LogState();
  #snapshot: readonly SessionEvent[] | undefined;

  private constructor(header: SessionHeader) {
    this.header = Object.freeze({ ...header });
  }

  /**
   * A log holding `seed`, checked as one batch from seq 0: a seed whose seqs do not count up from
   * 0 breaks seq-contiguous (there is nothing stored for it to repeat or conflict with). A
   * {@link TakenBatch} is checked as taken, without copying its events again.
   * @throws InvalidEventError or StorageError FORMAT_UNSUPPORTED, as `append` does.
   */
  static fromSeed(
    header: SessionHeader,
    seed: readonly unknown[] | TakenBatch,
    ownership: Ownership = "copy",
  ): SessionLog {
    const log = new SessionLog(header);
    const taken = TakenBatch.of(seed, ownership).events;
    // A new log has no state to return to when a check fails (it is dropped): each event is
    // checked and applied once, with no trial run to undo.
    const state = log.#state;
    for (let i = 0; i < taken.length; i++) {
      const event = settleEvent(taken[i] as TakenEvent, i, i);
      state.check(event, i);
      state.apply(event);
      log.#events.push(event);
    }
    return log;
  }

  /**
   * A log holding events already checked as a valid log (a prefix of another `SessionLog`): the
   * running state is rebuilt without checking them again.
   */
  static fromValidEvents(header: SessionHeader, events: readonly SessionEvent[]): SessionLog {
    const log = new SessionLog(header);
    for (const event of events) {
      log.#state.apply(event);
      log.#events.push(event);
    }
    return log;
  }

  /** The number of events, which is also the next seq. */
  get length(): number {
    return this.#events.length;
  }

  /** The events, frozen; the same array until the log changes. */
  get events(): readonly SessionEvent[] {
    this.#snapshot ??= markAdmitted(this.#events.slice());
    return this.#snapshot;
  }

  /** The events from `from` (inclusive) to `to` (exclusive, default the end), frozen. */
  range(from: number, to?: number): readonly SessionEvent[] {
    if (from === 0 && (to === undefined || to >= this.#events.length)) return this.events;
    return markAdmitted(this.#events.slice(from, to));
  }

  /** The event at `seq`, or undefined. */
  at(seq: number): SessionEvent | undefined {
    return this.#events[seq];
  }

  /** The last `turn/start` or `turn/end`. */
  get lastTurnMarker(): TurnMarker | undefined {
    return this.#state.lastTurnMarker;
  }

  /** The turn left open at the end of the log, if any. */
  get openTurn(): number | undefined {
    return this.#state.openTurn;
  }

  /** A copy of the running state, for crash repair. */
  stateCopy(): LogState {
    return this.#state.clone();
  }

  /**
   * Checks a batch against the current log without changing it. A batch whose first events
   * repeat stored ones exactly (a retry after a lost acknowledgement) skips those.
   * @throws StorageError SEQ_CONFLICT when the first seq is not the next seq and the batch is not
   *   such a retry; InvalidEventError for a broken rule; StorageError FORMAT_UNSUPPORTED for an
   *   unknown event type. A {@link TakenBatch} is checked as taken, without copying its events
   *   again.
   */
  prepare(batch: readonly unknown[] | TakenBatch, ownership: Ownership = "copy"): PreparedBatch {
    const fromSeq = this.length;
    const taken = TakenBatch.of(batch, ownership).events;
    const skip = this.#repeatedPrefix(taken);
    const state = this.#state;
    const events: SessionEvent[] = [];
    // Try the batch on the live state and undo it: the cost is the batch's, not the log's.
    state.begin();
    try {
      for (let i = skip; i < taken.length; i++) {
        const event = settleEvent(taken[i] as TakenEvent, fromSeq + events.length, i);
        state.check(event, i);
        state.apply(event);
        events.push(event);
      }
    } finally {
      state.rollback();
    }
    return { events, fromSeq, nextSeq: fromSeq + events.length, log: this };
  }

  /**
   * Makes a prepared batch part of the log.
   * @throws StorageError SEQ_CONFLICT when the log changed since the batch was prepared.
   */
  commit(batch: PreparedBatch): void {
    if (batch.log !== this || batch.fromSeq !== this.length) {
      throw new StorageError(
        "SEQ_CONFLICT",
        `expected a batch prepared at seq ${this.length} of session ${show(this.header.id)}, got one prepared at ${batch.fromSeq}`,
        { expectedSeq: this.length },
      );
    }
    if (batch.events.length === 0) return;
    for (const event of batch.events) {
      this.#state.apply(event);
      this.#events.push(event);
    }
    this.#snapshot = undefined;
  }

  /** Checks and commits a batch; returns the next seq. Same errors as `prepare`. */
  append(batch: readonly unknown[] | TakenBatch, ownership: Ownership = "copy"): number {
    const prepared = this.prepare(batch, ownership);
    this.commit(prepared);
    return prepared.nextSeq;
  }

  /**
   * The messages derived from the surface, frozen: of the whole log (maintained incrementally),
   * or of the log as it stood at `throughSeq`.
   */
  deriveMessages(throughSeq?: number): readonly DerivedMessage[] {
    if (throughSeq === undefined || throughSeq >= this.length - 1)
      return this.#state.surface.messages();
    return deriveMessages(markAdmitted(this.#events.slice(0, throughSeq + 1)));
  }

  /** How many leading events of `batch` repeat stored events exactly; throws on a conflicting one. */
  #repeatedPrefix(batch: readonly TakenEvent[]): number {
    const first = batch[0]?.seq;
    if (batch.length === 0 || !Number.isSafeInteger(first) || first === this.length) return 0;
    const conflict = () =>
      new StorageError(
        "SEQ_CONFLICT",
        `expected the batch to start at seq ${this.length} of session ${show(this.header.id)}, got ${first}`,
        { expectedSeq: this.length },
      );
    if ((first as number) > this.length || (first as number) < 0) throw conflict();
    let i = 0;
    for (; i < batch.length && (first as number) + i < this.length; i++) {
      // A refused value is never a stored (valid) event; a taken one is a frozen copy to compare.
      const taken = batch[i];
      if (
        taken instanceof RefusedEvent ||
        !isDeepStrictEqual(taken, this.#events[(first as number) + i])
      ) {
        throw conflict();
      }
    }
    return i;
  }
}

/** Whether an error is one a caller's bad input causes (as opposed to storage trouble). */
export function isEventError(
  error: unknown,
): error is InvalidEventError | StorageError<"FORMAT_UNSUPPORTED"> {
  return (
    error instanceof InvalidEventError ||
    (error instanceof StorageError && error.code === "FORMAT_UNSUPPORTED")
  );
}
