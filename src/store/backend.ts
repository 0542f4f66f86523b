// The narrow interface every persistence backend implements; everything above it is written once.
import type { SessionHeader } from "../generated.js";
import type { TurnMarker } from "../log/invariants.js";
import type { SerializedEvent } from "../log/serialized-event.js";

/**
 * How far an acknowledged write survives, one option for every durable backend: `fsync` (the
 * default) survives a power cut (JSONL fsyncs each batch, SQLite runs `synchronous = FULL`);
 * `process` survives a killed process but not a power cut (no fsync; `synchronous = NORMAL` in WAL).
 */
export type Durability = "fsync" | "process";

/** A stored log as a backend reads it. */
export interface StoredLog {
  readonly header: SessionHeader;
  /**
   * The intact events, fresh from `JSON.parse` (the store freezes them in place), with `seq`
   * equal to the index. The backend has checked framing only (JSON, seq, a known tail): the
   * store checks the invariants.
   */
  readonly events: unknown[];
  /** Whether a torn tail (a partial or unreadable trailing line or row) follows the intact events. */
  readonly tornTail: boolean;
}

/**
 * What `loadFrom` reports: a stored log from some seq on. `from` is the seq of `events[0]`: the
 * seq asked for, or 0 when the backend answered with the whole log instead (because the stored
 * log no longer extends the prefix the caller knows, or the backend could not tell cheaply).
 */
export interface StoredSuffix extends StoredLog {
  readonly from: number;
  /**
   * Whether a page read with `maxBytes` stopped before an event that would have taken it past
   * that budget: events follow it, whatever its length. Absent or false otherwise.
   */
  readonly cut?: boolean;
}

/**
 * What `loadSettled` reports: the message-producing events of the settled part of a log (the
 * events up to its last `turn/end`), for a writer resuming the log.
 */
export interface StoredSettledPage {
  readonly header: SessionHeader;
  /** The seq after the last `turn/end` (0 without one): every event before it is settled. */
  readonly settled: number;
  /** The events with a `surfaceOp` before `settled`, fresh from `JSON.parse`, in seq order. */
  readonly events: unknown[];
  /**
   * Optional, when `loadSettled` was given a `tailLimit` and the backend read it along (in the
   * same snapshot): the last `turn/end` itself, fresh from `JSON.parse` (absent when `settled` is
   * 0). Present exactly when `tail` is.
   */
  readonly end?: unknown;
  /** Optional, with `end`: what `loadFrom(id, settled, tailLimit)` answers. */
  readonly tail?: StoredSuffix;
}

/** Stops a change subscription; idempotent. */
export type Unsubscribe = () => void;

/** What `forkPoint` reports: enough for the boundary checks without loading the whole log. */
export interface StoredForkPoint {
  readonly header: SessionHeader;
  /**
   * The number of intact events — or, when a boundary was asked and its event is a `turn/end`,
   * at least `boundary + 1` (a backend may stop reading there).
   */
  readonly length: number;
  /** The last `turn/start` or `turn/end` at or before the boundary (or the last event when the boundary is absent). */
  readonly marker: TurnMarker | undefined;
  /**
   * When `marker` is a `turn/start`: the seq of the intact `turn/end` that closes its turn (the
   * nearest valid fork boundary after the asked one); absent while that turn is open.
   */
  readonly closedAt?: number;
}

/**
 * How `list` orders: `activity`, most recent activity first (the time of the last event, else
 * `createdAt`, descending, then id descending); `created`, `createdAt` descending, then id
 * descending. Ids compare as UTF-8 bytes.
 */
export type ListOrder = "activity" | "created";

/** A `list` query: filters, order, page size and the opaque cursor of the previous page. */
export interface ListQuery {
  readonly cwd?: string;
  readonly parentSession?: string;
  readonly cursor?: string;
  readonly limit: number;
  /** `created` when absent (the order of earlier builds); the store asks for `activity` by default. */
  readonly order?: ListOrder;
}

/** One listed session: its header and what its summary (or one indexed lookup of its last event) tells. */
export interface ListedSession {
  readonly header: SessionHeader;
  readonly eventCount: number;
  /** Last activity (epoch ms): the `time` of the last event, else `createdAt`. */
  readonly updatedAt: number;
  /** The explicit title, else the derived one; absent when the session has neither. */
  readonly title?: string;
}

/** The titles stored for a session: the explicit one and the one derived from its first user message. */
export interface StoredTitles {
  readonly explicit?: string;
  readonly derived?: string;
}

/** Stored ids that start with a prefix: the first few in byte order, and how many there are. */
export interface IdMatches {
  readonly ids: readonly string[];
  readonly count: number;
}

/** One page of `list`, in the order asked for. */
export interface ListPage {
  readonly sessions: readonly ListedSession[];
  readonly nextCursor?: string;
}

/**
 * A `search` query as a backend gets it: folded terms (see `foldForSearch` in
 * log/search-text.ts), every one to be found in one event's searchable text, and a page in list
 * order (most recent activity first, as `list`'s `activity` order, with its cursors).
 */
