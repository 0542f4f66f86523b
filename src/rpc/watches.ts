// The watches of one server connection: session/watch and session/unwatch, and the session/events notifications they send.
import { randomUUID } from "node:crypto";
import { SeedlineError, show } from "../errors.js";
import {
  RPC_METHOD,
  type SessionEvent,
  type SessionEventsParams,
  type SessionUpdateParams,
  type SessionWatchParams,
  type SessionWatchResult,
  type WireError,
} from "../generated.js";
import { type AcpToolPresenter, acpUpdatesOf } from "../log/acp-updates.js";
import type { SessionStore } from "../store/session-store.js";
import { DEFAULT_WATCH_BATCH, type SessionWatch } from "../store/watch/session-watch.js";
import { toResponseError } from "./error-mapping.js";
import {
  countWithin,
  jsonBytes,
  MAX_MESSAGE_BYTES,
  PAGE_BYTES,
  responseTooLarge,
} from "./frame-limit.js";

/** How many events of one watch may wait to be written to the client. */
export const DEFAULT_WATCH_BUFFER_EVENTS = 10_000;

/** How long (ms) a watch's full buffer may go without the client taking anything before the watch is ended. */
export const DEFAULT_WATCH_STALL_MS = 5_000;

/**
 * How many watches one connection may keep open: each holds a subscription, and every append to
 * its session reads the new events once per watch.
 */
export const DEFAULT_MAX_WATCHES = 1_000;

/** What the watches of a connection need. */
export interface ConnectionWatchesOptions {
  readonly store: SessionStore;
  /** Sends one session/events notification; resolves once the transport has written it. */
  readonly send: (params: SessionEventsParams) => Promise<void>;
  /**
   * Sends one session/update notification (a watch with `format: "acp"`); resolves once the
   * transport has written it.
   */
  readonly sendUpdate: (params: SessionUpdateParams) => Promise<void>;
  /** Titles and kinds of tool calls in ACP updates; the defaults of `acpUpdatesOf` unless given. */
  readonly presentTool?: AcpToolPresenter;
  /** The most events a watch may have waiting to be written; {@link DEFAULT_WATCH_BUFFER_EVENTS} unless given. */
  readonly bufferEvents?: number;
  /**
   * How long (ms) a full buffer may go without any write reaching the client before the watch is
   * ended with WATCH_OVERFLOW; {@link DEFAULT_WATCH_STALL_MS} unless given.
   */
  readonly stallMs?: number;
  /** How many watches may be open at once; {@link DEFAULT_MAX_WATCHES} unless given. */
  readonly maxWatches?: number;
  /** Called when a watch delivers events of a session (it is in use: keep it loaded). */
  readonly onDelivery?: (sessionId: string) => void;
  /** Where failures go that no request can be answered with. */
  readonly log: (line: string) => void;
}

interface Entry {
  readonly watch: SessionWatch;
  /** What the watch sends: the events, or their ACP updates. */
  readonly format: "events" | "acp";
  readonly controller: AbortController;
  /** Events sent whose notification the transport has not written yet. */
  pending: number;
  /** The seq of the last event sent, -1 when none. */
  lastSeq: number;
  /** Wakes a pump that waits for room in the buffer (a write completed, or the watch stopped). */
  wake: (() => void) | undefined;
  /** Resolves when the pump has stopped. */
  pumped: Promise<void>;
}

/**
 * The watches one client opened on one connection. Each runs a pump: it takes the next batch of
 * its `SessionWatch` and sends it; what the client has not read yet waits in the transport, up to
 * `bufferEvents` events per watch. A pump with a full buffer waits for the client to take some
 * (so a long catch-up to a client that reads goes at the client's pace, and what waits beyond the
 * buffer stays in the store, not in memory). When the client takes nothing for `stallMs` while the
 * buffer is full, the watch is ended with WATCH_OVERFLOW naming the last seq sent: everything up
 * to it reaches the client, then the end, and nothing is ever dropped silently.
 */
