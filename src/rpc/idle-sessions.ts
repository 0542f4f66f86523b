// Unloads sessions the server has not used for a while, releasing their writer locks, so a long-running server stays small.
import type { SessionStore } from "../store/session-store.js";
import type { KeyedQueue } from "../util/keyed-queue.js";
import { orderingKeyOf } from "./ordering.js";

/** How long a session may sit unused before the server unloads it, unless told otherwise. */
export const DEFAULT_IDLE_MS = 60_000;

/** The params member that names a session, as the method table orders by it. */
const SESSION_MEMBER = "sessionId";

/**
 * Watches the store's live sessions. A session counts as used when a request names it (see
 * {@link touch}) and, for sessions a request loaded indirectly (a fork child, a replay tree),
 * from when a sweep first sees it. Every `idleMs / 2` a sweep unloads the sessions unused for
 * `idleMs` or more, each through the request queue of its id, so an unload never overlaps a
 * request on that session and a session with requests queued is left alone. A turn a client has
 * open (a tool still running) goes on after the unload: the store remembers it as its own.
 */
export class IdleSessions {
  readonly #store: SessionStore;
  readonly #queue: KeyedQueue;
  readonly #idleMs: number;
  readonly #log: (line: string) => void;
  readonly #now: () => number;
  readonly #lastUsed = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> = Promise.resolve();

  constructor(options: {
    store: SessionStore;
    queue: KeyedQueue;
    idleMs: number;
    log: (line: string) => void;
    now?: () => number;
  }) {
    this.#store = options.store;
    this.#queue = options.queue;
    this.#idleMs = options.idleMs;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  /** Starts sweeping; an infinite or non-positive `idleMs` never unloads anything. */
  start(): void {
    if (!Number.isFinite(this.#idleMs) || this.#idleMs <= 0 || this.#timer !== undefined) return;
    this.#timer = setInterval(
      () => {
        // Sweeps are chained, never overlapping, and `stop` awaits the chain.
        this.#sweeping = this.#sweeping
          .then(() => this.sweep())
          .catch((error: unknown) => this.#log(`idle sweep failed: ${String(error)}`));
      },
      Math.max(1, Math.floor(this.#idleMs / 2)),
    );
    this.#timer.unref();
  }

  /** Records a request's ordering key: when it names a session, that session is in use now. */
  noteRequest(member: string, value: string): void {
    if (member === SESSION_MEMBER) this.touch(value);
  }

  /** Records that a request names session `id` now. */
  touch(id: string): void {
    this.#lastUsed.set(id, this.#now());
  }

  /** Unloads every live session unused for `idleMs` or more. Failures are logged, not thrown. */
  async sweep(): Promise<void> {
    const now = this.#now();
    const live = new Set(this.#store.liveIds());
    for (const id of this.#lastUsed.keys()) if (!live.has(id)) this.#lastUsed.delete(id);
    for (const id of live) {
      const lastUsed = this.#lastUsed.get(id);
      if (lastUsed === undefined) {
        this.#lastUsed.set(id, now);
        continue;
      }
      const key = orderingKeyOf(SESSION_MEMBER, id);
      if (now - lastUsed < this.#idleMs || !this.#queue.isIdle(key)) continue;
      try {
        await this.#queue.run(key, async () => {
          // A request may have named it while this unload waited in the queue.
          if (this.#now() - (this.#lastUsed.get(id) ?? 0) < this.#idleMs) return;
          await this.#store.unload(id);
          this.#lastUsed.delete(id);
        });
      } catch (error) {
        this.#log(`could not unload idle session ${JSON.stringify(id)}: ${String(error)}`);
      }
    }
  }

  /** Stops sweeping and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }
}
