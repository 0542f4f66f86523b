// A session's running state, not its events: validated on the way in (all-or-nothing per batch).

import { isDeepStrictEqual } from "node:util";
import { InvalidEventError, type InvalidEventProblem, StorageError, show } from "../errors.js";
import type { DerivedMessage, SessionEvent, SessionHeader } from "../generated.js";
import { markAdmitted } from "./admitted-events.js";
import { invalidEvent, withProblems } from "./event-errors.js";
import {
  LogState,
  type Ownership,
  RefusedEvent,
  settleEvent,
  TakenBatch,
  type TakenEvent,
  type TurnMarker,
  takeEvent,
} from "./invariants.js";
import { SerializedEvent } from "./serialized-event.js";
import { isSurfaceEvent, packOlderMessages } from "./surface.js";

/** A batch that passed every check against a given log state, ready to commit. */
export interface PreparedBatch {
  /**
   * The new events as the running state reads them (empty when the whole batch repeated stored
   * events): see {@link SerializedEvent.view}.
   */
  readonly events: readonly SessionEvent[];
  /** The same events serialized, as the backend writes them. */
  readonly serialized: readonly SerializedEvent[];
  /** The seq the batch starts at (the log's length when it was prepared). */
  readonly fromSeq: number;
  /** The log's next seq once committed. */
  readonly nextSeq: number;
  /** The log the batch was prepared against. */
  readonly log: SessionLog;
}

/** Stored events a retried batch repeats: `count` of them from seq `from`, to compare against. */
export interface RepeatedSpan {
  readonly from: number;
  readonly count: number;
}

/**
 * What a writer needs of one session: its header, its length, the running state the invariants
 * check against (open turn and step, unanswered tool calls) and the surface, from which the
 * model-facing messages are derived incrementally. The events themselves stay in the store: a
 * log of any length costs the memory of its surface, not of its chunks.
 */
export class SessionLog {
  readonly header: SessionHeader;
  #state = new LogState();
  #lastTime: number | undefined;

  constructor(header: SessionHeader) {
    this.header = Object.freeze({ ...header });
  }

  /**
   * A log holding `seed`, checked as one batch from seq 0 (see {@link admit}): a seed whose seqs do
   * not count up from 0 breaks seq-contiguous.
   * @throws InvalidEventError or StorageError FORMAT_UNSUPPORTED, as `prepare` does.
   */
  static fromSeed(
    header: SessionHeader,
    seed: readonly unknown[] | TakenBatch,
    ownership: Ownership = "copy",
  ): SessionLog {
    const log = new SessionLog(header);
    log.admit(seed, ownership);
    return log;
  }

  /**
   * Checks and applies events in order at the end of a log being built (a seed, an import, a
   * stored log read page by page), with no trial run to undo: when a check fails the log must be
   * dropped. A {@link TakenBatch} is checked as taken, without copying its events again.
   * @returns the checked events (the array frozen and marked admitted for the derivations; the
   *   events are the batch's own, or a serialized event read back).
   * @throws InvalidEventError or StorageError FORMAT_UNSUPPORTED, as `prepare` does.
   */
  admit(
    batch: readonly unknown[] | TakenBatch,
    ownership: Ownership = "copy",
  ): readonly SessionEvent[] {
    const taken = this.#admit(TakenBatch.of(batch, ownership).events);
    const events = new Array<SessionEvent>(taken.length);
    for (let i = 0; i < taken.length; i++) events[i] = fullEvent(taken[i] as TakenEvent);
    return markAdmitted(events);
  }

  /**
   * {@link admit}, for a writer: returns the checked events serialized, as a backend writes them
   * (a caller's events were serialized when taken; parsed ones are serialized now).
   */
  admitSerialized(
    batch: readonly unknown[] | TakenBatch,
    ownership: Ownership = "copy",
  ): readonly SerializedEvent[] {
    return this.#admit(TakenBatch.of(batch, ownership).events).map(serializedOf);
  }