export interface SearchQuery {
  readonly terms: readonly string[];
  readonly cwd?: string;
  readonly cursor?: string;
  readonly limit: number;
}

/** One session that matches: what `list` tells of it, and its first matching events. */
export interface SearchHit extends ListedSession {
  /** Its first events (at most MAX_EXCERPTS, in seq order) whose searchable text holds every term, fresh from `JSON.parse`. */
  readonly events: readonly unknown[];
}

/** One page of `search`, in list order, with list's cursor after the last hit. */
export interface SearchPage {
  readonly sessions: readonly SearchHit[];
  readonly nextCursor?: string;
}

/** Releases a writer lock; idempotent. */
export type ReleaseLock = () => Promise<void>;

/**
 * A persistence backend. Every method is asynchronous; a write resolves only once it is durable
 * (in the store's durability mode). Ids reach the backend already validated.
 *
 * Besides the codes each method names, any method may fail with StorageRefusedError
 * STORAGE_REFUSED (a full disk, no permission, a read-only file system or database: nothing of
 * the operation stored, the same request may be retried once the condition is gone) and with
 * StorageUnavailableError STORAGE_UNAVAILABLE (the store cannot be reached, or its file was
 * removed or replaced under it).
 */
export interface SessionBackend {
  /** What kind of store this is, for diagnostics and the handshake ("memory", "jsonl", "sqlite"). */
  readonly kind: string;

  /**
   * Optional: an index a backend may keep so that list, titles, prefixes and search do not scan
   * the logs ({@link SessionCatalog}), derived from the logs (rebuilt from them where it is kept)
   * except the explicit titles users set. Without one the store uses a `ScanCatalog` over the
   * primitives (`ids`, `forkPoint`, `loadFrom`, `readTitle`, `writeTitle`): every list reads
   * each session's fork point and last event.
   */
  readonly catalog?: SessionCatalog;

  /** Every stored session id, in any order. */
  ids(): Promise<string[]>;

  /**
   * The explicit title a user set on a session; undefined when it has none, or there is no such
   * session.
   */
  readTitle(id: string): Promise<string | undefined>;

  /**
   * Sets (a string) or clears (null) the explicit title of a session, durably and beside its log
   * (the log is not rewritten). The title reaches the backend already checked. A session made
   * again under the id of a deleted one starts without a title.
   * @throws StorageError SESSION_NOT_FOUND when there is no such session.
   */
  writeTitle(id: string, title: string | null): Promise<void>;

  /**
   * Stores a new session with its first events, all or nothing: a create (header only when it has
   * no seed), a seeded create, an import. Events reach every write method checked and serialized
   * ({@link SerializedEvent}): a backend writes their JSON text as it is, without serializing again.
   * @throws StorageError SESSION_ALREADY_EXISTS when the id is taken.
   */
  create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void>;

  /**
   * Appends events that start at `fromSeq`, all or nothing.
   * @throws StorageError SEQ_CONFLICT when the stored log does not end at `fromSeq`;
   *   SESSION_NOT_FOUND when there is no such session.
   */
  append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void>;

  /**
   * Reads a session: the header, the intact events, and whether a torn tail follows them.
   * Returns undefined when there is no such session.
   * @throws StorageError FORMAT_UNSUPPORTED (another format version), CORRUPT_LOG (damage before
   *   the last `turn/end`, or a missing/invalid header).
   */
  load(id: string): Promise<StoredLog | undefined>;

  /**
   * Reads a session from `fromSeq` on, reading only what is new: the header, the intact events
   * at `fromSeq` and after (none when nothing was appended), and whether a torn tail follows. Never
   * takes or waits for the writer lock, and always answers from what is durable in the store now,
   * whichever process wrote it. When the stored log has fewer than `fromSeq` intact events (it was
   * deleted and created again), the answer is the whole log, with `from` 0.
   *
   * With `limit` (a positive integer) the answer is one page: at most `limit` intact events from
   * `from` on, read without reading (or holding in memory) the rows after the page, so that a log
   * of any length is read page by page, each page asking from the seq after the last. A page of
   * fewer than `limit` events reaches the end of the intact log; `tornTail` is reported only then
   * (a full page says false: the next page tells). A page never misses corruption that reading the
   * whole log would report for a bad row it reaches: a bad row inside the page with a `turn/end`
   * after it, in the page or later, is CORRUPT_LOG; damage after the page is the next page's to
   * report. Without `limit` the answer holds every event from `from` on.
   *
   * With `maxBytes` (a positive integer) the page is also bounded by bytes, as it is read: it
   * stops before the first event that would take the stored size of its events past `maxBytes`
   * (always keeping its first event), and says so with `cut`. An event's stored size is what the
   * backend stores of it: at least the JSON text of its `data`, at most its JSON line. The rows
   * after the cut are not held in memory (a backend may read the one that did not fit).
   * Returns undefined when there is no such session.
   * @throws StorageError as `load` does; INVALID_PARAMS for a `limit` or `maxBytes` that is not a
   *   positive integer.
   */
  loadFrom(
    id: string,
    fromSeq: number,
    limit?: number,
    maxBytes?: number,
  ): Promise<StoredSuffix | undefined>;