export class ConnectionWatches {
  readonly #options: ConnectionWatchesOptions;
  readonly #limit: number;
  readonly #stallMs: number;
  readonly #maxWatches: number;
  /** Watches being set up (counted against the bound before they are running). */
  #starting = 0;
  readonly #acpOptions: { readonly presentTool?: AcpToolPresenter };
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: ConnectionWatchesOptions) {
    this.#options = options;
    this.#limit = Math.max(1, options.bufferEvents ?? DEFAULT_WATCH_BUFFER_EVENTS);
    this.#stallMs = Math.max(0, options.stallMs ?? DEFAULT_WATCH_STALL_MS);
    this.#maxWatches = Math.max(1, options.maxWatches ?? DEFAULT_MAX_WATCHES);
    this.#acpOptions =
      options.presentTool === undefined ? {} : { presentTool: options.presentTool };
  }

  /** How many watches are running. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Starts a watch; its first notification is sent after this resolves (after the answer).
   * @throws SeedlineError WATCH_LIMIT when `maxWatches` watches are open or being set up;
   *   StorageError SESSION_NOT_FOUND and read errors, as `SessionStore.watch`.
   */
  async start(params: SessionWatchParams): Promise<SessionWatchResult> {
    if (this.#entries.size + this.#starting >= this.#maxWatches) {
      throw new SeedlineError(
        "WATCH_LIMIT",
        `expected at most ${this.#maxWatches} watch(es) open on this connection, got a ${RPC_METHOD.sessionWatch} for one more: stop watches you are done with (${RPC_METHOD.sessionUnwatch})`,
        { limit: this.#maxWatches },
      );
    }
    const controller = new AbortController();
    const watch = this.#options.store.watch(params.sessionId, {
      ...(params.fromSeq === undefined ? {} : { fromSeq: params.fromSeq }),
      signal: controller.signal,
      // A batch never exceeds the buffer, so an empty buffer always has room for the next one.
      maxBatchEvents: Math.min(DEFAULT_WATCH_BATCH, this.#limit),
    });
    this.#starting += 1;
    let nextSeq: number;
    try {
      ({ nextSeq } = await watch.ready);
    } finally {
      this.#starting -= 1;
    }
    if (this.#closed) {
      controller.abort();
      throw new SeedlineError("INTERNAL", "the connection closed while the watch was set up", {});
    }
    const watchId = randomUUID();
    const entry: Entry = {
      watch,
      format: params.format ?? "events",
      controller,
      pending: 0,
      lastSeq: nextSeq - 1,
      wake: undefined,
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
    entry.wake?.();
  }

  /** Stops every watch (the connection is closing) and waits for their pumps. */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) {
      entry.controller.abort();
      entry.wake?.();
    }
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
        // Each notification carries at most a page's bytes of events, so it fits in one frame.
        for (const events of byBytes(batch.events)) {
          const size = events.length === 1 ? jsonBytes(events[0]) : 0;
          if (size > MAX_MESSAGE_BYTES - NOTIFICATION_OVERHEAD) {
            this.#entries.delete(watchId);
            const seq = events[0]?.seq ?? entry.lastSeq + 1;
            const error = responseTooLarge(
              size,
              `a session/events notification with the event at seq ${seq} alone`,
            );
            this.#options.log(`ended a watch: ${error.message}`);
            await end({ reason: "error", error: this.#wire(error) });
            return;
          }
          const count = events.length;
          if (!(await this.#room(entry, count))) {
            if (!live()) return;
            this.#entries.delete(watchId);
            const overflow = new SeedlineError(
              "WATCH_OVERFLOW",
              `expected the client to read the session/events of watch ${show(watchId)} on ${show(sessionId)}, but it took none of the ${entry.pending} events waiting for ${this.#stallMs} ms (the buffer holds ${this.#limit}); the last seq sent was ${entry.lastSeq}`,
              { sessionId, lastSeq: entry.lastSeq },
            );
            this.#options.log(`ended a watch: ${overflow.message}`);
            await end({ reason: "error", error: this.#wire(overflow) });
            return;
          }
          if (!live()) return;
          entry.pending += count;
          entry.lastSeq = events[count - 1]?.seq ?? entry.lastSeq + count;
          const nextSeq = entry.lastSeq + 1;
          this.#options.onDelivery?.(sessionId);
          const sent =
            entry.format === "acp"
              ? this.#sendUpdates(watchId, sessionId, events)
              : this.#send(entry, { watchId, sessionId, events, nextSeq });
          void sent.finally(() => {
            entry.pending -= count;
            entry.wake?.();
          });
        }
        entry.lastSeq = batch.nextSeq - 1;
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

  /**
   * Waits until `count` more events fit in the watch's buffer; false when the client took nothing
   * for the stall time while the buffer was full (true at once when the watch stopped: the pump
   * then sees it is no longer live).
   */
  async #room(entry: Entry, count: number): Promise<boolean> {
    while (entry.pending > 0 && entry.pending + count > this.#limit) {
      if (entry.controller.signal.aborted) return true;
      const progressed = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.#stallMs);
        entry.wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      entry.wake = undefined;
      if (!progressed) return false;
    }
    return true;
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

  /**
   * Sends the ACP updates of `events` in order, each a session/update notification naming the
   * watch and the event's seq; resolves once all are written (or failed: the client went away).
   */
  async #sendUpdates(
    watchId: string,
    sessionId: string,
    events: readonly SessionEvent[],
  ): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const event of events) {
      for (const update of acpUpdatesOf(event, this.#acpOptions)) {
        const _meta = { seedline: { seq: event.seq, watchId } };
        sends.push(this.#options.sendUpdate({ sessionId, update, _meta }));
      }
    }
    try {
      await Promise.all(sends);
    } catch (error) {
      this.#options.log(`could not send session/update of ${show(watchId)}: ${String(error)}`);
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

/** Room left in a notification's frame for its members other than the events. */
const NOTIFICATION_OVERHEAD = 1024;

/** `events` in runs of whole events of at most a page's bytes of JSON each (at least one event each). */
function* byBytes(events: readonly SessionEvent[]): Generator<readonly SessionEvent[]> {
  let at = 0;
  while (at < events.length) {
    const rest = events.slice(at);
    const count = countWithin(rest, PAGE_BYTES, (event) => jsonBytes(event) + 1);
    yield count === rest.length ? rest : rest.slice(0, count);
    at += count;
  }
}
