// The client side of session/watch: session/events notifications routed to one async iterator per watch.
import type { SessionEventsParams, SessionWatchResult } from "../generated.js";
import type { WatchBatch } from "../store/watch/session-watch.js";
import { ConnectionClosedError, RpcResponseError } from "./rpc-response-error.js";

/** How a client watch starts and stops. */
export interface ClientWatchOptions {
  /** The seq of the first event to deliver; the session's end when the server answers, unless given. */
  readonly fromSeq?: number;
  /** Stops the watch (and tells the server) when aborted. */
  readonly signal?: AbortSignal;
}

/** What a client watch needs of its client. */
export interface ClientWatchTransport {
  watch(params: { sessionId: string; fromSeq?: number }): Promise<SessionWatchResult>;
  unwatch(watchId: string): Promise<void>;
}

/** Notifications that arrived before their watch's answer, kept until it is read (at most this many). */
const EARLY_LIMIT = 10_000;

/**
 * The watches of one client. Notifications are routed by `watchId`; one that arrives before the
 * answer that names its watch is kept until the answer is read, so nothing depends on which of
 * the two the transport delivers first.
 */
export class ClientWatches {
  readonly #watches = new Map<string, ClientWatch>();
  readonly #early = new Map<string, SessionEventsParams[]>();
  #earlyCount = 0;
  #closed = false;

  /** Routes one session/events notification. */
  deliver(params: SessionEventsParams): void {
    const watch = this.#watches.get(params.watchId);
    if (watch !== undefined) {
      watch.push(params);
      return;
    }
    if (this.#earlyCount >= EARLY_LIMIT) return;
    const list = this.#early.get(params.watchId) ?? [];
    list.push(params);
    this.#early.set(params.watchId, list);
    this.#earlyCount++;
  }

  /** Starts a watch over `transport`. */
  open(
    transport: ClientWatchTransport,
    sessionId: string,
    options: ClientWatchOptions,
  ): ClientWatch {
    const watch = new ClientWatch(sessionId, options, transport, this);
    if (this.#closed) watch.fail(new ConnectionClosedError());
    return watch;
  }

  /** @internal A watch learned its id: deliver what came early. */
  register(watchId: string, watch: ClientWatch): void {
    this.#watches.set(watchId, watch);
    const early = this.#early.get(watchId);
    if (early === undefined) return;
    this.#early.delete(watchId);
    this.#earlyCount -= early.length;
    for (const params of early) watch.push(params);
  }

  /** @internal A watch ended. */
  forget(watchId: string): void {
    this.#watches.delete(watchId);
  }

  /** The connection closed: every watch ends with ConnectionClosedError. */
  close(): void {
    this.#closed = true;
    for (const watch of [...this.#watches.values()]) watch.fail(new ConnectionClosedError());
    this.#watches.clear();
    this.#early.clear();
  }
}

/**
 * One watch of a `SeedlineClient`: an async iterator of event batches, like the SDK's
 * `SessionWatch`. A batch with `deleted` ends it when the session is deleted; a server-side end
 * with an error (WATCH_OVERFLOW, a storage error) rejects `next` with {@link RpcResponseError}.
 */
export class ClientWatch implements AsyncIterableIterator<WatchBatch> {
  readonly sessionId: string;
  /** Resolves with the server's answer (watch id and first seq); rejects with its error response. */
  readonly ready: Promise<SessionWatchResult>;
  readonly #transport: ClientWatchTransport;
  readonly #registry: ClientWatches;
  readonly #signal: AbortSignal | undefined;
  readonly #queue: (WatchBatch | Error)[] = [];
  #watchId: string | undefined;
  #waiting: (() => void) | undefined;
  #done = false;

  /** @internal Made by `SeedlineClient.watch`. */
  constructor(
    sessionId: string,
    options: ClientWatchOptions,
    transport: ClientWatchTransport,
    registry: ClientWatches,
  ) {
    this.sessionId = sessionId;
    this.#transport = transport;
    this.#registry = registry;
    this.#signal = options.signal;
    this.ready = transport
      .watch({
        sessionId,
        ...(options.fromSeq === undefined ? {} : { fromSeq: options.fromSeq }),
      })
      .then((result) => {
        this.#watchId = result.watchId;
        if (this.#done) void this.#unwatch();
        else registry.register(result.watchId, this);
        return result;
      });
    this.ready.catch((error: unknown) => this.fail(asError(error)));
    this.#signal?.addEventListener("abort", this.#onAbort);
    if (this.#signal?.aborted === true) this.#onAbort();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<WatchBatch, undefined>> {
    for (;;) {
      const item = this.#queue.shift();
      if (item instanceof Error) {
        this.#queue.length = 0;
        throw item;
      }
      if (item !== undefined) return { done: false, value: item };
      if (this.#done) return { done: true, value: undefined };
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
      this.#waiting = undefined;
    }
  }

  /** Stops the watch: tells the server, and ends the iterator. */
  async return(): Promise<IteratorResult<WatchBatch, undefined>> {
    this.#end();
    this.#queue.length = 0;
    // A `next` waiting for a batch ends too.
    this.#waiting?.();
    await this.#unwatch();
    return { done: true, value: undefined };
  }

  /** @internal A notification of this watch. */
  push(params: SessionEventsParams): void {
    if (this.#done) return;
    if (params.events.length > 0) {
      this.#queue.push({
        sessionId: params.sessionId,
        events: params.events,
        nextSeq: params.nextSeq,
      });
    }
    if (params.end?.reason === "deleted") {
      this.#queue.push({
        sessionId: params.sessionId,
        events: [],
        nextSeq: params.nextSeq,
        deleted: true,
      });
      this.#end();
    } else if (params.end !== undefined) {
      const error = params.end.error;
      this.#queue.push(
        new RpcResponseError(
          error?.code ?? 0,
          error?.message ?? "the server ended the watch",
          error?.data,
        ),
      );
      this.#end();
    }
    this.#waiting?.();
  }

  /** @internal Ends the watch with an error. */
  fail(error: Error): void {
    if (this.#done) return;
    this.#queue.push(error);
    this.#end();
    this.#waiting?.();
  }

  readonly #onAbort = (): void => {
    this.#end();
    this.#waiting?.();
    void this.#unwatch();
  };

  #end(): void {
    if (this.#done) return;
    this.#done = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    if (this.#watchId !== undefined) this.#registry.forget(this.#watchId);
  }

  async #unwatch(): Promise<void> {
    if (this.#watchId === undefined) return;
    try {
      await this.#transport.unwatch(this.#watchId);
    } catch {
      // The connection is gone, and the server's watches with it.
    }
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
