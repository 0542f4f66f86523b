// SessionStore: sessions over a backend — create, load (with crash repair), append, fork, list, delete.
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  InvalidEventError,
  SeedlineError,
  SessionForkError,
  StorageError,
  show,
} from "../errors.js";
import {
  type CreateSessionOptions,
  type DerivedMessage,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateAbsolutePath,
  validateCreateSessionOptions,
  validateSessionHeader,
  validateSessionId,
} from "../generated.js";
import { lastTurnMarkerAt, resolveForkBoundary } from "../log/fork-rules.js";
import { checkFormatVersion } from "../log/format-version.js";
import { TakenBatch } from "../log/invariants.js";
import { formatEventLine, formatHeaderLine } from "../log/jsonl-codec.js";
import { closersFor } from "../log/repair.js";
import { SessionLog } from "../log/session-log.js";
import { KeyedQueue } from "../util/keyed-queue.js";
import type { ListPage, ListQuery, ReleaseLock, SessionBackend, StoredLog } from "./backend.js";
import { parseLogText } from "./jsonl/log-reader.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "./list-limit.js";
import { MemoryBackend } from "./memory-backend.js";
import { SessionWatch, type WatchOptions } from "./session-watch.js";
import { sessionNotFound, sessionTaken } from "./storage-errors.js";

/** How a store is set up. */
export interface SessionStoreOptions {
  /** Where sessions are kept; defaults to a new in-memory backend. */
  readonly backend?: SessionBackend;
  /** The clock for `createdAt` (epoch ms); defaults to `Date.now`. */
  readonly now?: () => number;
  /** Makes ids for sessions created without one; defaults to random UUID v4. */
  readonly newId?: () => string;
}

/** Options of a fork beyond source and boundary. */
export interface ForkOptions {
  /** The child's working directory (absolute); defaults to the source's. */
  readonly cwd?: string;
}

interface LiveState {
  readonly log: SessionLog;
  /**
   * The writer lock, while this process writes the session; absent for a session this process
   * only reads (a cached view, brought up to date from the store before every read).
   */
  release: ReleaseLock | undefined;
}

/**
 * A session as the store holds it. Its events are frozen; it changes only through `append`.
 * A `Session` stays the store's current instance for its id until the session is deleted or
 * unloaded; after that, store operations given this object fail with `SESSION_NOT_LIVE`.
 */
export class Session {
  readonly store: SessionStore;
  readonly #log: SessionLog;

  /** @internal Sessions are made by a `SessionStore`. */
  constructor(store: SessionStore, log: SessionLog) {
    this.store = store;
    this.#log = log;
  }

  get id(): string {
    return this.#log.header.id;
  }

  get header(): SessionHeader {
    return this.#log.header;
  }

  /** Every event, frozen, inherited ones included. */
  get events(): readonly SessionEvent[] {
    return this.#log.events;
  }

  /** The number of events: the seq the next append must start at. */
  get nextSeq(): number {
    return this.#log.length;
  }

  /** How many leading events were inherited (the header's `seedLength`, 0 when absent). */
  get seedLength(): number {
    return this.#log.header.seedLength ?? 0;
  }

  /**
   * The turn left open at the end of the log, if any: a turn in progress, or one whose writer died
   * (a reader sees it as stored; only the next writer closes it).
   */
  get openTurn(): number | undefined {
    return this.#log.openTurn;
  }

  /** The events with seqs `from` (inclusive) to `to` (exclusive), frozen; a copy of just that range. */
  eventsBetween(from: number, to?: number): readonly SessionEvent[] {
    return this.#log.range(from, to);
  }

  /** The session's own events: those after the inherited prefix. */
  ownEvents(): readonly SessionEvent[] {
    return this.#log.events.slice(this.seedLength);
  }

  /** The model-facing messages derived from the surface (of the whole log, or through `throughSeq`). */
  deriveMessages(throughSeq?: number): readonly DerivedMessage[] {
    return this.#log.deriveMessages(throughSeq);
  }

  /** Appends a batch through the store; see {@link SessionStore.append}. */
  append(events: readonly unknown[]): Promise<number> {
    return this.store.append(this, events);
  }

