// The live sessions of a store: one Session per id it holds, with its running state and writer lock, the locks' LRU, the turns let go of, and the queue that orders each id's operations.
import { StorageError, show } from "../../errors.js";
import type { TakenBatch } from "../../log/invariants.js";
import type { SessionLog } from "../../log/session-log.js";
import { KeyedQueue } from "../../util/keyed-queue.js";
import type { ReleaseLock, SessionBackend } from "../backend.js";
import { sessionNotFound, sessionTaken } from "../errors/storage-errors.js";
import { notLive } from "./checks.js";
import { repairOpened } from "./inputs.js";
import { type LiveState, type OpenedSession, Session, type SessionHost } from "./session.js";
import { storedLog } from "./stored-log.js";
import type { TextBudget } from "./text-budget.js";
import { LetGoTurns, LockedSessions } from "./writer-locks.js";

/**
 * The sessions a store holds live, and what it keeps of each besides the `Session`: its running
 * log and, while this process writes it, its writer lock — at most `maxWriterLocks` of them, the
 * least recently written letting go first. Every operation on an id runs in that id's queue
 * ({@link serial}), so operations on one session run in call order and different sessions
 * proceed concurrently.
 */
export class LiveSessions {
  readonly #backend: SessionBackend;
  readonly #host: SessionHost;
  readonly #live = new Map<string, Session>();
  readonly #state = new WeakMap<Session, LiveState>();
  readonly #queue = new KeyedQueue();
  /** Ids being created right now (by create or fork), so that two creators cannot both take one. */
  readonly reserved = new Set<string>();
  /** The ids whose writer lock this store holds, least recently written first. */
  readonly #locked: LockedSessions;
  /** Open turns this store let go of the lock of, by id, longest ago first (see {@link LetGoTurns}). */
  readonly #letGoTurns = new LetGoTurns();
  /** The unpacked message text of the live logs, held to the store's budget. */
  readonly #text: TextBudget;

  constructor(
    backend: SessionBackend,
    host: SessionHost,
    maxWriterLocks: number,
    text: TextBudget,
  ) {
    this.#backend = backend;
    this.#host = host;
    this.#locked = new LockedSessions(maxWriterLocks);
    this.#text = text;
  }

