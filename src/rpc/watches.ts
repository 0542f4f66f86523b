// The watches of one server connection: session/watch and session/unwatch, and the session/events notifications they send.
import { randomUUID } from "node:crypto";
import { SeedlineError, show } from "../errors.js";
import type {
  SessionEventsParams,
  SessionWatchParams,
  SessionWatchResult,
  WireError,
} from "../generated.js";
import type { SessionStore } from "../store/session-store.js";
import type { SessionWatch } from "../store/session-watch.js";
import { toResponseError } from "./error-mapping.js";

/** How many events one watch may have sent but not yet written to the client before it is ended. */
export const DEFAULT_WATCH_BUFFER_EVENTS = 10_000;

/** What the watches of a connection need. */
export interface ConnectionWatchesOptions {
  readonly store: SessionStore;
  /** Sends one session/events notification; resolves once the transport has written it. */
  readonly send: (params: SessionEventsParams) => Promise<void>;
  /** The most events a watch may have waiting to be written; {@link DEFAULT_WATCH_BUFFER_EVENTS} unless given. */
  readonly bufferEvents?: number;
  /** Called when a watch delivers events of a session (it is in use: keep it loaded). */
  readonly onDelivery?: (sessionId: string) => void;
  /** Where failures go that no request can be answered with. */
  readonly log: (line: string) => void;
}

interface Entry {
  readonly watch: SessionWatch;
  readonly controller: AbortController;
  /** Events sent whose notification the transport has not written yet. */
  pending: number;
  /** The seq of the last event sent, -1 when none. */
  lastSeq: number;
  /** Resolves when the pump has stopped. */
  pumped: Promise<void>;
}

/**
 * The watches one client opened on one connection. Each runs a pump: it takes the next batch of
 * its `SessionWatch` as soon as there is one and sends it; batches the client has not read yet
 * wait in the transport. When more than `bufferEvents` events are waiting, the watch is ended
 * with WATCH_OVERFLOW naming the last seq sent, so nothing is ever dropped silently.
 */
export class ConnectionWatches {
  readonly #options: ConnectionWatchesOptions;
  readonly #limit: number;
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: ConnectionWatchesOptions) {
    this.#options = options;
    this.#limit = Math.max(1, options.bufferEvents ?? DEFAULT_WATCH_BUFFER_EVENTS);
  }

  /** How many watches are running. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Starts a watch; its first notification is sent after this resolves (after the answer).
   * @throws StorageError SESSION_NOT_FOUND and read errors, as `SessionStore.watch`.
   */
  async start(params: SessionWatchParams): Promise<SessionWatchResult> {
    const controller = new AbortController();
    const watch = this.#options.store.watch(params.sessionId, {
      ...(params.fromSeq === undefined ? {} : { fromSeq: params.fromSeq }),
      signal: controller.signal,
    });
    const { nextSeq } = await watch.ready;
    if (this.#closed) {
      controller.abort();
      throw new SeedlineError("INTERNAL", "the connection closed while the watch was set up", {});
    }
    const watchId = randomUUID();
    const entry: Entry = {
      watch,
      controller,
      pending: 0,
      lastSeq: nextSeq - 1,
      pumped: Promise.resolve(),
    };
    this.#entries.set(watchId, entry);
    // The answer is written when this resolves; the pump starts a macrotask later, so the
    // client reads the watch id before any notification that carries it.
    entry.pumped = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.#pump(watchId, entry),
    );
    return { watchId, nextSeq };
  }

  /** Stops a watch; nothing of it is sent afterwards. Unknown or ended ids are ignored. */
  stop(watchId: string): void {
    const entry = this.#entries.get(watchId);
    if (entry === undefined) return;
    this.#entries.delete(watchId);
    entry.controller.abort();
  }

  /** Stops every watch (the connection is closing) and waits for their pumps. */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) entry.controller.abort();
    await Promise.all(entries.map((e) => e.pumped));
  }

  async #pump(watchId: string, entry: Entry): Promise<void> {
    const { watch } = entry;
    const sessionId = watch.sessionId;
    const live = () => this.#entries.get(watchId) === entry;
    const end = (end: NonNullable<SessionEventsParams["end"]>) =>
      this.#send(entry, { watchId, sessionId, events: [], nextSeq: entry.lastSeq + 1, end });
    try {
      for await (const batch of watch) {
        if (!live()) return;
        if (batch.deleted === true) {
          this.#entries.delete(watchId);
          await end({ reason: "deleted" });
          return;
        }
        const count = batch.events.length;
        if (entry.pending + count > this.#limit) {
          this.#entries.delete(watchId);
          const overflow = new SeedlineError(
            "WATCH_OVERFLOW",
            `expected the client to read the session/events of watch ${show(watchId)} on ${show(sessionId)}, but ${entry.pending + count} events were waiting (the limit is ${this.#limit}); the last seq sent was ${entry.lastSeq}`,
            { sessionId, lastSeq: entry.lastSeq },
          );
          await end({ reason: "error", error: this.#wire(overflow) });
          return;
        }
        entry.pending += count;
        entry.lastSeq = batch.nextSeq - 1;
        this.#options.onDelivery?.(sessionId);
        void this.#send(entry, {
          watchId,
          sessionId,
          events: batch.events,
          nextSeq: batch.nextSeq,
        }).finally(() => {
          entry.pending -= count;
        });
      }
    } catch (error) {
      if (!live()) return;
      this.#entries.delete(watchId);
      await end({ reason: "error", error: this.#wire(error) });
    } finally {
      entry.controller.abort();
      if (live()) this.#entries.delete(watchId);
    }
  }

  async #send(entry: Entry, params: SessionEventsParams): Promise<void> {
    if (this.#closed && params.end === undefined && entry.controller.signal.aborted) return;
    try {
      await this.#options.send(params);
    } catch (error) {
      // The client went away: the connection's close stops the watches.
      this.#options.log(
        `could not send session/events of ${show(params.watchId)}: ${String(error)}`,
      );
    }
  }

  #wire(error: unknown): WireError {
    const json = toResponseError(error, this.#options.log).toJson();
    return {
      code: json.code,
      message: json.message,
      ...(json.data === undefined ? {} : { data: json.data as unknown as Record<string, unknown> }),
    };
  }
}
