// The SQLite backend (better-sqlite3): layout 4, version policy on open, group commit, per-session lock files.
import Database from "better-sqlite3";
import { StorageError, show } from "../../errors.js";
import { type SessionEvent, type SessionHeader, SQLITE_PRAGMAS } from "../../generated.js";
import type {
  Durability,
  ListedSession,
  ListPage,
  ListQuery,
  ReleaseLock,
  SessionBackend,
  StoredForkPoint,
  StoredLog,
} from "../backend.js";
import { checkFormatVersion } from "../format-version.js";
import { encodeSessionId } from "../id-encoding.js";
import { decodeCursor, encodeCursor, type ListKey } from "../list-cursor.js";
import { LockFiles } from "../lock-files.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../storage-errors.js";
import { GroupCommit, type WriteStats } from "./group-commit.js";
import { eventParams, frameEventRows, headerFromRow } from "./rows.js";
import { paramsFrom, type SqliteQueryRows, Statements } from "./statements.js";
import { asStorageError, inspectDatabase, isPrivate, stampNewDatabase } from "./version-policy.js";

/** How a SQLite backend is opened. */
export interface SqliteBackendOptions {
  readonly durability?: Durability;
}

/** Lists start strictly after this key: above every stored session (createdAt is a safe integer). */
const FIRST_PAGE: ListKey = { createdAt: Number.MAX_SAFE_INTEGER + 1, id: "" };

/**
 * Sessions in one SQLite database (layout 4 of schema/storage/sqlite-layout.json): a `sessions` row
 * per header, an `events` row per event. Open it with {@link SqliteBackend.open}.
 *
 * Writes go through a group commit: batches queued in the same turn of the event loop share one
 * transaction (each in its own savepoint, so each is checked and all-or-nothing on its own), and
 * resolve once it has committed. Other processes may use the same database at once (WAL, busy
 * timeout); one writer per session is kept by lock files in `<database>.locks/`.
 */
export class SqliteBackend implements SessionBackend {
  readonly kind = "sqlite";
  /** The database file (or `:memory:`). */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #statements: Statements;
  readonly #group: GroupCommit;
  /** Absent for a private in-memory database, which no other process can write. */
  readonly #locks: LockFiles | undefined;
  #closed = false;
  /** The durability mode this backend commits in. */
  readonly durability: Durability;

  private constructor(path: string, db: Database.Database, durability: Durability) {
    this.path = path;
    this.durability = durability;
    this.#db = db;
    this.#statements = new Statements(db);
    this.#group = new GroupCommit(db, this.#statements);
    this.#locks = isPrivate(path) ? undefined : new LockFiles(`${path}.locks`);
  }