  /** @internal */
  get log(): SessionLog {
    return this.#log;
  }
}

/**
 * Sessions over a backend. Writes resolve once durable. Operations on one session run in call
 * order; different sessions proceed concurrently.
 */
export class SessionStore {
  readonly backend: SessionBackend;
  readonly #now: () => number;
  readonly #newId: () => string;
  readonly #live = new Map<string, Session>();
  readonly #state = new WeakMap<Session, LiveState>();
  readonly #queue = new KeyedQueue();
  /** Ids being created right now (by create or fork), so that two creators cannot both take one. */
  readonly #reserved = new Set<string>();

  constructor(options: SessionStoreOptions = {}) {
    this.backend = options.backend ?? new MemoryBackend();
    this.#now = options.now ?? Date.now;
    this.#newId = options.newId ?? randomUUID;
  }

  /**
   * Creates a session and stores it at once (its header alone when there is no seed), so every
   * process can list, read, watch and fork it before its first event. This process holds its
   * writer lock afterwards.
   * `meta.seedLength` is taken as given — never computed from the seed — and may not exceed it.
   * The seed is copied when this is called, like an appended batch; its seqs count up from 0.
   * @throws StorageError INVALID_PARAMS (id, options, cwd not absolute, seedLength), SESSION_ALREADY_EXISTS;
   *   InvalidEventError for a seed event that breaks a rule (seq-contiguous for a seed that does
   *   not count up from seq 0); StorageError FORMAT_UNSUPPORTED for an unknown type.
   */
  async create(id?: string, options: CreateSessionOptions = {}): Promise<Session> {
    const sessionId = id ?? this.#newId();
    checkSessionId(sessionId, "/sessionId");
    const { seed, ...rest } = options as { seed?: unknown };
    if (seed !== undefined && !Array.isArray(seed)) {
      throw invalidParams("/seed", `expected an array of events, got ${show(seed)}`);
    }
    if (!validateCreateSessionOptions(rest)) {
      const e = validateCreateSessionOptions.errors?.[0];
      throw invalidParams(
        e?.instancePath ?? "",
        `expected valid create options, got ${e?.message ?? "invalid"}`,
      );
    }
    const meta = options.meta ?? {};
    if (meta.cwd !== undefined && !validateAbsolutePath(meta.cwd)) {
      throw invalidParams("/meta/cwd", `expected an absolute cwd, got ${show(meta.cwd)}`);
    }
    checkText(meta.cwd, "/meta/cwd");
    checkText(meta.parentSession, "/meta/parentSession");
    const seedLength = meta.seedLength ?? 0;
    const seedCount = seed?.length ?? 0;
    if (seedLength > seedCount) {
      throw invalidParams(
        "/meta/seedLength",
        `expected a seedLength of at most ${seedCount} (the seed's length), got ${seedLength}`,
      );
    }
    const header = makeHeader({
      id: sessionId,
      createdAt: meta.createdAt ?? this.#now(),
      cwd: meta.cwd,
      parentSession: meta.parentSession,
      seedLength,
    });
    // Taken now, not when the create's turn comes: changing the caller's seed afterwards changes nothing.
    const taken = TakenBatch.take(seed ?? [], "copy");
    return this.#serial(sessionId, async () => {
      await this.#assertFree(sessionId);
      const log = SessionLog.fromSeed(header, taken);
      const release = await this.backend.lock(sessionId);
      try {
        await this.backend.create(header, log.events);
      } catch (error) {
        await release();
        throw error;
      }
      return this.#register(log, release);
    });
  }

  /**
   * The session with this id as the store holds it now, or undefined. Reading never takes, waits
   * for or blocks on the writer lock: the answer is current (every append acknowledged to any
   * process before this call is in it) but a log whose writer died inside a turn is returned as
   * stored, its turn open (`openTurn`); only a writer closes it ({@link openForWriting}, or the
   * next append). A session this process writes is answered from memory; any other is brought up
   * to date from the store, reading only what is new.
   * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async get(id: string): Promise<Session | undefined> {
    checkSessionId(id, "/sessionId");
    const live = this.#live.get(id);
    // The writer's memory is the store: nothing else can append while it holds the lock.
    if (live !== undefined && this.#state.get(live)?.release !== undefined && !this.#lost(id)) {
      return live;
    }
    return this.#serial(id, async () => (await this.#current(id))?.session);
  }

  /** Like {@link get}, but a missing session is an error. @throws StorageError SESSION_NOT_FOUND. */
  async load(id: string): Promise<Session> {
    const session = await this.get(id);
    if (session === undefined) throw sessionNotFound(id);
    return session;
  }

  /**
   * Opens a session for writing: takes its writer lock (kept until the session is unloaded,
   * deleted or the store closes), reads what other processes stored before letting go, and
   * repairs a log that ends inside a turn or in a torn tail (the closers are stored). Appending
   * does this by itself; call it to learn the repaired next seq first.
   * @throws StorageError SESSION_NOT_FOUND, SESSION_BUSY (another live process writes it),
   *   FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async openForWriting(id: string): Promise<Session> {
    checkSessionId(id, "/sessionId");
    return this.#serial(id, () => this.#writable(id));
  }

  /**
   * Watches a session: batches of new events, each event exactly once and in seq order, from
   * `fromSeq` (default: the current end) on, whichever process or machine appends them. The
   * iterator ends when `signal` aborts or `return` is called, and after a batch with `deleted`
   * when the session is deleted. See {@link SessionWatch}.
   * @throws StorageError INVALID_PARAMS at once for a bad id; SESSION_NOT_FOUND through `ready`.
   */
  watch(id: string, options: WatchOptions = {}): SessionWatch {
    checkSessionId(id, "/sessionId");
    const fromSeq = options.fromSeq;
    if (fromSeq !== undefined && (!Number.isSafeInteger(fromSeq) || fromSeq < 0)) {
      throw invalidParams("/fromSeq", `expected a seq (an integer >= 0), got ${show(fromSeq)}`);
    }
    return new SessionWatch(this, id, options);
  }

  /**
   * Appends a batch, all or nothing; resolves with the next seq once the batch is durable. A batch
   * that repeats stored events exactly (a retry) is acknowledged and changes nothing. The batch is
   * copied when this is called: what the caller does to its array or events afterwards changes
   * nothing stored. Takes the writer lock first when this process does not hold it (see
   * {@link openForWriting}).
   * @throws StorageError SEQ_CONFLICT, SESSION_NOT_FOUND, SESSION_BUSY, FORMAT_UNSUPPORTED,
   *   CORRUPT_LOG; InvalidEventError; SeedlineError SESSION_NOT_LIVE for a stale `Session` object;
   *   StorageUnavailableError STORAGE_UNAVAILABLE when the store cannot be reached, a connection
   *   broke or timed out, or the writer lock went with its connection: this process lets go of
   *   the writer lock, and the next write takes it again and reads what was stored meanwhile
   *   (a batch that landed unacknowledged, `commitUnknown`, is then acknowledged when retried).
   */
  async append(target: Session | string, events: readonly unknown[]): Promise<number> {
    if (!Array.isArray(events))
      throw invalidParams("/events", `expected an array of events, got ${show(events)}`);
    const id = typeof target === "string" ? target : this.#requireLive(target).id;
    checkSessionId(id, "/sessionId");
    // Copied and checked against the schema now, when called: changing the caller's array or
    // events afterwards changes nothing. The checks against the log run when the batch's turn
    // comes (they depend on what is stored then), and report a refused event in batch order.
    const batch = TakenBatch.take(events, "copy");
    return this.#serial(id, async () => {
      const session = await this.#writable(id);
      if (typeof target !== "string" && session !== target) throw notLive(id);
      const state = this.#requireState(session);
      const prepared = state.log.prepare(batch);
      if (prepared.events.length > 0) {
        try {
          await this.backend.append(id, prepared.fromSeq, prepared.events);
        } catch (error) {
          if (error instanceof StorageError && error.code === "STORAGE_UNAVAILABLE") {
            this.#letGo(state);
          }
          throw error;
        }
        state.log.commit(prepared);
      }
      return prepared.nextSeq;
    });
  }

  /**
   * Forks `source` at `boundary` (inclusive; defaults to its last event) into a new session whose
   * seed is a copy of events 0…boundary, durable before this resolves. Checks, in order:
   * SESSION_ALREADY_EXISTS (the child id), SESSION_NOT_FOUND (the source), SESSION_NOT_LIVE
   * (a stale `Session`), INVALID_BOUNDARY, OPEN_TURN. A stored source that is not loaded is forked
   * without loading it.
   * @returns the child's header (`parentSession` the source, `seedLength` the copied count).
   * @throws SessionForkError with those codes; StorageError INVALID_PARAMS for a bad id or cwd.
   */
  async fork(
    source: Session | string,
    boundary?: number,
    childSessionId?: string,
    options: ForkOptions = {},
  ): Promise<SessionHeader> {
    const childId = childSessionId ?? this.#newId();
    checkSessionId(childId, "/childSessionId");
    // Read once, now: the cwd checked here is the one stored, whatever the caller changes meanwhile.
    const cwd = options.cwd;
    if (cwd !== undefined && !validateAbsolutePath(cwd)) {
      throw invalidParams("/cwd", `expected an absolute cwd, got ${show(cwd)}`);
    }
    checkText(cwd, "/cwd");
    const sourceId = typeof source === "string" ? source : source.id;
    checkSessionId(sourceId, "/sessionId");
    if (this.#reserved.has(childId)) throw forkChildTaken(childId);
    this.#reserved.add(childId);
    try {
      return await this.#serial(sourceId, async () => {
        if (this.#live.has(childId) || (await this.backend.has(childId)))
          throw forkChildTaken(childId);
        const live = this.#live.get(sourceId);
        const stored = live === undefined ? await this.backend.has(sourceId) : true;
        if (live === undefined && !stored) {
          throw new SessionForkError(
            "SESSION_NOT_FOUND",
            `expected a session ${show(sourceId)} to fork, found none`,
            {
              sessionId: sourceId,
            },
          );
        }
        if (typeof source !== "string" && live !== source) {
          throw new SessionForkError(
            "SESSION_NOT_LIVE",
            `expected the store's current Session for ${show(sourceId)}, got a stale or detached one`,
            { sessionId: sourceId },
          );
        }
        // Only a session this process writes is current in memory; any other is asked of the store.
        const liveState = live === undefined ? undefined : this.#requireState(live);
        const liveLog = liveState?.release === undefined ? undefined : liveState.log;
        let at: number;
        let sourceHeader: SessionHeader;
        if (liveLog) {
          at = resolveForkBoundary(liveLog.length, boundary, (b) =>
            lastTurnMarkerAt(liveLog.events, b),
          );
          sourceHeader = liveLog.header;
        } else {
          const asked =
            typeof boundary === "number" && Number.isSafeInteger(boundary) && boundary >= 0
              ? boundary
              : undefined;
          const point = await this.backend.forkPoint(sourceId, asked);
          if (point === undefined) {
            throw new SessionForkError(
              "SESSION_NOT_FOUND",
              `expected a session ${show(sourceId)} to fork, found none`,
              {
                sessionId: sourceId,
              },
            );
          }
          at = resolveForkBoundary(point.length, boundary, () => point.marker);
          sourceHeader = point.header;
        }
        const header = makeHeader({
          id: childId,
          createdAt: this.#now(),
          cwd: cwd ?? sourceHeader.cwd,
          parentSession: sourceId,
          seedLength: at + 1,
        });
        const release = await this.backend.lock(childId);
        try {
          await this.backend.fork(sourceId, at, header);
        } catch (error) {
          await release();
          throw error;
        }
        if (liveLog) {
          this.#register(
            SessionLog.fromValidEvents(header, liveLog.events.slice(0, at + 1)),
            release,
          );
        } else {
          await release();
        }
        return header;
      });
    } finally {
      this.#reserved.delete(childId);
    }
  }

  /**
   * The session as JSONL text: the header line, then one line per event. For logs in canonical
   * form (what `JSON.stringify` writes) this is byte-identical to what was imported.
   * @throws StorageError SESSION_NOT_FOUND, FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async exportLog(id: string): Promise<string> {
    const session = await this.load(id);
    return formatHeaderLine(session.header) + session.events.map(formatEventLine).join("");
  }

  /**
   * Stores a session from JSONL text (header line + events) at once, a header-only log too, with
   * its header as written (lineage and `seedLength` kept), or under `sessionId` when given.
   * @returns the stored header.
   * @throws StorageError CORRUPT_LOG (a missing or bad header, a bad line: nothing is dropped on
   *   import), FORMAT_UNSUPPORTED, SESSION_ALREADY_EXISTS, INVALID_PARAMS; InvalidEventError.
   */
  async importLog(text: string, options: { sessionId?: string } = {}): Promise<SessionHeader> {
    const location =
      options.sessionId === undefined
        ? "imported log"
        : `imported log for ${show(options.sessionId)}`;
    const parsed = parseLogText(text.endsWith("\n") ? text : `${text}\n`, location);
    if (parsed.tornTail) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected every line of the ${location} to be an event, got a bad line after line ${parsed.events.length + 1}`,
        {
          location,
          line: parsed.events.length + 2,
        },
      );
    }
    const header: SessionHeader =
      options.sessionId === undefined ? parsed.header : { ...parsed.header, id: options.sessionId };
    checkSessionId(header.id, options.sessionId === undefined ? "/log" : "/sessionId");
    checkText(header.cwd, "/log");
    checkText(header.parentSession, "/log");
    if ((header.seedLength ?? 0) > parsed.events.length) {
      throw invalidParams(
        "/log",
        `expected a seedLength of at most ${parsed.events.length} (the log's length), got ${header.seedLength}`,
      );
    }
    return this.#serial(header.id, async () => {
      await this.#assertFree(header.id);
      const log = SessionLog.fromSeed(header, parsed.events, "parsed");
      const release = await this.backend.lock(header.id);
      try {
        await this.backend.create(log.header, log.events);
      } finally {
        await release();
      }
      return log.header;
    });
  }

  /**
   * One page of stored sessions, newest first, as the store holds them now (every process's):
   * `limit` of them ({@link DEFAULT_LIST_LIMIT} when absent, at most {@link MAX_LIST_LIMIT}).
   * @throws StorageError INVALID_PARAMS for a limit out of range or a cursor `list` did not issue.
   */
  async list(query: Partial<ListQuery> = {}): Promise<ListPage> {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    checkListLimit(limit);
    return this.backend.list({ ...query, limit });
  }

  /**
   * Deletes a session. Its children keep their own copies of the inherited prefix.
   * @throws StorageError SESSION_NOT_FOUND; SESSION_BUSY when another live process writes it.
   */
  async delete(id: string): Promise<void> {
    checkSessionId(id, "/sessionId");
    await this.#serial(id, async () => {
      const live = this.#live.get(id);
      const state = live && this.#state.get(live);
      if (state?.release === undefined && !(await this.backend.has(id))) throw sessionNotFound(id);
      const release = state?.release ?? (await this.backend.lock(id));
      // Forgotten before the delete: a read answered from this process's memory (the writer's
      // fast path) must not outlive the stored session, e.g. for a watch told of the delete.
      this.#live.delete(id);
      try {
        if (!(await this.backend.delete(id))) throw sessionNotFound(id);
      } finally {
        await release();
      }
    });
  }

  /** Forgets a live session and releases its writer lock; its `Session` objects become stale. */
  async unload(id: string): Promise<void> {
    await this.#serial(id, () => this.#unregister(id));
  }

  /** The ids of the sessions this store holds live. */
  liveIds(): string[] {
    return [...this.#live.keys()];
  }

  /** Releases every lock and closes the backend. */
  async close(): Promise<void> {
    for (const id of [...this.#live.keys()]) await this.unload(id);
    await this.backend.close();
  }

  /**
   * The session as stored now, brought up to date from the store (a cached view reads only what
   * is new), with whether a torn tail follows its intact events. Undefined when it is not stored;
   * a session deleted elsewhere is dropped from the cache.
   */
  async #current(id: string): Promise<{ session: Session; tornTail: boolean } | undefined> {
    const live = this.#live.get(id);
    const state = live === undefined ? undefined : this.#state.get(live);
    const known = state?.log.length ?? 0;
    const stored = await this.backend.loadFrom(id, known);
    if (stored === undefined) {
      if (live !== undefined) await this.#unregister(id);
      return undefined;
    }
    const location = `session ${show(id)} (${this.backend.kind})`;
    if (
      live !== undefined &&
      state !== undefined &&
      stored.from === known &&
      isDeepStrictEqual(stored.header, state.log.header)
    ) {
      if (stored.events.length > 0) extendStored(state.log, stored.events, location);
      return { session: live, tornTail: stored.tornTail };
    }
    // Not cached, or the stored log no longer extends the cached one (deleted and created again):
    // build it afresh from the whole log; an old `Session` object becomes stale.
    const whole = stored.from === 0 ? stored : await this.backend.loadFrom(id, 0);
    if (whole === undefined) {
      if (live !== undefined) await this.#unregister(id);
      return undefined;
    }
    const log = logFromStored(whole, location);
    const release = state?.release;
    if (live !== undefined) this.#live.delete(id);
    return { session: this.#register(log, release), tornTail: whole.tornTail };
  }

  /**
   * The session, held for writing: the lock is taken first when this process does not hold it —
   * a log read before it could miss a batch another process appends (and acknowledges) before
   * letting go, and repairing that stale read would cut it — then the log is brought up to date
   * and an interrupted turn or torn tail is repaired. Runs inside the id's queue.
   */
  async #writable(id: string): Promise<Session> {
    const live = this.#live.get(id);
    const held = live === undefined ? undefined : this.#state.get(live);
    if (live !== undefined && held?.release !== undefined) {
      if (!this.#lost(id)) return live;
      // The lock went with its connection: taken again below, and the log read again.
      this.#letGo(held);
    }
    const release = await this.backend.lock(id);
    try {
      const current = await this.#current(id);
      if (current === undefined) throw sessionNotFound(id);
      const state = this.#requireState(current.session);
      const log = state.log;
      const closers = closersFor(log.stateCopy(), log.at(log.length - 1)?.time ?? 0);
      if (closers.length > 0 || current.tornTail) {
        await this.backend.repair(id, log.length, closers);
        log.append(closers, "parsed");
      }
      state.release = release;
      return current.session;
    } catch (error) {
      await release();
      throw error;
    }
  }

  #register(log: SessionLog, release: ReleaseLock | undefined): Session {
    const session = new Session(this, log);
    this.#live.set(log.header.id, session);
    this.#state.set(session, { log, release });
    return session;
  }

  /** Whether the backend says the writer lock this process held on `id` is gone. */
  #lost(id: string): boolean {
    return this.backend.lockLost?.(id) === true;
  }

  /**
   * Lets go of the writer lock of a live session after its store failed (the lock may be gone
   * with its connection, or the batch may have landed unacknowledged): the session stays live,
   * and the next write takes the lock again and reads the store first, like a session opened
   * anew — another process may have written it meanwhile.
   */
  #letGo(state: { release: ReleaseLock | undefined }): void {
    const release = state.release;
    state.release = undefined;
    // Not waited for: with the store unreachable the release itself waits out a timeout, and the
    // caller should hear the failure now. The backend's lock operations run in order, so a later
    // take of the lock follows this release.
    release?.().catch(() => {});
  }

  async #unregister(id: string): Promise<void> {
    const live = this.#live.get(id);
    if (live === undefined) return;
    this.#live.delete(id);
    await this.#state.get(live)?.release?.();
  }

  async #assertFree(id: string): Promise<void> {
    if (this.#live.has(id) || this.#reserved.has(id) || (await this.backend.has(id))) {
      throw sessionTaken(id);
    }
  }

  #requireLive(session: Session): Session {
    if (session.store !== this || this.#live.get(session.id) !== session) throw notLive(session.id);
    return session;
  }

  #requireState(session: Session): LiveState {
    const state = this.#state.get(this.#requireLive(session));
    if (state === undefined) throw new Error(`no state for live session ${show(session.id)}`);
    return state;
  }

  /** Runs `task` after every earlier task of the same id. */
  #serial<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.#queue.run(id, task);
  }
}

