// SessionWatch: a session's new events as an async iterator of batches, exactly once and in order, from any writer.
import { isDeepStrictEqual } from "node:util";
import { StorageError } from "../../errors.js";
import type { SessionEvent, SessionHeader } from "../../generated.js";
import type { SessionBackend, Unsubscribe } from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import { type EventPage, MAX_READ_LIMIT, type ReadOptions } from "../reads/event-pages.js";

/** What a watch reads: the session as stored now (a `SessionStore`), and the backend's change feed. */
export interface WatchSource {
  readonly backend: Pick<SessionBackend, "subscribe">;
  get(id: string): Promise<WatchedSession | undefined>;
  read(id: string, options: ReadOptions): Promise<EventPage>;
}

/** What a watch needs of a session when it starts. */
export interface WatchedSession {
  readonly header: SessionHeader;
  readonly nextSeq: number;
}

/** How a watch starts and stops. */
export interface WatchOptions {
  /** The seq of the first event to deliver; the session's current end unless given (only new events). */
  readonly fromSeq?: number;
  /** Ends the watch when aborted. */
  readonly signal?: AbortSignal;
  /** The most events one batch carries (a long catch-up comes in several); 1,000 unless given. */
  readonly maxBatchEvents?: number;
}

/** One delivery of a watch. */
export interface WatchBatch {
  readonly sessionId: string;
  /** The new events, in seq order: `events[0].seq` is the previous batch's `nextSeq`. */
  readonly events: readonly SessionEvent[];
  /** The seq after this batch: where the watch goes on. */
  readonly nextSeq: number;
  /**
   * Present on the last batch when the session was deleted (or deleted and created anew, a
   * different log): the watch ends with it. Its `events` are empty.
   */
  readonly deleted?: true;
}

/** The default most events one batch carries. */
export const DEFAULT_WATCH_BATCH = 1000;

/**
 * A watch on one session, made by `SessionStore.watch`. It subscribes to the backend's
 * change notifications before it reads the session, so no append between the two is missed; on
 * each notification it reads what is new (through the store, which reads only new data) and
 * yields it. Positions are seqs, so a spurious or repeated notification yields nothing twice and
 * a writer that restarts, or another process taking over, leaves no gap.
 */
export class SessionWatch implements AsyncIterableIterator<WatchBatch> {
  readonly sessionId: string;
  /**
   * Resolves once the watch is set up, with the seq of the first event it will deliver; rejects
   * with StorageError SESSION_NOT_FOUND (or a read error), and the watch is then ended.
   */
  readonly ready: Promise<{ readonly nextSeq: number; readonly header: SessionHeader }>;
  readonly #store: WatchSource;
  readonly #signal: AbortSignal | undefined;
  readonly #maxBatch: number;
  readonly #unsubscribe: Unsubscribe;
  #header: SessionHeader | undefined;
  #next = 0;
  /** The longest the log has been seen: a shorter one was deleted and created anew. */
  #seen = 0;
  #dirty = true;
  #done = false;
  #wake: (() => void) | undefined;
  #turn: Promise<unknown> = Promise.resolve();

  /** @internal Made by `SessionStore.watch`. */
  constructor(store: WatchSource, sessionId: string, options: WatchOptions) {
    this.#store = store;
    this.sessionId = sessionId;
    this.#signal = options.signal;
    this.#maxBatch = Math.min(
      MAX_READ_LIMIT,
      Math.max(1, options.maxBatchEvents ?? DEFAULT_WATCH_BATCH),
    );
    this.#unsubscribe = store.backend.subscribe(sessionId, () => this.#poke());
    this.#signal?.addEventListener("abort", this.#onAbort);
    this.ready = (async () => {
      const session = await store.get(sessionId);
      if (session === undefined) throw sessionNotFound(sessionId);
      this.#header = session.header;
      this.#next = options.fromSeq ?? session.nextSeq;
      this.#seen = session.nextSeq;
      return { nextSeq: this.#next, header: session.header };
    })();
    // A caller that only iterates sees the failure from `next`; this keeps it from going unhandled.
    this.ready.catch(() => this.#finish());
    if (this.#signal?.aborted === true) this.#finish();
  }

  /** The seq of the next event this watch will deliver. */
  get nextSeq(): number {
    return this.#next;
  }

  /** Whether the watch has ended. */
  get ended(): boolean {
    return this.#done;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The next batch; waits until there is one. Calls are served one at a time, in call order. */
  next(): Promise<IteratorResult<WatchBatch, undefined>> {
    const result = this.#turn.then(() => this.#nextBatch());
    this.#turn = result.catch(() => undefined);
    return result;
  }

  /** Ends the watch. */
  async return(): Promise<IteratorResult<WatchBatch, undefined>> {
    this.#finish();
    return { done: true, value: undefined };
  }

  async #nextBatch(): Promise<IteratorResult<WatchBatch, undefined>> {
    try {
      await this.ready;
    } catch (error) {
      this.#finish();
      throw error;
    }
    for (;;) {
      if (this.#done) return { done: true, value: undefined };
      if (!this.#dirty) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      this.#dirty = false;
      let page: EventPage | undefined;
      try {
        page = await this.#store.read(this.sessionId, {
          fromSeq: this.#next,
          limit: this.#maxBatch,
        });
      } catch (error) {
        if (!(error instanceof StorageError && error.code === "SESSION_NOT_FOUND")) {
          this.#finish();
          throw error;
        }
      }
      if (this.#done) return { done: true, value: undefined };
      // Gone, or deleted and created anew (another header, or shorter than what was delivered).
      const shorter = page?.pastEnd === true && this.#next <= this.#seen;
      if (page === undefined || shorter || !isDeepStrictEqual(page.header, this.#header)) {
        this.#finish();
        return {
          done: false,
          value: { sessionId: this.sessionId, events: [], nextSeq: this.#next, deleted: true },
        };
      }
      if (page.events.length > 0) {
        this.#next = page.nextSeq;
        this.#seen = Math.max(this.#seen, page.nextSeq);
        // More is waiting: the next call reads again without waiting for a notification.
        if (!page.done) this.#dirty = true;
        const batch = { sessionId: this.sessionId, events: page.events, nextSeq: page.nextSeq };
        return { done: false, value: batch };
      }
    }
  }

  #poke(): void {
    this.#dirty = true;
    this.#wake?.();
  }

  readonly #onAbort = (): void => this.#finish();

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#unsubscribe();
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.#wake?.();
  }
}