  /**
   * Opens (or creates) the database at `path` (`:memory:` for a private one). The version policy
   * runs first, on a read-only connection and before any pragma: a new database is stamped with
   * layout 4; any other layout version is refused and the file left untouched (reject, never
   * migrate). Then: foreign keys on, WAL, the generated busy timeout, and `synchronous` for the
   * durability mode.
   * @throws StorageError FORMAT_UNSUPPORTED (another layout version, or a database that is not
   *   seedline's), CORRUPT_LOG (layout 4 with other tables, or an unreadable file).
   */
  static async open(path: string, options: SqliteBackendOptions = {}): Promise<SqliteBackend> {
    const durability = options.durability ?? "fsync";
    const state = inspectDatabase(path);
    const db = new Database(path);
    try {
      db.pragma(`busy_timeout = ${SQLITE_PRAGMAS.busyTimeoutMs}`);
      if (state === "new") stampNewDatabase(db, new Statements(db), path);
      db.pragma(`foreign_keys = ${SQLITE_PRAGMAS.foreignKeys ? "ON" : "OFF"}`);
      db.pragma(`journal_mode = ${SQLITE_PRAGMAS.journalMode}`);
      db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous[durability]}`);
    } catch (error) {
      db.close();
      throw asStorageError(error, path);
    }
    return new SqliteBackend(path, db, durability);
  }

  /** Write transactions committed so far and the batches they carried: one per group commit. */
  get writeStats(): WriteStats {
    return this.#group.stats;
  }

  /** The pragmas in force on the connection, for diagnostics (and the tests that prove them). */
  settings(): SqliteQueryRows["connectionSettings"] | undefined {
    this.#assertOpen();
    return this.#statements.get("connectionSettings", {});
  }

  async create(header: SessionHeader, events: readonly SessionEvent[]): Promise<void> {
    await this.#write(() => {
      this.#insertSession(header);
      this.#insertEvents(header.id, 0, events);
    });
  }

  async append(id: string, fromSeq: number, events: readonly SessionEvent[]): Promise<void> {
    await this.#write(() => {
      const next = this.#nextSeq(id);
      if (next !== fromSeq) throw seqConflict(id, next, fromSeq);
      this.#insertEvents(id, fromSeq, events);
    });
  }

  async load(id: string): Promise<StoredLog | undefined> {
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      checkFormatVersion(row, this.#where(id));
      const rows = this.#statements.iterate("eventLines", { sessionId: id });
      const framed = frameEventRows(rows, `table events of ${this.#where(id)}`);
      return { header: headerFromRow(row), events: framed.events, tornTail: framed.tornTail };
    });
  }

  async has(id: string): Promise<boolean> {
    return this.#read(() => this.#statements.get("sessionExists", { sessionId: id }) !== undefined);
  }

  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    return this.#read(() => {
      const row = this.#statements.get("sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      checkFormatVersion(row, this.#where(id));
      // The length from the last row's seq: an intact log has no holes (load finds any damage).
      const length = this.#nextSeq(id);
      const at = boundary ?? length - 1;
      const found =
        at < 0
          ? undefined
          : this.#statements.get("lastTurnMarker", { sessionId: id, boundary: at });
      if (found === undefined) return { header: headerFromRow(row), length, marker: undefined };
      if (
        typeof found.turn !== "number" ||
        (found.type !== "turn/start" && found.type !== "turn/end")
      ) {
        throw new StorageError(
          "CORRUPT_LOG",
          `expected a turn marker with a turn number at seq ${found.seq} of table events of ${this.#where(id)}, found a damaged row`,
          { location: `table events of ${this.#where(id)}`, seq: found.seq },
        );
      }
      return {
        header: headerFromRow(row),
        length,
        marker: { seq: found.seq, type: found.type, turn: found.turn },
      };
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
      if (copied !== boundary + 1) {
        throw new StorageError(
          "CORRUPT_LOG",
          `expected events 0…${boundary} in table events of ${this.#where(sourceId)} to fork, found ${copied} rows`,
          { location: `table events of ${this.#where(sourceId)}` },
        );
      }
    });
  }

  async repair(id: string, keep: number, closers: readonly SessionEvent[]): Promise<void> {
    await this.#write(() => {
      if (this.#statements.get("sessionExists", { sessionId: id }) === undefined) {
        throw sessionNotFound(id);
      }
      this.#statements.run("deleteEventsFrom", { sessionId: id, keep });
      this.#insertEvents(id, keep, closers);
    });
  }

  async list(query: ListQuery): Promise<ListPage> {
    const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor);
    const filter = {
      cwd: query.cwd,
      parentSession: query.parentSession,
      afterCreatedAt: after.createdAt,
      afterId: after.id,
      limit: query.limit + 1,
    };
    const name =
      query.parentSession === undefined
        ? query.cwd === undefined
          ? "listSessions"
          : "listSessionsInCwd"
        : query.cwd === undefined
          ? "listChildSessions"
          : "listChildSessionsInCwd";
    return this.#read(() => {
      const rows = this.#statements.all(name, paramsFrom(name, filter));
      const page = rows.slice(0, query.limit);
      const sessions = page.map((row): ListedSession => {
        const header = headerFromRow(row);
        const last = this.#statements.get("lastEvent", { sessionId: header.id });
        return last === undefined
          ? { header, eventCount: 0 }
          : { header, eventCount: last.seq + 1, updatedAt: last.time };
      });
      const end = sessions.at(-1);
      return rows.length > query.limit && end !== undefined
        ? { sessions, nextCursor: encodeCursor(end.header) }
        : { sessions };
    });
  }

  /**
   * Deletes a session and its events (its children keep their copies). Takes the session's writer
   * lock first (again, when this process already holds it).
   * @throws StorageError SESSION_BUSY when another live process writes the session.
   */
  async delete(id: string): Promise<boolean> {
    const release = await this.lock(id);
    try {
      return await this.#write(() => this.#statements.run("deleteSession", { sessionId: id }) > 0);
    } finally {
      await release();
    }
  }

  async lock(id: string): Promise<ReleaseLock> {
    this.#assertOpen();
    if (this.#locks === undefined) return async () => {};
    return this.#locks.acquire(encodeSessionId(id), id);
  }

  /** Finishes the queued writes, releases every lock and closes the database. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#group.drain();
    } finally {
      this.#locks?.releaseAllSync();
      this.#db.close();
    }
  }

  #write<T>(work: () => T): Promise<T> {
    this.#assertOpen();
    return this.#group.submit(() => {
      try {
        return work();
      } catch (error) {
        throw asStorageError(error, this.path);
      }
    });
  }

  /** Runs reads in one read transaction, so that they see one snapshot. */
  #read<T>(work: () => T): Promise<T> {
    this.#assertOpen();
    try {
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

  /** The seq the next event of a stored session takes. @throws StorageError SESSION_NOT_FOUND. */
  #nextSeq(id: string): number {
    const point = this.#statements.get("appendPoint", { sessionId: id });
    if (point === undefined) throw sessionNotFound(id);
    return typeof point.lastSeq === "number" ? point.lastSeq + 1 : 0;
  }

  #insertSession(header: SessionHeader): void {
    try {
      this.#statements.run("insertSession", paramsFrom("insertSession", header));
    } catch (error) {
      if (constraint(error) === "SQLITE_CONSTRAINT_PRIMARYKEY") throw sessionTaken(header.id);
      throw error;
    }
  }

  #insertEvents(id: string, fromSeq: number, events: readonly SessionEvent[]): void {
    events.forEach((event, i) => {
      if (event.seq !== fromSeq + i) throw seqConflict(id, fromSeq + i, event.seq);
      try {
        this.#statements.run("insertEvent", eventParams(id, event));
      } catch (error) {
        const code = constraint(error);
        if (code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw seqConflict(id, fromSeq + i, event.seq);
        if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw sessionNotFound(id);
        throw error;
      }
    });
  }

  #where(id: string): string {
    return `session ${show(id)} in ${this.path}`;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error(`the SQLite backend of ${this.path} is closed`);
  }
}

function constraint(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT") ? code : undefined;
}