  /** Runs `task` after every earlier task of the same id. */
  serial<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.#queue.run(id, task);
  }

  /** The live session of `id`, if this store holds one. */
  session(id: string): Session | undefined {
    return this.#live.get(id);
  }

  /** The ids of the sessions held live. */
  ids(): string[] {
    return [...this.#live.keys()];
  }

  /**
   * The state of the session this process writes now (holding its writer lock, which the backend
   * has not lost), or undefined: the writer's memory is the store, nothing else can append.
   */
  writing(id: string): { session: Session; state: LiveState } | undefined {
    const session = this.#live.get(id);
    const state = session === undefined ? undefined : this.#state.get(session);
    if (session === undefined || state?.release === undefined || this.#lost(id)) return undefined;
    return { session, state };
  }

  /**
   * The session as stored now, brought up to date from the store (a cached view reads only what
   * is new, see {@link storedLog}), with whether a torn tail follows its intact events. Undefined
   * when it is not stored; a session deleted elsewhere is dropped from the cache.
   */
  async current(id: string): Promise<{ session: Session; tornTail: boolean } | undefined> {
    const live = this.#live.get(id);
    const state = live === undefined ? undefined : this.#state.get(live);
    const read = await storedLog(this.#backend, id, state?.log);
    if (read === undefined) {
      if (live !== undefined) await this.unregister(id);
      this.#letGoTurns.forget(id);
      return undefined;
    }
    if (!read.fresh && live !== undefined) return { session: live, tornTail: read.tornTail };
    const release = state?.release;
    if (live !== undefined) this.#live.delete(id);
    return { session: this.register(read.log, release), tornTail: read.tornTail };
  }

  /**
   * The session, held for writing: the lock is taken first when this process does not hold it —
   * a log read before it could miss a batch another process appends (and acknowledges) before
   * letting go, and repairing that stale read would cut it — then the log is brought up to date
   * and an interrupted turn (not one of this store's own, see {@link LetGoTurns}) or torn tail is
   * repaired. Runs inside the id's queue.
   */
  async writable(id: string): Promise<OpenedSession> {
    const live = this.#live.get(id);
    const held = live === undefined ? undefined : this.#state.get(live);
    if (live !== undefined && held?.release !== undefined) {
      if (!this.#lost(id)) {
        this.written(id);
        return { session: live, repaired: false };
      }
      // The lock went with its connection: taken again below, and the log read again.
      this.#letGo(id, held);
    }
    const release = await this.#backend.lock(id);
    try {
      const current = await this.current(id);
      if (current === undefined) throw sessionNotFound(id);
      const state = this.#requireState(current.session);
      const log = state.log;
      // A turn this store left open when it let go of the lock (unloaded too) is its own, going
      // on: closed only when another process wrote the log meanwhile (as a log whose writer died is).
      const own = this.#letGoTurns.takeOwn(id, log);
      const repaired = await repairOpened(this.#backend, log, current.tornTail, own);
      state.release = release;
      this.written(id);
      return { session: current.session, repaired };
    } catch (error) {
      await release();
      throw error;
    }
  }

  /**
   * Appends a taken batch to the session held for writing (taking it first, see
   * {@link writable}), inside the id's queue; `target`, when a `Session`, must still be the live
   * one. A batch that repeats stored events exactly is acknowledged and changes nothing. After a
   * STORAGE_UNAVAILABLE the session lets go of its lock; after a SEQ_CONFLICT on the first try
   * (an append of its own, reported as possibly landed, landed since) the state catches up and
   * the batch is tried once more.
   * @returns the next seq.
   */
  async append(id: string, target: Session | string, batch: TakenBatch): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const { session } = await this.writable(id);
      if (typeof target !== "string" && session !== target) throw notLive(id);
      const state = this.#requireState(session);
      // A retry (a batch starting before the end) is compared with the stored events it repeats.
      const span = state.log.repeatedSpan(batch);
      const stored =
        span === undefined
          ? undefined
          : ((await this.#backend.loadFrom(id, span.from, span.count))?.events ?? []);
      const prepared = state.log.prepare(batch, "copy", stored);
      if (prepared.events.length > 0) {
        try {
          await this.#backend.append(id, prepared.fromSeq, prepared.serialized);
        } catch (error) {
          if (error instanceof StorageError && error.code === "STORAGE_UNAVAILABLE") {
            this.#letGo(id, state);
          } else if (
            attempt === 1 &&
            error instanceof StorageError &&
            error.code === "SEQ_CONFLICT"
          ) {
            // The stored log went past this store's state while it held the writer lock: an
            // append of its own reported as possibly landed (commitUnknown) landed since, after
            // this retry read the log. The state catches up and the batch is tried once more,
            // so that a repeat of what landed is acknowledged.
            await this.current(id);
            continue;
          }
          throw error;
        }
        state.log.commit(prepared, { pack: false });
        if (state.log.unpackedDerived > 0) this.#text.packLater(state.log);
        this.#text.keep(id, state.log);
      }
      return prepared.nextSeq;
    }
  }

  /**
   * Deletes a stored session under its writer lock (this process's, or taken for the delete),
   * forgetting it first: a read answered from this process's memory (the writer's fast path) must
   * not outlive the stored session, e.g. for a watch told of the delete. Inside the id's queue.
   * @throws StorageError SESSION_NOT_FOUND; SESSION_BUSY when another live process writes it.
   */
  async delete(id: string): Promise<void> {
    const live = this.#live.get(id);
    const state = live && this.#state.get(live);
    if (state?.release === undefined && !(await this.#backend.has(id))) throw sessionNotFound(id);
    const release = state?.release ?? (await this.#backend.lock(id));
    this.#live.delete(id);
    this.#locked.forget(id);
    this.#letGoTurns.forget(id);
    try {
      if (!(await this.#backend.delete(id))) throw sessionNotFound(id);
    } finally {
      await release();
    }
  }

  /**
   * The turn left open at the end of a session as stored now: a writer's from memory, any other
   * from the store's last turn marker. Undefined when no turn is open or there is no such session.
   */
  async openTurn(id: string): Promise<number | undefined> {
    const writing = this.writing(id);
    if (writing !== undefined) return writing.state.log.openTurn;
    const marker = (await this.#backend.forkPoint(id, undefined))?.marker;
    return marker?.type === "turn/start" ? marker.turn : undefined;
  }

  /**
   * Notes that `id` was just written under its lock; past the most locks held, the session
   * written least recently lets go of its lock (in its own queue, after whatever it is doing).
   */
  written(id: string): void {
    const oldest = this.#locked.written(id);
    if (oldest === undefined) return;
    this.serial(oldest, async () => {
      const live = this.#live.get(oldest);
      const state = live === undefined ? undefined : this.#state.get(live);
      if (state?.release === undefined || this.#locked.has(oldest)) return;
      const release = state.release;
      state.release = undefined;
      this.#letGoTurns.note(oldest, state.log);
      await release();
    }).catch(() => {});
  }

  /** Holds `log` live (with the writer lock `release`, when this process writes it). */
  register(log: SessionLog, release: ReleaseLock | undefined): Session {
    const session = new Session(this.#host, log);
    this.#live.set(log.header.id, session);
    this.#state.set(session, { log, release });
    // A seed taken from a caller keeps its messages as text.
    this.#text.keep(log.header.id, log);
    return session;
  }

  /**
   * Forgets a live session and lets go of its writer lock; with `keepTurn`, a turn it was writing
   * is remembered as its own (see {@link LetGoTurns.note}).
   */
  async unregister(id: string, keepTurn = false): Promise<void> {
    const live = this.#live.get(id);
    if (live === undefined) return;
    this.#live.delete(id);
    this.#locked.forget(id);
    this.#text.forget(id);
    const state = this.#state.get(live);
    if (keepTurn && state?.release !== undefined) this.#letGoTurns.note(id, state.log);
    await state?.release?.();
  }

  /** Forgets every turn let go of (the store is closing). */
  clearLetGo(): void {
    this.#letGoTurns.clear();
  }

  /** @throws StorageError SESSION_ALREADY_EXISTS when `id` is live, being created, or stored. */
  async assertFree(id: string): Promise<void> {
    if (this.#live.has(id) || this.reserved.has(id) || (await this.#backend.has(id))) {
      throw sessionTaken(id);
    }
  }

  /** `session` when it is this store's live instance. @throws SeedlineError SESSION_NOT_LIVE. */
  requireLive(session: Session): Session {
    if (session.store !== this.#host || this.#live.get(session.id) !== session) {
      throw notLive(session.id);
    }
    return session;
  }

  #requireState(session: Session): LiveState {
    const state = this.#state.get(this.requireLive(session));
    if (state === undefined) throw new Error(`no state for live session ${show(session.id)}`);
    return state;
  }

  /** Whether the backend says the writer lock this process held on `id` is gone. */
  #lost(id: string): boolean {
    return this.#backend.lockLost?.(id) === true;
  }

  /**
   * Lets go of the writer lock of a live session after its store failed (the lock may be gone
   * with its connection, or the batch may have landed unacknowledged): the session stays live,
   * and the next write takes the lock again and reads the store first, like a session opened
   * anew — another process may have written it meanwhile.
   */
  #letGo(id: string, state: LiveState): void {
    const release = state.release;
    state.release = undefined;
    this.#letGoTurns.note(id, state.log);
    // Not waited for: with the store unreachable the release itself waits out a timeout, and the
    // caller should hear the failure now. The backend's lock operations run in order, so a later
    // take of the lock follows this release.
    release?.().catch(() => {});
  }
}