  #admit(taken: readonly TakenEvent[]): readonly TakenEvent[] {
    const state = this.#state;
    const from = state.length;
    let event: SessionEvent | undefined;
    for (let i = 0; i < taken.length; i++) {
      try {
        event = settleEvent(taken[i] as TakenEvent, from + i, i);
        state.check(event, i);
      } catch (error) {
        throw everyProblem(error, taken, i, from);
      }
      state.apply(event);
    }
    if (event !== undefined) this.#lastTime = event.time;
    return taken;
  }

  /**
   * Brings the surface up to date with stored message-producing events of a settled log (a
   * settled read, see `SessionBackend.loadSettled`), each checked against the schema at its own
   * seq, which must go up from the log's end; the events between them are left out. The state is
   * then put at the log's last `turn/end` with {@link settleAt}.
   * @throws InvalidEventError for an event the schema refuses (a seq that goes back breaks
   *   seq-contiguous); StorageError FORMAT_UNSUPPORTED.
   */
  admitSurface(raw: readonly unknown[]): void {
    const state = this.#state;
    for (let i = 0; i < raw.length; i++) {
      const seq = this.#sparseSeq(raw[i]);
      const event = settleEvent(takeEvent(raw[i], "parsed"), seq, i);
      if (!isSurfaceEvent(event)) {
        throw invalidEvent(
          event.type,
          i,
          seq,
          "surface-marker",
          "expected a message-producing event of a settled read, got another",
        );
      }
      // After a turn/end nothing is open: only the surface carries over (see settleAt).
      state.surface.advance(event);
      state.length = seq + 1;
    }
  }

  /**
   * Puts the log at the end of its settled part: just after `turnEnd`, its last `turn/end`, once
   * {@link admitSurface} brought the surface there.
   * @throws InvalidEventError when `turnEnd` is not a valid `turn/end` at or after the log's end.
   */
  settleAt(raw: unknown): void {
    const seq = this.#sparseSeq(raw);
    const event = settleEvent(takeEvent(raw, "parsed"), seq, 0);
    if (event.type !== "turn/end") {
      throw invalidEvent(
        event.type,
        0,
        seq,
        "turn-order",
        `expected the last turn/end at seq ${seq}, got ${event.type}`,
      );
    }
    this.#state.settleAt(event);
    this.#lastTime = event.time;
  }

  /** The number of events, which is also the next seq. */
  get length(): number {
    return this.#state.length;
  }

  /** The `time` of the last event, if any. */
  get lastTime(): number | undefined {
    return this.#lastTime;
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
   * The stored events a batch would repeat when it is a retry (its first seq before the end), to
   * be read and handed to `prepare`; undefined when it starts at the end (or has no usable seq,
   * left to `prepare` to refuse).
   * @throws StorageError SEQ_CONFLICT when its first seq is past the end or negative.
   */
  repeatedSpan(batch: TakenBatch): RepeatedSpan | undefined {
    const first = batch.events[0]?.seq;
    if (batch.events.length === 0 || !Number.isSafeInteger(first) || first === this.length) {
      return undefined;
    }
    if ((first as number) > this.length || (first as number) < 0) {
      throw this.#conflict(first);
    }
    const from = first as number;
    return { from, count: Math.min(batch.events.length, this.length - from) };
  }

  /**
   * Checks a batch against the current log without changing it. A batch whose first events
   * repeat stored ones exactly (a retry after a lost acknowledgement) skips those: `stored` holds
   * the stored events of its {@link repeatedSpan}, read by the caller.
   * @throws StorageError SEQ_CONFLICT when the first seq is not the next seq and the batch is not
   *   such a retry; InvalidEventError for a broken rule (the first, with every problem of the
   *   batch in `problems`, see {@link everyProblem}); StorageError FORMAT_UNSUPPORTED for an
   *   unknown event type. A {@link TakenBatch} is checked as taken, without copying its events
   *   again.
   */
  prepare(
    batch: readonly unknown[] | TakenBatch,
    ownership: Ownership = "copy",
    stored: readonly unknown[] = [],
  ): PreparedBatch {
    const fromSeq = this.length;
    const taken = TakenBatch.of(batch, ownership);
    const skip = this.#repeatedPrefix(taken, stored);
    const state = this.#state;
    const events: SessionEvent[] = [];
    const serialized: SerializedEvent[] = [];
    const list = taken.events;
    // Try the batch on the live state and undo it: the cost is the batch's, not the log's.
    state.begin();
    try {
      for (let i = skip; i < list.length; i++) {
        let event: SessionEvent;
        try {
          event = settleEvent(list[i] as TakenEvent, fromSeq + events.length, i);
          state.check(event, i);
        } catch (error) {
          // Event i stands at fromSeq + (i - skip), and so does every later one at its place.
          throw everyProblem(error, list, i, fromSeq - skip);
        }
        state.apply(event);
        events.push(event);
        serialized.push(serializedOf(list[i] as TakenEvent));
      }
    } finally {
      state.rollback();
    }
    return { events, serialized, fromSeq, nextSeq: fromSeq + events.length, log: this };
  }

  /**
   * Makes a prepared batch part of the log, and then (unless `pack` is false: the caller calls
   * {@link packOlderMessages} itself, e.g. while it waits on storage) deflates its older messages.
   * @throws StorageError SEQ_CONFLICT when the log changed since the batch was prepared.
   */
  commit(batch: PreparedBatch, options: { readonly pack?: boolean } = {}): void {
    if (batch.log !== this || batch.fromSeq !== this.length) {
      throw new StorageError(
        "SEQ_CONFLICT",
        `expected a batch prepared at seq ${this.length} of session ${show(this.header.id)}, got one prepared at ${batch.fromSeq}`,
        { expectedSeq: this.length },
      );
    }
    const events = batch.events;
    if (events.length === 0) return;
    const state = this.#state;
    for (let i = 0; i < events.length; i++) state.apply(events[i] as SessionEvent);
    this.#lastTime = (events[events.length - 1] as SessionEvent).time;
    if (options.pack !== false) this.packOlderMessages();
  }

  /**
   * Deflates the surface's older messages (a log written to stays open: they are kept deflated
   * until they are read), at most a few blocks a call; with `keepText`, the oldest until no more
   * than that of text is left unpacked (see {@link unpackedText}). Not while a batch is tried:
   * between `prepare` and `commit` is fine.
   */
  packOlderMessages(keepText?: number): void {
    packOlderMessages(this.#state.surface, keepText);
  }

  /**
   * How many of the surface's messages may wait to be packed (nodes after the packed ones).
   * @internal
   */
  get unpackedMessages(): number {
    return this.#state.surface.unpacked;
  }

  /**
   * The size of the unpacked messages kept as the text of their events (the messages of batches
   * taken from a caller), in UTF-16 code units.
   * @internal
   */
  get unpackedText(): number {
    return this.#state.surface.unpackedText;
  }

  /**
   * How many unpacked messages are kept as derived (those of stored events read back, of parsed
   * batches and of a seed), not as text.
   * @internal
   */
  get unpackedDerived(): number {
    return this.#state.surface.unpackedDerived;
  }

  /** Checks and commits a batch that starts at the end; returns the next seq. Same errors as `prepare`. */
  append(batch: readonly unknown[] | TakenBatch, ownership: Ownership = "copy"): number {
    const prepared = this.prepare(batch, ownership);
    this.commit(prepared);
    return prepared.nextSeq;
  }

  /** The messages derived from the surface of the whole log, frozen (maintained incrementally). */
  deriveMessages(): readonly DerivedMessage[] {
    return this.#state.surface.messages();
  }

  /**
   * The seq a stored event of a sparse read stands at: its own when it is past the log's end, else
   * the end (where `settleEvent` then reports it breaking seq-contiguous).
   */
  #sparseSeq(raw: unknown): number {
    const own = (raw as { seq?: unknown } | null)?.seq;
    const end = this.#state.length;
    return Number.isSafeInteger(own) && (own as number) >= end ? (own as number) : end;
  }

  /** How many leading events of `batch` repeat `stored` exactly; throws on a conflicting one. */
  #repeatedPrefix(batch: TakenBatch, stored: readonly unknown[]): number {
    const span = this.repeatedSpan(batch);
    if (span === undefined) return 0;
    const list = batch.events;
    for (let i = 0; i < span.count; i++) {
      // A refused value is never a stored (valid) event; a serialized one is read back to compare.
      const taken = list[i];
      if (
        taken instanceof RefusedEvent ||
        !isDeepStrictEqual(fullEvent(taken as TakenEvent), stored[i])
      ) {
        throw this.#conflict(span.from);
      }
    }
    return span.count;
  }

  #conflict(first: unknown): StorageError<"SEQ_CONFLICT"> {
    return new StorageError(
      "SEQ_CONFLICT",
      `expected the batch to start at seq ${this.length} of session ${show(this.header.id)}, got ${first}`,
      { expectedSeq: this.length },
    );
  }
}

