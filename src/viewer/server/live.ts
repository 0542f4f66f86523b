// The live stream of a session's view items: server-sent events fed by SessionStore.watch, whichever process appends, at the pace the client reads.
import type { ServerResponse } from "node:http";
import { hasCode } from "../../errors.js";
import type { SessionStore } from "../../store/session-store.js";
import { ViewItemBuilder } from "../../view/view-items.js";
import { cutTexts } from "./cut-texts.js";
import { HttpError } from "./http-errors.js";
import { answersEarlierCalls, pendingCallsAt } from "./pending-calls-at.js";
import { SECURITY_HEADERS } from "./security.js";

/** How often a quiet stream sends a comment, so proxies and the browser keep it open. */
const PING_MS = 15_000;

/** The most live streams one viewer keeps open at once; past it a stream is refused (429 LIVE_LIMIT). */
export const MAX_LIVE_STREAMS = 64;

/**
 * The most events one message of a stream carries: a catch-up from an old seq is read from the
 * store one such batch at a time, each only once the client took the one before.
 */
export const LIVE_BATCH_EVENTS = 500;

/** How long (ms) a stream may wait for its client to take what was sent before it is closed. */
export const LIVE_STALL_MS = 30_000;

/** What the live streams of a viewer hold now. */
export interface LiveStats {
  /** Streams open. */
  readonly open: number;
  /** Streams waiting for their client to take what was sent (nothing more is read for them meanwhile). */
  readonly waiting: number;
  /** Bytes written to the streams that their sockets have not taken yet. */
  readonly bufferedBytes: number;
}

/** How the live streams of a viewer run. */
export interface LiveStreamsOptions {
  readonly store: SessionStore;
  /** {@link MAX_LIVE_STREAMS} unless given. */
  readonly maxStreams?: number;
  /** {@link LIVE_STALL_MS} unless given. */
  readonly stallMs?: number;
  /** Where a line goes when a stream is closed for a client that stopped reading. */
  readonly log: (line: string) => void;
}

/**
 * The live streams of one viewer. Each waits for the socket to drain before it reads the next
 * batch from the store, so a client that does not read makes the viewer hold at most one batch
 * (plus the socket's own buffer) for it, and what it has not taken stays in the store; a client
 * that takes nothing for the stall time is cut off (its browser reconnects from the last seq it
 * received). At most `maxStreams` are open at once.
 */
export class LiveStreams {
  readonly #options: LiveStreamsOptions;
  readonly #max: number;
  readonly #stallMs: number;
  readonly #open = new Set<ServerResponse>();
  #waiting = 0;

  constructor(options: LiveStreamsOptions) {
    this.#options = options;
    this.#max = Math.max(1, options.maxStreams ?? MAX_LIVE_STREAMS);
    this.#stallMs = Math.max(0, options.stallMs ?? LIVE_STALL_MS);
  }

  /** What the streams hold now. */
  get stats(): LiveStats {
    let bufferedBytes = 0;
    for (const res of this.#open) bufferedBytes += res.writableLength;
    return { open: this.#open.size, waiting: this.#waiting, bufferedBytes };
  }

  /**
   * Streams a session's view items from `fromSeq` to `res` as `event: items` messages
   * (`{ items, nextSeq }`), one per batch the watch delivers, until the client goes away or
   * `stop` aborts (`event: end` `{reason: "closed"}`), or the session is deleted
   * (`{reason: "deleted"}`). The response head is written only once the watch is set up.
   * @throws HttpError LIVE_LIMIT when `maxStreams` streams are open; StorageError
   *   SESSION_NOT_FOUND for a session that is not there (both before the head: the caller
   *   answers them as JSON).
   */
  async serve(id: string, fromSeq: number, res: ServerResponse, stop: AbortSignal): Promise<void> {
    if (this.#open.size >= this.#max) {
      throw new HttpError(
        429,
        "LIVE_LIMIT",
        `expected at most ${this.#max} live streams open at once on this viewer, got a request for one more: close a view that follows a session`,
      );
    }
    this.#open.add(res);
    try {
      await this.#stream(id, fromSeq, res, stop);
    } finally {
      this.#open.delete(res);
    }
  }

  async #stream(id: string, fromSeq: number, res: ServerResponse, stop: AbortSignal) {
    const gone = new AbortController();
    const onStop = () => gone.abort();
    stop.addEventListener("abort", onStop);
    res.on("close", onStop);
    const watch = this.#options.store.watch(id, {
      fromSeq,
      signal: gone.signal,
      maxBatchEvents: LIVE_BATCH_EVENTS,
    });
    let ping: NodeJS.Timeout | undefined;
    try {
      const { header } = await watch.ready;
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-store",
        Connection: "keep-alive",
      });
      res.write(": seedline live\n\n");
      // A ping only goes out to a client that took everything: it is there to keep a quiet
      // stream open, not to add to what a client that stopped reading makes the viewer hold.
      ping = setInterval(() => {
        if (res.writableLength === 0) res.write(": ping\n\n");
      }, PING_MS);
      let builder: ViewItemBuilder | undefined;
      for await (const batch of watch) {
        if (batch.events.length > 0) {
          // The first batch may answer calls of a step that began before `fromSeq`.
          builder ??= new ViewItemBuilder(
            header,
            fromSeq > 0 && answersEarlierCalls(batch.events)
              ? { pendingCalls: await pendingCallsAt(this.#options.store, id, fromSeq) }
              : {},
          );
          // Long texts go as their heads, as in timeline pages: a batch of big outputs stays small.
          const items = cutTexts([...builder.add(batch.events), ...builder.flush()]);
          if (!(await this.#send(res, "items", { items, nextSeq: batch.nextSeq }))) {
            this.#options.log(
              `seedline ui: closed the live stream of ${id}: expected its client to take what was sent, but ${res.writableLength} bytes waited ${this.#stallMs} ms (a stream holds at most one batch of ${LIVE_BATCH_EVENTS} events unsent); the client may reconnect from seq ${batch.nextSeq}`,
            );
            res.destroy();
            return;
          }
        }
        if (batch.deleted === true) {
          await this.#send(res, "end", { reason: "deleted" });
          return;
        }
      }
      if (!res.destroyed) await this.#send(res, "end", { reason: "closed" });
    } catch (error) {
      if (!res.headersSent) throw error;
      // The head went out: the stream can only say it ended.
      const reason = hasCode(error, "SESSION_NOT_FOUND") ? "deleted" : "error";
      if (!res.destroyed) await this.#send(res, "end", { reason });
    } finally {
      if (ping !== undefined) clearInterval(ping);
      stop.removeEventListener("abort", onStop);
      res.off("close", onStop);
      await watch.return();
      if (res.headersSent && !res.destroyed) res.end();
    }
  }

  /**
   * Writes one message; resolves once the socket took it (true), the client went away (true:
   * the caller sees the stream closed), or it took nothing for the stall time (false).
   */
  async #send(res: ServerResponse, event: string, data: unknown): Promise<boolean> {
    if (res.destroyed) return true;
    if (res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) return true;
    this.#waiting += 1;
    try {
      return await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          res.off("drain", onDrain);
          res.off("close", onClose);
          resolve(ok);
        };
        const onDrain = () => done(true);
        const onClose = () => done(true);
        const timer = setTimeout(() => done(false), this.#stallMs);
        res.on("drain", onDrain);
        res.on("close", onClose);
      });
    } finally {
      this.#waiting -= 1;
    }
  }
}
