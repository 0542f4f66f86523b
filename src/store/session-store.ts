// SessionStore: sessions over a backend — create, load (with crash repair), append, fork, list, delete.
import { randomUUID } from "node:crypto";
import { show } from "../errors.js";
import type {
  CreateSessionOptions,
  DerivedMessage,
  SessionEvent,
  SessionHeader,
  SessionSearchResult,
} from "../generated.js";
import { TakenBatch } from "../log/invariants.js";
import { SessionLog } from "../log/session-log.js";
import type { ListQuery, SessionBackend } from "./backend.js";
import { invalidParams, sessionNotFound } from "./errors/storage-errors.js";
import { DEFAULT_LIST_LIMIT } from "./listing/list-limit.js";
import type { SearchOptions } from "./listing/search.js";
import { MemoryBackend } from "./memory/memory-backend.js";
import { checkSeq, type EventPage, type ReadOptions } from "./reads/event-pages.js";
import { StoreCatalog } from "./session-store/catalog.js";
import { checkSessionId, storeLimits } from "./session-store/checks.js";
import { forkSession } from "./session-store/fork.js";
import { createdSessionOf, importedLogOf, storeWhole } from "./session-store/inputs.js";
import { LiveSessions } from "./session-store/live-sessions.js";
import type {
  AppendOptions,
  ForkOptions,
  SessionStoreOptions,
  StoreListPage,
} from "./session-store/options.js";
import { type EventRange, PagedReads } from "./session-store/paged-reads.js";
import { type OpenedSession, Session, type SessionHost } from "./session-store/session.js";
import { TextBudget } from "./session-store/text-budget.js";
import { SessionWatch, type WatchOptions } from "./watch/session-watch.js";

export type {
  AppendOptions,
  ForkOptions,
  SessionStoreOptions,
  StoreListedSession,
  StoreListPage,
} from "./session-store/options.js";

export { type EventRange, type OpenedSession, Session, type SessionHost };

/**
 * Sessions over a backend. Writes resolve once durable. Operations on one session run in call
 * order; different sessions proceed concurrently.
 */
export class SessionStore implements SessionHost {
  readonly backend: SessionBackend;
  readonly #now: () => number;
  readonly #newId: () => string;
  /** The sessions held live, their writer locks and the queue of each id (see {@link LiveSessions}). */
  readonly #sessions: LiveSessions;
  /** The reads of stored sessions, page by page. */
  readonly #reads: PagedReads;
  /** What the store knows of its sessions beyond their logs: listing, titles, id prefixes, search. */
  readonly #catalog: StoreCatalog;