  /**
   * Optional, for stores where reading a log costs by the row: the message-producing events (those
   * with a `surfaceOp`) of the settled part of a log, up to its last `turn/end`, at once (the
   * running state holds them anyway, as its surface).
   * After a `turn/end` no turn, step or tool call is open, so a writer resuming a long log needs
   * only these (for its messages), the last `turn/end` and the events after it, read with
   * `loadFrom`: the chunks and markers of the settled part — most of a log — are not read (nor
   * judged: they are checked when they are read). A settled row that does not parse is
   * CORRUPT_LOG; a backend may check more (SQLite counts the rows, to find a hole).
   * With `tailLimit` (a positive integer) a backend may also answer what the writer reads next,
   * the last `turn/end` and the page after it (`end` and `tail`): a backend that reads a row at a
   * time over a connection saves its round trips.
   * Returns undefined when there is no such session.
   * @throws StorageError as `load` does.
   */
  loadSettled?(id: string, tailLimit?: number): Promise<StoredSettledPage | undefined>;

  /**
   * Calls `onChange` soon after session `id` may have changed in the store (an append, a repair,
   * its creation or deletion), whichever process or machine wrote it. Calls may be spurious or
   * coalesced: the subscriber reads with `loadFrom` to learn what changed. A backend that may have
   * missed changes (a lost notification connection) calls every subscriber once it is back.
   */
  subscribe(id: string, onChange: () => void): Unsubscribe;

  /** Whether a session is stored, without reading its events. */
  has(id: string): Promise<boolean>;

  /**
   * The header and length of a stored session, its last turn marker at or before `boundary` and,
   * when that marker opens a turn, the `turn/end` closing it (`closedAt`), reading only what that
   * needs. Returns undefined when there is no such session.
   */
  forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined>;

  /**
   * Stores a new session `header` whose events are a copy of `sourceId`'s events 0…`boundary`
   * (none when `boundary` is -1), copied inside the storage. The child is made atomically: the
   * store holds no writer lock of it, so a child stored meanwhile (by another process) must be
   * refused, and nothing of a fork that fails may be left.
   * @throws StorageError SESSION_ALREADY_EXISTS, SESSION_NOT_FOUND.
   */
  fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void>;

  /**
   * Cuts everything after the first `keep` events (a torn tail) and appends `closers`, in one
   * durable step.
   */
  repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void>;

  /** Removes a session; returns whether there was one. Other sessions keep their own copies. */
  delete(id: string): Promise<boolean>;

  /**
   * Takes the writer lock of a session for this process (one writer per session across
   * processes). Taking a lock this process already holds returns another release of it.
   * @throws StorageError SESSION_BUSY when another live process holds it.
   */
  lock(id: string): Promise<ReleaseLock>;

  /**
   * Whether this process held the writer lock of `id` on something that has since gone (a
   * database connection that ended), so that the lock must be taken again, and the log read
   * again, before the next write. Optional: a backend whose locks go only with the process has
   * none.
   */
  lockLost?(id: string): boolean;

  /** Releases every lock and closes files or connections; the backend is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * The catalog of a store: what it knows of its sessions besides their logs, asked by `list`,
 * titles, id prefixes and search, apart from the durable primitives of {@link SessionBackend}.
 * Everything in it is derived from the logs — and rebuilt from them where a backend keeps it
 * (the SQLite and PostgreSQL catalog tables, JSONL's listing index) — except the explicit titles
 * users set, which are stored apart from it, durably (`readTitle`, `writeTitle`). `ScanCatalog`
 * answers it from the primitives alone, for a backend that keeps none.
 */
export interface SessionCatalog {
  /**
   * One page of stored sessions, newest first; never reads a whole log.
   * @throws StorageError INVALID_PARAMS for a limit above MAX_LIST_LIMIT (list-limit.ts) or a
   *   cursor this backend did not issue.
   */
  list(query: ListQuery): Promise<ListPage>;

  /**
   * Sets (a string) or clears (null) the explicit title of a session, durably and beside its log
   * (the log is not rewritten). The title reaches the backend already checked.
   * @throws StorageError SESSION_NOT_FOUND when there is no such session.
   */
  setTitle(id: string, title: string | null): Promise<void>;

  /** The titles of a stored session (see {@link StoredTitles}); undefined when there is no such session. */
  titles(id: string): Promise<StoredTitles | undefined>;

  /**
   * The stored ids that start with `prefix` (an exact id included): at most `limit` of them, in
   * UTF-8 byte order, and how many match in all.
   */
  idsWithPrefix(prefix: string, limit: number): Promise<IdMatches>;

  /**
   * Optional, for stores that keep a search index (derived data, kept in the same transaction as
   * the writes it follows, and rebuilt when missing): one page of the sessions with an event
   * whose searchable text holds every term, in list order. Without it the store scans the logs.
   * @throws StorageError INVALID_PARAMS for a cursor this backend did not issue.
   */
  search?(query: SearchQuery): Promise<SearchPage>;
}