/** A settled taken event as a whole value: a parsed one as it is, a serialized one read back. */
function fullEvent(taken: TakenEvent): SessionEvent {
  return taken instanceof SerializedEvent ? taken.event : (taken as SessionEvent);
}

/** A settled taken event serialized: a caller's was when taken, a parsed one is now. */
function serializedOf(taken: TakenEvent): SerializedEvent {
  return taken instanceof SerializedEvent ? taken : SerializedEvent.of(taken as SessionEvent);
}

/**
 * The error a batch is refused with once event `at` failed with `error`: an InvalidEventError
 * listing, after `error`'s own problem, those of every later event checked on its own (seq,
 * surface marker, lossless JSON, schema) at the seq its place calls for (`base + index`). The
 * rules that depend on the events before are not checked past the first problem: the running
 * state is unknown there, and guessing it would report follow-on errors of one mistake (as
 * `seedline validate` does). Events of an unknown type are left out (FORMAT_UNSUPPORTED is
 * answered only when it comes first). Any other error is returned as it is.
 */
function everyProblem(
  error: unknown,
  list: readonly TakenEvent[],
  at: number,
  base: number,
): unknown {
  if (!(error instanceof InvalidEventError)) return error;
  const more: InvalidEventProblem[] = [];
  for (let i = at + 1; i < list.length; i++) {
    try {
      settleEvent(list[i] as TakenEvent, base + i, i);
    } catch (later) {
      if (later instanceof InvalidEventError) more.push(...later.problems);
      else if (!isEventError(later)) throw later;
    }
  }
  return withProblems(error, more);
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
