// The replays one connection has open: capped in number, expired when unused, dropped with the connection.
import { ReplayError, show } from "../errors.js";
import { RPC_METHOD, RPC_METHODS } from "../generated.js";
import type { ReplayModel } from "../replay/replay-model.js";
import type { KeyedQueue } from "../util/keyed-queue.js";
import { orderingKeyOf } from "./ordering.js";

/** How long a replay may go unused by replay/next before it expires, unless told otherwise. */
export const DEFAULT_REPLAY_IDLE_MS = 600_000;

/** How many replays one connection may keep open, unless told otherwise. */
export const DEFAULT_MAX_REPLAYS = 100;

/**
 * How many expired replay ids are remembered, so that a late replay/next can say its replay
 * expired; older ones answer as unknown ids. Bounded so that the memory of expiries cannot grow.
 */
const REMEMBERED_EXPIRIES = 1_000;

/** The params member replay requests are ordered by (the method table's). */
const REPLAY_MEMBER: string = RPC_METHODS[RPC_METHOD.replayNext].orderingKey;

/**
 * The open replays of one connection, by replay id. A replay counts as used when it is opened
 * and each time {@link use} serves it; one unused for `idleMs` expires (a sweep runs every
 * `idleMs / 2`, and opening a replay sweeps first), unless requests for it are queued. At most
 * `max` are open at once. {@link close} drops them all, for the end of the connection.
 */
export class OpenReplays {
  readonly #queue: KeyedQueue;
  readonly #idleMs: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #open = new Map<string, { readonly replay: ReplayModel; lastUsed: number }>();
  /** Expired ids, oldest first, at most {@link REMEMBERED_EXPIRIES}. */
  readonly #expired = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { queue: KeyedQueue; idleMs: number; max: number; now?: () => number }) {
    this.#queue = options.queue;
    this.#idleMs = options.idleMs;
    this.#max = options.max;
    this.#now = options.now ?? Date.now;
  }

  /** How many replays are open. */
  get size(): number {
    return this.#open.size;
  }

  /** Starts sweeping; an infinite or non-positive `idleMs` never expires anything. */
  start(): void {
    if (!this.#expires() || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sweep(), Math.max(1, Math.floor(this.#idleMs / 2)));
    this.#timer.unref();
  }

  /**
   * Throws unless another replay may be opened now (expired ones are swept first), so a
   * connection at its limit is refused before a replay is built for nothing.
   * @throws ReplayError REPLAY_LIMIT when `max` replays are open.
   */
  checkRoom(): void {
    this.sweep();
    if (this.#open.size >= this.#max) {
      throw new ReplayError(
        "REPLAY_LIMIT",
        `expected at most ${this.#max} open replay(s) on this connection, got a request for one more: close replays you are done with (${RPC_METHOD.replayClose})`,
        { limit: this.#max },
      );
    }
  }

  /**
   * Adds `replay` under `replayId`.
   * @throws ReplayError REPLAY_LIMIT when `max` replays are open (others may have been opened
   *   while this one was built).
   */
  add(replayId: string, replay: ReplayModel): void {
    this.checkRoom();
    this.#open.set(replayId, { replay, lastUsed: this.#now() });
  }

  /**
   * The replay `replayId`, counted as used now.
   * @throws ReplayError REPLAY_NOT_FOUND when no replay of that id is open; the message says
   *   whether it expired.
   */
  use(replayId: string): ReplayModel {
    const open = this.#open.get(replayId);
    if (open === undefined) throw this.#notFound(replayId);
    open.lastUsed = this.#now();
    return open.replay;
  }

  /**
   * Closes the replay `replayId`.
   * @throws ReplayError REPLAY_NOT_FOUND when no replay of that id is open.
   */
  delete(replayId: string): void {
    if (!this.#open.delete(replayId)) throw this.#notFound(replayId);
  }

  /** Expires every replay unused for `idleMs` or more with no request for it queued. */
  sweep(): void {
    if (!this.#expires()) return;
    const now = this.#now();
    for (const [replayId, open] of this.#open) {
      if (now - open.lastUsed < this.#idleMs) continue;
      // A replay/next waiting in the queue is about to use it.
      if (!this.#queue.isIdle(orderingKeyOf(REPLAY_MEMBER, replayId))) continue;
      this.#open.delete(replayId);
      this.#expired.add(replayId);
      if (this.#expired.size > REMEMBERED_EXPIRIES) {
        const oldest = this.#expired.values().next().value;
        if (oldest !== undefined) this.#expired.delete(oldest);
      }
    }
  }

  /** Stops sweeping and drops every replay: the connection is gone. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#open.clear();
    this.#expired.clear();
  }

  #expires(): boolean {
    return Number.isFinite(this.#idleMs) && this.#idleMs > 0;
  }

  #notFound(replayId: string): ReplayError<"REPLAY_NOT_FOUND"> {
    const message = this.#expired.has(replayId)
      ? `expected an open replay, got ${show(replayId)}, which expired after ${this.#idleMs} ms unused by ${RPC_METHOD.replayNext}: open it again with ${RPC_METHOD.replayOpen}`
      : `expected an open replay, got ${show(replayId)}`;
    return new ReplayError("REPLAY_NOT_FOUND", message, { replayId });
  }
}
