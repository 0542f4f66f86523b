// The SQLite backend (better-sqlite3): layout 4, version policy on open, group commit, per-session lock files, change polling.
import Database from "better-sqlite3";
import { type SessionHeader, SQLITE_PRAGMAS, SQLITE_TABLES } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import type * as backend from "../backend.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../errors/storage-errors.js";
import { refusedOr } from "../errors/storage-refusal.js";
import { encodeSessionId } from "../ids/id-encoding.js";
import { LockFiles } from "../locks/lock-files.js";
import { PageBytes } from "../reads/page-limit.js";
import * as sql from "../sql/core.js";
import { ChangeHub } from "../watch/change-hub.js";
import { type CatalogOpen, openCatalog, refreshSummary } from "./catalog.js";
import { ChangePoller } from "./change-poller.js";
import { FileGuard } from "./file-guard.js";
import { GroupCommit, type WriteStats } from "./group-commit.js";
import { EVENTS_PER_INSERT, eventRowValues } from "./rows.js";
import { SqliteSearchIndex } from "./search-index.js";
import { SqliteCatalog } from "./sqlite-catalog.js";
import { paramsFrom, type SqliteQueryRows, type SqliteScalar, Statements } from "./statements.js";
import { asStorageError, inspectDatabase, isPrivate, stampNewDatabase } from "./version-policy.js";

/** How a SQLite backend is opened. */
export interface SqliteBackendOptions {
  readonly durability?: backend.Durability;
  /**
   * How often, in milliseconds, a backend with subscribers asks the database whether another
   * connection committed (`PRAGMA data_version`); 25 by default. Bounds how late a subscriber hears
   * of another process's write.
   */
  readonly pollIntervalMs?: number;
}

const DEFAULT_POLL_INTERVAL_MS = 25;

/** The event members the layout stores as JSON text. */
const JSON_MEMBERS = sql.jsonMembers(SQLITE_TABLES.events);

/**
 * Sessions in one SQLite database (layout 4 of schema/storage/sqlite-layout.json): a `sessions` row
 * per header, an `events` row per event. Open it with {@link SqliteBackend.open}.
 *
 * Writes go through a group commit: batches queued in the same turn of the event loop share one
 * transaction (each in its own savepoint, so each is checked and all-or-nothing on its own), and
 * resolve once it has committed. Other processes may use the same database at once (WAL, busy
 * timeout); one writer per session is kept by lock files in `<database>.locks/` (see
 * {@link LockFiles}).
 *
 * Subscribers hear of this backend's writes once they have committed, and of other connections'
 * writes through one {@link ChangePoller} per backend, running while any session has subscribers.
 *
 * The database file is checked to be the one opened ({@link FileGuard}): before each read, and
 * with its `-wal` file just before each group's COMMIT. Once it was found removed or replaced,
 * every read and write fails with STORAGE_UNAVAILABLE (location: the file) until the backend is
 * opened again — nothing is ever acknowledged into a file that is gone. A full disk, a refused
 * permission or a read-only file system fails an operation with STORAGE_REFUSED (location: the
 * file, or the lock file); the transaction is rolled back, and the same write can be retried.
 */
export class SqliteBackend implements backend.SessionBackend {
  readonly kind = "sqlite";
  /** The database file (or `:memory:`). */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #statements: Statements;
  readonly #group: GroupCommit;
  readonly #search: SqliteSearchIndex;
  /** Absent for a private in-memory database, which no other process can write. */
  readonly #locks: LockFiles | undefined;
  readonly #changes: ChangeHub;
  /** Absent for a private in-memory database: no other connection can commit to it. */
  readonly #poller: ChangePoller | undefined;
  /** Absent for a private in-memory database, which has no file to lose. */
  readonly #guard: FileGuard | undefined;
  /** How eventRows' rows (arrays of values) become events: made on the first read. */
  #eventRowForm: sql.RowForm<readonly unknown[]> | undefined;
  /** What forkPoint framed of each session's open turn. */
  readonly #tails = new sql.FramedTails();
  /** The values of a group of events inserted in one statement, reused from group to group. */
  readonly #rowValues: SqliteScalar[] = [];
  #closed = false;
  /** The durability mode this backend commits in. */
  readonly durability: backend.Durability;
  /** What the open found of the catalog and did with it (kept, refreshed, rebuilt). */
  readonly catalogOpen: CatalogOpen;
  /** Listing, titles, id prefixes and search (see {@link SqliteCatalog}). */
  readonly catalog: SqliteCatalog;