/** The header of a new session, in the schema's member order; `seedLength` only when above 0. */
function makeHeader(fields: {
  id: string;
  createdAt: number;
  cwd?: string | undefined;
  parentSession?: string | undefined;
  seedLength?: number | undefined;
}): SessionHeader {
  if (!Number.isSafeInteger(fields.createdAt) || fields.createdAt < 0) {
    throw invalidParams(
      "/meta/createdAt",
      `expected a non-negative safe integer createdAt, got ${show(fields.createdAt)}`,
    );
  }
  return {
    version: SESSION_FORMAT_VERSION,
    id: fields.id,
    createdAt: fields.createdAt,
    ...(fields.cwd === undefined ? {} : { cwd: fields.cwd }),
    ...(fields.parentSession === undefined ? {} : { parentSession: fields.parentSession }),
    ...(fields.seedLength ? { seedLength: fields.seedLength } : {}),
  };
}

function checkSessionId(id: unknown, instancePath: string): asserts id is string {
  if (!validateSessionId(id) || !isWellFormed(id)) {
    throw invalidParams(
      instancePath,
      `expected a session id (1 to 256 UTF-16 units, no control characters, well-formed Unicode), got ${show(id)}`,
    );
  }
}

/**
 * Header text must be well-formed Unicode: PostgreSQL and SQLite store text as UTF-8, where a
 * lone surrogate becomes U+FFFD, so `"s\udbff"` and `"s\ufffd"` would name one session. (Event
 * data keeps lone surrogates exactly: it is stored as escaped JSON text.)
 */
