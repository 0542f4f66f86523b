// A SessionLog with the events it admitted kept beside it, the way the store keeps them in a backend.
import type { DerivedMessage, SessionEvent, SessionHeader } from "../../src/index.js";
import { TakenBatch } from "../../src/log/invariants.js";
import { SessionLog } from "../../src/log/session-log.js";

/** A log and its events: appends check against the log, and retries compare with the kept events. */
export class KeptLog {
  readonly log: SessionLog;
  readonly #events: SessionEvent[];

  constructor(
    header: SessionHeader,
    seed: readonly unknown[] = [],
    ownership: "copy" | "parsed" = "copy",
  ) {
    this.log = new SessionLog(header);
    this.#events = [...this.log.admit(seed, ownership)];
  }

  /** The events admitted so far, in seq order. */
  get events(): readonly SessionEvent[] {
    return Object.freeze(this.#events.slice());
  }

  get length(): number {
    return this.log.length;
  }

  get openTurn(): number | undefined {
    return this.log.openTurn;
  }

  deriveMessages(): readonly DerivedMessage[] {
    return this.log.deriveMessages();
  }

  at(seq: number): SessionEvent | undefined {
    return this.#events[seq];
  }

  /** Appends like the store does (a retry compared with the kept events); returns the next seq. */
  append(batch: readonly unknown[]): number {
    const taken = TakenBatch.take(batch, "copy");
    const span = this.log.repeatedSpan(taken);
    const stored = span === undefined ? [] : this.#events.slice(span.from, span.from + span.count);
    const prepared = this.log.prepare(taken, "copy", stored);
    this.log.commit(prepared);
    // What a backend stores: the events as serialized, read back.
    this.#events.push(...prepared.serialized.map((serialized) => serialized.event));
    return prepared.nextSeq;
  }
}