  private constructor(
    path: string,
    db: Database.Database,
    durability: backend.Durability,
    pollIntervalMs: number,
    guard: FileGuard | undefined,
  ) {
    this.path = path;
    this.durability = durability;
    this.#db = db;
    this.#guard = guard;
    this.#statements = new Statements(db);
    this.catalogOpen = openCatalog(db, this.#statements);
    this.#search = SqliteSearchIndex.open(this.#statements, () => db.inTransaction);
    this.#group = new GroupCommit(db, this.#statements, () => guard?.check(true));
    this.catalog = new SqliteCatalog({
      statements: this.#statements,
      search: this.#search,
      read: (work) => this.#read(work),
      write: (work) => this.#write(work),
      changed: (id) => this.#changes.notify(id),
    });
    this.#locks = isPrivate(path) ? undefined : new LockFiles(`${path}.locks`);
    const poller = isPrivate(path)
      ? undefined
      : new ChangePoller(path, pollIntervalMs, (id) => this.#changes.notify(id));
    this.#poller = poller;
    this.#changes = new ChangeHub(
      poller === undefined
        ? {}
        : { onFirst: (id) => poller.watch(id), onLast: (id) => poller.unwatch(id) },
    );
  }

  /**
   * Opens (or creates) the database at `path` (`:memory:` for a private one). The version policy
   * runs first, on a read-only connection and before any pragma: a new database is stamped with
   * layout 4; any other layout version is refused and the file left untouched (reject, never
   * migrate). Then: foreign keys on, WAL, the generated busy timeout, and `synchronous` for the
   * durability mode. The identity of the file opened is recorded: every write and read checks
   * that the path still names it (see {@link FileGuard}).
   * @throws StorageError FORMAT_UNSUPPORTED (another layout version, or a database that is not
   *   seedline's), CORRUPT_LOG (layout 4 with other tables, or an unreadable file);
   *   StorageRefusedError STORAGE_REFUSED (location: the file) when the file or its folder may
   *   not be read or written, the file system is read-only or full.
   */
  static async open(path: string, options: SqliteBackendOptions = {}): Promise<SqliteBackend> {
    const durability = options.durability ?? "fsync";
    let db: Database.Database;
    let state: ReturnType<typeof inspectDatabase>;
    try {
      state = inspectDatabase(path);
      db = new Database(path);
    } catch (error) {
      throw refusedOr(error, path, path);
    }
    let guard: FileGuard | undefined;
    try {
      db.pragma(`busy_timeout = ${SQLITE_PRAGMAS.busyTimeoutMs}`);
      if (state === "new") stampNewDatabase(db, new Statements(db), path);
      db.pragma(`foreign_keys = ${SQLITE_PRAGMAS.foreignKeys ? "ON" : "OFF"}`);
      db.pragma(`journal_mode = ${SQLITE_PRAGMAS.journalMode}`);
      db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous[durability]}`);
      if (!isPrivate(path)) guard = FileGuard.record(path);
    } catch (error) {
      db.close();
      throw asStorageError(error, path);
    }
    return new SqliteBackend(
      path,
      db,
      durability,
      options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      guard,
    );
  }

  /** Write transactions committed so far and the batches they carried: one per group commit. */
  get writeStats(): WriteStats {
    return this.#group.stats;
  }

  /**
   * Whether the change poller is running (some session has subscribers and the backend is open),
   * for diagnostics and the tests that prove it stops.
   */
  get polling(): boolean {
    return this.#poller?.running ?? false;
  }

  /** The pragmas in force on the connection, for diagnostics (and the tests that prove them). */
  settings(): SqliteQueryRows["connectionSettings"] | undefined {
    this.#assertOpen();
    return this.#statements.get("connectionSettings", {});
  }

  /** Stores the session row at once, with no events too (a session is listed before it has any). */
  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    await this.#write(() => {
      this.#insertSession(header);
      this.#insertEvents(header.id, 0, events);
    });
    this.#changes.notify(header.id);
  }

  async append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void> {
    await this.#write(() => {
      const next = this.#nextSeq(id);
      if (next !== fromSeq) throw seqConflict(id, next, fromSeq);
      this.#insertEvents(id, fromSeq, events);
    });
    this.#changes.notify(id);
  }

  async load(id: string): Promise<backend.StoredLog | undefined> {
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.path);
      return { header, ...this.#frame(id, 0, undefined) };
    });
  }

  /**
   * Reads the header and the rows from `fromSeq - 1` on (at most `limit` after it), in one read
   * transaction on this backend's connection (no writer lock). When nothing is new that is two
   * primary-key probes.
   */
  async loadFrom(
    id: string,
    fromSeq: number,
    limit?: number,
    maxBytes?: number,
  ): Promise<backend.StoredSuffix | undefined> {
    const { first, take } = sql.pageRead(fromSeq, limit, maxBytes);
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.path);
      const suffix = sql.suffixOf(this.#frame(id, first, take, maxBytes, fromSeq - first), fromSeq);
      return { header, ...(suffix ?? { ...this.#frame(id, 0, limit, maxBytes, 0), from: 0 }) };
    });
  }

  /**
   * The message-producing events of the settled part of a log, and a count of its rows to find a
   * hole (see {@link SessionBackend.loadSettled}).
   */
  async loadSettled(id: string): Promise<backend.StoredSettledPage | undefined> {
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.path);
      const last = this.#statements.get("lastTurnEnd", { sessionId: id });
      const settled = last === undefined ? 0 : last.seq + 1;
      const location = sql.eventsOf(id, this.path);
      const counted = this.#statements.get("settledCount", { sessionId: id, settled });
      sql.checkSettledCount(Number(counted?.count ?? 0), settled, location);
      const rows = this.#statements.iterateValues("settledLines", { sessionId: id, settled });
      const columns = this.#statements.columnsOf("settledLines");
      return { header, settled, events: sql.settledEvents(rows, JSON_MEMBERS, location, columns) };
    });
  }

  /**
   * Subscribes to changes of session `id`: this backend's own writes once they have committed, and
   * other connections' (other processes') commits within about `pollIntervalMs`.
   */
  subscribe(id: string, onChange: () => void): backend.Unsubscribe {
    this.#assertOpen();
    return this.#changes.subscribe(id, onChange);
  }

  async has(id: string): Promise<boolean> {
    return this.#read(() => this.#statements.get("sessionExists", { sessionId: id }) !== undefined);
  }

  /** Every stored id, from the `sessions` primary key. */
  async ids(): Promise<string[]> {
    return this.#read(() => this.#statements.all("sessionIds", {}).map((r) => r.id));
  }

  /** The explicit title in `session_titles`, read by the catalog's statement. */
  async readTitle(id: string): Promise<string | undefined> {
    return (await this.catalog.titles(id))?.explicit;
  }

  /**
   * Sets or clears the explicit title in `session_titles`, as the catalog's `setTitle` does.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  writeTitle(id: string, title: string | null): Promise<void> {
    return this.catalog.setTitle(id, title);
  }

  async forkPoint(
    id: string,
    boundary: number | undefined,
  ): Promise<backend.StoredForkPoint | undefined> {
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.path);
      // The intact length: every row up to the last turn/end is settled (load finds any damage
      // there), and the rows after it are framed, so that a torn tail does not count.
      const last = this.#statements.get("lastTurnEnd", { sessionId: id });
      const settled = last === undefined ? 0 : last.seq + 1;
      const length = this.#intactLength(id, header, settled);
      const at = boundary ?? length - 1;
      const found =
        at < 0
          ? undefined
          : this.#statements.get("lastTurnMarker", { sessionId: id, boundary: at });
      const marker =
        found === undefined
          ? undefined
          : sql.turnMarkerOf(found, found.turn, sql.eventsOf(id, this.path), "a damaged row");
      // No turn/end can follow the last event: the usual case of openTurn asks nothing more.
      if (marker?.type !== "turn/start" || at >= length - 1) return { header, length, marker };
      const next = this.#statements.get("nextTurnEnd", { sessionId: id, fromSeq: at + 1 });
      return { header, length, marker, ...sql.closedAtOf(next?.seq, length) };
    });
  }

  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    await this.#write(() => {
      if (this.#statements.get("sessionExists", { sessionId: sourceId }) === undefined) {
        throw sessionNotFound(sourceId);
      }
      this.#insertSession(header);
      if (boundary < 0) return;
      const copied = this.#statements.run("copyEventPrefix", {
        childId: header.id,
        sourceId,
        boundary,
      });
      sql.checkCopiedPrefix(copied, boundary, sql.eventsOf(sourceId, this.path));
      refreshSummary(this.#statements, header.id);
      this.#search.forked(header.id, boundary);
    });
    this.#changes.notify(header.id);
  }

  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    await this.#write(() => {
      if (this.#statements.get("sessionExists", { sessionId: id }) === undefined) {
        throw sessionNotFound(id);
      }
      this.#tails.forget(id);
      this.#statements.run("deleteEventsFrom", { sessionId: id, keep });
      this.#search.deleteFrom(id, keep);
      this.#insertEvents(id, keep, closers);
      if (closers.length === 0) refreshSummary(this.#statements, id);
    });
    this.#changes.notify(id);
  }

  /**
   * Deletes a session and its events (its children keep their copies). Takes the session's writer
   * lock first (again, when this process already holds it).
   * @throws StorageError SESSION_BUSY when another live process writes the session.
   */
  async delete(id: string): Promise<boolean> {
    const release = await this.lock(id);
    let deleted: boolean;
    try {
      deleted = await this.#write(() => {
        this.#tails.forget(id);
        this.#search.deleteFrom(id, 0);
        return this.#statements.run("deleteSession", { sessionId: id }) > 0;
      });
    } finally {
      await release();
    }
    if (deleted) this.#changes.notify(id);
    return deleted;
  }

  async lock(id: string): Promise<backend.ReleaseLock> {
    this.#assertOpen();
    if (this.#locks === undefined) return async () => {};
    return this.#locks.acquire(encodeSessionId(id), id);
  }

  /**
   * Stops the change poller, finishes the queued writes (their subscribers still hear of them),
   * releases every lock and closes the database. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#poller?.close();
    try {
      await this.#group.drain();
    } finally {
      this.#locks?.releaseAllSync();
      this.#db.close();
    }
  }

  /**
   * Runs `work` in the next group commit. Once the database file was found removed or replaced,
   * every write fails at once with that STORAGE_UNAVAILABLE; a group that finds it so just before
   * its COMMIT is rolled back and rejected with it, never acknowledged.
   */
  #write<T>(work: () => T): Promise<T> {
    this.#assertOpen();
    const failure = this.#guard?.failure;
    if (failure !== undefined) return Promise.reject(failure);
    return this.#group
      .submit(() => {
        try {
          return work();
        } catch (error) {
          throw asStorageError(error, this.path);
        }
      })
      .catch((error: unknown) => {
        throw asStorageError(error, this.path);
      });
  }

  /**
   * Runs reads in one read transaction, so that they see one snapshot, after checking that the
   * database file is still the one opened (a removed file would answer with what is lost).
   */
  #read<T>(work: () => T): Promise<T> {
    this.#assertOpen();
    try {
      this.#guard?.check(false);
      this.#statements.run("beginRead", {});
      try {
        return Promise.resolve(work());
      } finally {
        this.#statements.run("commit", {});
      }
    } catch (error) {
      return Promise.reject(asStorageError(error, this.path));
    }
  }

  /**
   * Frames the event rows of `id` from seq `first` on, at most `take` of them (undefined: all);
   * a page that ends in a bad row looks up the next turn/end to judge it.
   */
  /**
   * The rows from seq `first` on (at most `take`), framed and judged; with `maxBytes`, read one
   * at a time and stopped before the first that would take the page past it (the first `proof`
   * rows not counted), so that the rows after the page are never held.
   */
  #frame(
    id: string,
    first: number,
    take: number | undefined,
    maxBytes?: number,
    proof = 0,
  ): sql.FramedLog & { cut?: true } {
    const rows = this.#statements.iterateValues("eventRows", {
      sessionId: id,
      fromSeq: first,
      limit: take ?? -1,
    });
    this.#eventRowForm ??= sql.valueRowForm(this.#statements.columnsOf("eventRows"), JSON_MEMBERS);
    const budget = new PageBytes(maxBytes);
    const read =
      maxBytes === undefined ? rows : sql.rowsWithin(rows, budget, proof, sql.valueRowBytes);
    const scanned = sql.scanEventRows(read, first, this.#eventRowForm);
    // A page cut by bytes is a full page: what follows it settles a bad row in it.
    const from = sql.turnEndLookup(scanned, budget.cut ? scanned.count : take);
    const next =
      from === undefined
        ? undefined
        : this.#statements.get("nextTurnEnd", { sessionId: id, fromSeq: from });
    const framed = sql.judgeEventRows(scanned, sql.eventsOf(id, this.path), next?.seq);
    return budget.cut ? { ...framed, cut: true } : framed;
  }

  /**
   * The number of intact events of session `id`: its rows up to `settled` and the intact run after
   * them, framed from where the last framing of its open turn left off ({@link FramedTails}).
   */
  #intactLength(id: string, header: SessionHeader, settled: number): number {
    const start = this.#tails.start(id, header, settled);
    let framed = this.#frame(id, start, undefined).events.length;
    // The proof row is gone: not the rows framed before; frame the open turn anew.
    let from = start;
    if (framed === 0 && start > settled) {
      from = settled;
      framed = this.#frame(id, settled, undefined).events.length;
    }
    const length = from + framed;
    this.#tails.note(id, header, settled, length);
    return length;
  }

  /** The seq the next event of a stored session takes. @throws StorageError SESSION_NOT_FOUND. */
  #nextSeq(id: string): number {
    const point = this.#statements.get("appendPoint", { sessionId: id });
    if (point === undefined) throw sessionNotFound(id);
    return sql.lengthAfter(point.lastSeq);
  }

  /** The sessions row and its summary (activity: the creation time, until events come). */
  #insertSession(header: SessionHeader): void {
    try {
      this.#statements.run("insertSession", paramsFrom("insertSession", header));
    } catch (error) {
      if (constraint(error) === "SQLITE_CONSTRAINT_PRIMARYKEY") throw sessionTaken(header.id);
      throw error;
    }
    this.#statements.run("insertSummary", { sessionId: header.id, updatedAt: header.createdAt });
    this.#statements.run("clearTitle", { sessionId: header.id });
  }

  #insertEvents(id: string, fromSeq: number, events: readonly SerializedEvent[]): void {
    sql.checkBatchSeqs(id, fromSeq, events);
    let at = 0;
    // Whole groups in one statement each, then the rest one to a statement. A group refused by a
    // constraint changed nothing: its rows go one by one too, so that the error names the row.
    for (; events.length - at >= EVENTS_PER_INSERT; at += EVENTS_PER_INSERT) {
      const values = eventRowValues(id, events, at, EVENTS_PER_INSERT, this.#rowValues);
      try {
        this.#statements.runRepeated("insertEvent", EVENTS_PER_INSERT, values);
      } catch (error) {
        if (constraint(error) === undefined) throw error;
        break;
      }
    }
    for (; at < events.length; at++) {
      const event = events[at] as SerializedEvent;
      try {
        this.#statements.runRepeated(
          "insertEvent",
          1,
          eventRowValues(id, events, at, 1, this.#rowValues),
        );
      } catch (error) {
        const code = constraint(error);
        if (code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw seqConflict(id, fromSeq + at, event.seq);
        if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw sessionNotFound(id);
        throw error;
      }
    }
    this.#search.written(id, fromSeq, events);
    const last = events.at(-1);
    if (last === undefined) return;
    // The summary moves in the same transaction as the events it summarises.
    this.#statements.run("touchSummary", {
      sessionId: id,
      lastSeq: last.seq,
      updatedAt: last.time,
      derivedTitle: sql.batchTitle(events),
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error(`the SQLite backend of ${this.path} is closed`);
  }
}

function constraint(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT") ? code : undefined;
}