  constructor(options: SessionStoreOptions = {}) {
    this.backend = options.backend ?? new MemoryBackend();
    this.#now = options.now ?? Date.now;
    this.#newId = options.newId ?? randomUUID;
    const { maxWriterLocks, unpackedTextBudget } = storeLimits(options);
    const text = new TextBudget(unpackedTextBudget);
    this.#sessions = new LiveSessions(this.backend, this, maxWriterLocks, text);
    this.#reads = new PagedReads(this.backend);
    this.#catalog = new StoreCatalog(this.backend);
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
  async create(options: CreateSessionOptions = {}): Promise<Session> {
    const { header, seed } = createdSessionOf(options, this.#newId, this.#now);
    const sessionId = header.id;
    // Taken now, not when the create's turn comes: changing the caller's seed afterwards changes nothing.
    const taken = TakenBatch.take(seed ?? [], "copy");
    return this.#sessions.serial(sessionId, async () => {
      await this.#sessions.assertFree(sessionId);
      const log = new SessionLog(header);
      const events = log.admitSerialized(taken);
      const release = await this.backend.lock(sessionId);
      try {
        await this.backend.create(header, events);
      } catch (error) {
        await release();
        throw error;
      }
      const session = this.#sessions.register(log, release);
      this.#sessions.written(sessionId);
      return session;
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
    // The writer's memory is the store: nothing else can append while it holds the lock.
    const writing = this.#sessions.writing(id);
    if (writing !== undefined) return writing.session;
    return this.#sessions.serial(id, async () => (await this.#sessions.current(id))?.session);
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
   * repairs a log that ends inside a turn or in a torn tail (the closers are stored) — unless the
   * turn is one this store let go of and no other process wrote the log since: that turn goes on.
   * Appending does this by itself; call it to learn the repaired next seq first. {@link open} does
   * the same and also tells whether it repaired.
   * @throws StorageError SESSION_NOT_FOUND, SESSION_BUSY (another live process writes it),
   *   FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async openForWriting(id: string): Promise<Session> {
    return (await this.open(id)).session;
  }

  /**
   * {@link openForWriting}, answering also whether this open stored a repair (`session/open` over
   * RPC). Opening a session this store already holds for writing repairs nothing.
   * @throws StorageError as {@link openForWriting} does.
   */
  async open(id: string): Promise<OpenedSession> {
    checkSessionId(id, "/sessionId");
    return this.#sessions.serial(id, () => this.#sessions.writable(id));
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
    if (options.fromSeq !== undefined) checkSeq(options.fromSeq, "/fromSeq");
    return new SessionWatch(this, id, options);
  }

  /**
   * Appends a batch, all or nothing; resolves with the next seq once the batch is durable. A batch
   * that repeats stored events exactly (a retry) is acknowledged and changes nothing. The batch is
   * checked against the schema and serialized when this is called (the events themselves are not
   * kept): what the caller does to its array or events afterwards changes nothing stored. Takes the writer lock first when this process does not hold it (see
   * {@link openForWriting}).
   * @throws StorageError SEQ_CONFLICT, SESSION_NOT_FOUND, SESSION_BUSY, FORMAT_UNSUPPORTED,
   *   CORRUPT_LOG; InvalidEventError; SeedlineError SESSION_NOT_LIVE for a stale `Session` object;
   *   StorageUnavailableError STORAGE_UNAVAILABLE when the store cannot be reached, a connection
   *   broke or timed out, or the writer lock went with its connection: this process lets go of
   *   the writer lock, and the next write takes it again and reads what was stored meanwhile
   *   (a batch that landed unacknowledged, `commitUnknown`, is then acknowledged when retried).
   */
  async append(
    target: Session | string,
    events: readonly unknown[],
    options: AppendOptions = {},
  ): Promise<number> {
    if (!Array.isArray(events))
      throw invalidParams("/events", `expected an array of events, got ${show(events)}`);
    const id = typeof target === "string" ? target : this.#sessions.requireLive(target).id;
    checkSessionId(id, "/sessionId");
    // Checked against the schema and serialized (or, parsed, frozen in place) now, when called:
    // changing the caller's array or events afterwards changes nothing. The checks against the
    // log run when the batch's turn comes (they depend on what is stored then), and report a
    // refused event in batch order.
    const batch = TakenBatch.take(events, options.parsed === true ? "parsed" : "copy");
    return this.#sessions.serial(id, () => this.#sessions.append(id, target, batch));
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
  async fork(source: Session | string, options: ForkOptions = {}): Promise<SessionHeader> {
    return forkSession(
      {
        backend: this.backend,
        now: this.#now,
        newId: this.#newId,
        reserved: this.#sessions.reserved,
        liveOf: (id) => this.#sessions.session(id),
        serial: (id, task) => this.#sessions.serial(id, task),
      },
      source,
      options,
    );
  }

  /**
   * The session as JSONL text: the header line, then one line per event. For logs in canonical
   * form (what `JSON.stringify` writes) this is byte-identical to what was imported.
   * @throws StorageError SESSION_NOT_FOUND, FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async exportLog(id: string): Promise<string> {
    return this.#reads.exportLog(id);
  }

  /**
   * One page of a session's events as stored now, read from the store (never from memory, never
   * waiting for the writer lock): at most `limit` events from `fromSeq`, each checked against the
   * schema. A `fromSeq` at or past the end gives no events and `done`.
   * @throws StorageError INVALID_PARAMS (id, fromSeq, limit), SESSION_NOT_FOUND,
   *   FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async read(id: string, options: ReadOptions = {}): Promise<EventPage> {
    return this.#reads.read(id, options);
  }

  /**
   * A session's events page by page (`limit` events a page, {@link DEFAULT_READ_LIMIT} when
   * absent), from `fromSeq` to the end as it is when the last page is read: memory holds one page
   * at a time. Read from seq 0, the pages are also checked against the log's invariants as a
   * whole (a broken rule is CORRUPT_LOG).
   * @throws StorageError as {@link read} does, from the first `next()`.
   */
  pages(id: string, options: ReadOptions = {}): AsyncGenerator<EventPage, void, undefined> {
    return this.#reads.pages(id, options);
  }

  /**
   * The events of a range (`fromSeq` to `toSeq`, default the whole log) in one array, read page by
   * page: a convenience whose memory grows with the range.
   * @throws StorageError as {@link pages} does.
   */
  async readEvents(id: string, range: EventRange = {}): Promise<readonly SessionEvent[]> {
    return this.#reads.readEvents(id, range);
  }

  /**
   * The messages derived from a session's events 0…`throughSeq`, read from the store page by page.
   * @throws StorageError SESSION_NOT_FOUND, FORMAT_UNSUPPORTED, CORRUPT_LOG.
   */
  async messagesThrough(id: string, throughSeq: number): Promise<readonly DerivedMessage[]> {
    return this.#reads.messagesThrough(id, throughSeq);
  }

  /**
   * Stores a session from JSONL text (header line + events) at once, a header-only log too, with
   * its header as written (lineage and `seedLength` kept), or under `sessionId` when given.
   * @returns the stored header.
   * @throws StorageError CORRUPT_LOG (a missing or bad header, a bad line: nothing is dropped on
   *   import), FORMAT_UNSUPPORTED, SESSION_ALREADY_EXISTS, INVALID_PARAMS; InvalidEventError.
   */
  async importLog(text: string, options: { sessionId?: string } = {}): Promise<SessionHeader> {
    const { header, parsed } = importedLogOf(text, options);
    return this.#sessions.serial(header.id, async () => {
      await this.#sessions.assertFree(header.id);
      return storeWhole(this.backend, header, parsed);
    });
  }

  /**
   * One page of stored sessions as the store holds them now (every process's), most recently
   * active first (`order: "activity"`, the default: the time of the last event, else createdAt)
   * or newest first by creation (`order: "created"`), each with `updatedAt` (last activity, ISO
   * 8601) and its title when it has one: `limit` of them ({@link DEFAULT_LIST_LIMIT} when absent,
   * at most {@link MAX_LIST_LIMIT}).
   * @throws StorageError INVALID_PARAMS for a limit out of range, an unknown order, or a cursor
   *   `list` did not issue for that order.
   */
  async list(query: Partial<ListQuery> = {}): Promise<StoreListPage> {
    return this.#catalog.list(query);
  }

  /**
   * Sets (a string) or clears (null) the explicit title of a session, stored beside its log
   * without rewriting it. A session without one is titled by its first user message.
   * @throws StorageError INVALID_PARAMS for a title that is not 1–256 characters without control
   *   characters, or holds a lone UTF-16 surrogate; SESSION_NOT_FOUND.
   */
  async setTitle(id: string, title: string | null): Promise<void> {
    const set = this.#catalog.titleSetter(id, title);
    await this.#sessions.serial(id, set);
  }

  /**
   * The title of a session: its explicit title, else the one derived from its first user message
   * (its text on one line, cut to 80 columns); undefined when it has neither.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  async title(id: string): Promise<string | undefined> {
    return this.#catalog.title(id);
  }

  /**
   * The full id that `prefixOrId` names: an exact stored id wins; otherwise the one stored id that
   * starts with it, when it has at least 4 characters.
   * @throws StorageError SESSION_NOT_FOUND when none matches; AMBIGUOUS_ID (with up to 10
   *   candidates and the count) when several do.
   */
  async resolveId(prefixOrId: string): Promise<string> {
    return this.#catalog.resolveId(prefixOrId);
  }

  /**
   * Finds the sessions whose user, assistant or tool text holds every term of `query` in one
   * event (case- and accent-insensitive substrings; "double-quoted phrases" whole), in `list`'s
   * order, `limit` of them (20 when absent, at most 100), each with up to three excerpts. Uses
   * the backend's index when it has one, and scans the logs otherwise.
   * @throws StorageError INVALID_PARAMS for a query of no term or over 256 units, a limit out of
   *   range, or a cursor a search of this store did not issue.
   */
  async search(options: SearchOptions): Promise<SessionSearchResult> {
    return this.#catalog.search(options);
  }

  /**
   * Deletes a session. Its children keep their own copies of the inherited prefix.
   * @throws StorageError SESSION_NOT_FOUND; SESSION_BUSY when another live process writes it.
   */
  async delete(id: string): Promise<void> {
    checkSessionId(id, "/sessionId");
    await this.#sessions.serial(id, () => this.#sessions.delete(id));
  }

  /**
   * Forgets a live session and releases its writer lock; its `Session` objects become stale. A
   * turn this store was writing goes on: the next write takes the lock again and does not close
   * it, unless another process wrote the log in between (then it is closed as interrupted, as a
   * dead writer's turn is).
   */
  async unload(id: string): Promise<void> {
    await this.#sessions.serial(id, () => this.#sessions.unregister(id, true));
  }

  /** The ids of the sessions this store holds live. */
  liveIds(): string[] {
    return this.#sessions.ids();
  }

  /** Releases every lock and closes the backend. */
  async close(): Promise<void> {
    for (const id of this.#sessions.ids()) await this.unload(id);
    this.#sessions.clearLetGo();
    await this.backend.close();
  }

  /**
   * The turn left open at the end of a session as stored now: a writer's from memory, any other
   * from the store's last turn marker. Undefined when no turn is open or there is no such session.
   */
  async openTurn(id: string): Promise<number | undefined> {
    checkSessionId(id, "/sessionId");
    return this.#sessions.openTurn(id);
  }
}