function checkText(value: string | undefined, instancePath: string): void {
  if (value !== undefined && !isWellFormed(value)) {
    throw invalidParams(
      instancePath,
      `expected well-formed Unicode text (no lone UTF-16 surrogate), got ${show(value)}`,
    );
  }
}

/** A lone (unpaired) UTF-16 surrogate. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` holds no lone surrogate (`String.prototype.isWellFormed`, ES2024). */
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

function invalidParams(instancePath: string, message: string): StorageError<"INVALID_PARAMS"> {
  return new StorageError("INVALID_PARAMS", message, { errors: [{ instancePath, message }] });
}

function forkChildTaken(id: string): SessionForkError<"SESSION_ALREADY_EXISTS"> {
  return new SessionForkError(
    "SESSION_ALREADY_EXISTS",
    `expected a new child id, got ${show(id)} which is taken`,
    {
      sessionId: id,
    },
  );
}

function notLive(id: string): SeedlineError<"SESSION_NOT_LIVE"> {
  return new SeedlineError(
    "SESSION_NOT_LIVE",
    `expected the store's current Session for ${show(id)}, got a stale or detached one`,
    { sessionId: id },
  );
}

/** A log from a whole stored log, checked: anything the invariants refuse is damage (CORRUPT_LOG). */
function logFromStored(stored: StoredLog, location: string): SessionLog {
  checkFormatVersion(stored.header, location);
  if (!validateSessionHeader(stored.header)) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a valid header in ${location}, got ${show(stored.header)}`,
      { location },
    );
  }
  if ((stored.header.seedLength ?? 0) > stored.events.length) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected at least seedLength ${stored.header.seedLength} events in ${location}, got ${stored.events.length}`,
      { location },
    );
  }
  return asCorruption(location, () => SessionLog.fromSeed(stored.header, stored.events, "parsed"));
}

/** Extends a log with events another process stored after it, checked like any stored event. */
function extendStored(log: SessionLog, events: unknown[], location: string): void {
  asCorruption(location, () => log.append(events, "parsed"));
}

/** Runs `read`, turning a broken rule in stored events into CORRUPT_LOG. */
function asCorruption<T>(location: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof InvalidEventError) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected a valid stored log in ${location}: ${error.message}`,
        { location, seq: error.seq, rule: error.rule },
        { cause: error },
      );
    }
    throw error;
  }
}
