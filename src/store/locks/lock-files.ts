// One writer per session across processes on one host: lock files whose locks the kernel releases when their holder dies.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { StorageError, show } from "../../errors.js";
import type { ReleaseLock } from "../backend.js";
import { refusedOr } from "../errors/storage-refusal.js";

/**
 * better-sqlite3, loaded with the first lock taken: a JSONL store that has not written yet, and a
 * process that only imports the package, do not load the native module.
 */
let sqliteDriver: typeof Database | undefined;
function sqlite(): typeof Database {
  sqliteDriver ??= createRequire(import.meta.url)("better-sqlite3") as typeof Database;
  return sqliteDriver;
}

/**
 * The suffix of lock files. The previous build's lock files (`.lock` holding a pid, and `.steal`
 * markers) are ignored: a lock is no longer a file's existence but a lock on its inode.
 */
export const LOCK_SUFFIX = ".lck";

/**
 * Every instance that may hold locks, so that one exit handler releases them all — and so that no
 * held connection is collected as garbage, which would close it and drop its lock.
 */
const living = new Set<LockFiles>();

function releaseEverything(): void {
  for (const locks of [...living]) locks.releaseAllSync();
}

/**
 * Lock files in one folder, one per session (`<name>.lck`, an empty SQLite database). Holding a
 * lock is holding SQLite's RESERVED lock on its file through a connection kept open: SQLite's
 * unix VFS takes it as a POSIX record lock (`fcntl`) on one byte, which the kernel keys by inode
 * and drops when the holder's process dies, however it dies. So a dead holder never leaves a lock behind, and the
 * lock holds between processes in different pid namespaces (containers sharing a volume on one
 * host) — nothing is decided from a pid. SQLite's table of open inodes makes two connections of
 * one process conflict as well, although the kernel would let one process take its own lock twice.
 * Contention is SESSION_BUSY at once (busy timeout 0), never a wait.
 *
 * Lock files are kept, never removed: removing one another process has just opened would let
 * the next taker create a second file under the same name, and two holders lock two inodes. They
 * stay empty (0 bytes: the lock is taken by a transaction that writes nothing and keeps no
 * journal). Nothing else in a process may open a lock file while it holds it: closing any
 * descriptor of a file drops every POSIX lock the process has on it.
 *
 * A lock file's absolute path must fit SQLite's limit of 512 bytes: with the longest encoded id
 * (196 bytes with the suffix) that leaves about 300 bytes for the folder.
 *
 * Locks this instance holds are counted, so taking one twice returns a second release. Each held
 * lock keeps one file descriptor open. Every lock still held is released when the backend closes,
 * and at exit (the kernel would drop them anyway; a worker thread's exit is not the process's).
 */
export class LockFiles {
  readonly dir: string;
  readonly #held = new Map<string, { count: number; connection: Database.Database }>();

  constructor(dir: string) {
    this.dir = dir;
    if (living.size === 0) process.on("exit", releaseEverything);
    living.add(this);
  }

  /**
   * Takes the lock `name` for `sessionId`, creating its file (and the folder) when missing.
   * @throws StorageError SESSION_BUSY when another process, or another holder in this one, has it;
   *   StorageRefusedError STORAGE_REFUSED (location: the lock file) when the folder is full,
   *   read-only or may not be written.
   */
  async acquire(name: string, sessionId: string): Promise<ReleaseLock> {
    const held = this.#held.get(name);
    if (held === undefined) {
      let connection: Database.Database;
      try {
        connection = this.#take(name, sessionId);
      } catch (error) {
        throw refusedOr(error, this.pathOf(name), this.pathOf(name));
      }
      this.#held.set(name, { count: 1, connection });
    } else {
      held.count++;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      const lock = this.#held.get(name);
      if (lock === undefined) return;
      if (--lock.count > 0) return;
      this.#held.delete(name);
      lock.connection.close();
    };
  }

  /** Whether this instance holds the lock `name`. */
  holds(name: string): boolean {
    return this.#held.has(name);
  }

  /** Releases every lock this instance holds (at exit, or when the backend closes). */
  releaseAllSync(): void {
    for (const lock of this.#held.values()) lock.connection.close();
    this.#held.clear();
    living.delete(this);
    if (living.size === 0) process.removeListener("exit", releaseEverything);
  }

  /** The path of the lock file `name`. */
  pathOf(name: string): string {
    return join(this.dir, `${name}${LOCK_SUFFIX}`);
  }

  #take(name: string, sessionId: string): Database.Database {
    mkdirSync(this.dir, { recursive: true });
    const path = this.pathOf(name);
    let connection: Database.Database;
    try {
      connection = new (sqlite())(path, { timeout: 0 });
    } catch (error) {
      throw tooLong(path, error) ?? error;
    }
    try {
      // The smallest page before the first read: the connection's page cache starts with a bulk
      // allocation of 20 pages, about 88 KiB at the default 4 KiB and 17 KiB at 512 bytes, held
      // as long as the lock. The file stays empty, so no page of it is ever written at this size.
      connection.pragma("page_size = 512");
      // EXCLUSIVE locking mode keeps the locks after the transaction ends, until the connection
      // closes. The journal in memory and the rollback leave the file empty and alone.
      connection.pragma("locking_mode = EXCLUSIVE");
      connection.pragma("journal_mode = MEMORY");
      // RESERVED, not EXCLUSIVE: one connection at a time holds it, and it is one fcntl call
      // whatever shared locks others hold. EXCLUSIVE is reached in steps that takers' shared
      // locks block, so two takers at once could each make the other fail: no holder at all.
      // A file this process may not write is opened read-only without a word, and BEGIN
      // IMMEDIATE on it takes only a read lock: the write in the transaction makes that an
      // SQLITE_READONLY error. Rolled back with the journal in memory, it never reaches the file.
      connection.exec("BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS probe(x); ROLLBACK");
    } catch (error) {
      connection.close();
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) throw busy(sessionId, path);
      throw error;
    }
    return connection;
  }
}

/** SQLite's unix VFS opens no path longer than this many bytes (its MAX_PATHNAME). */
const SQLITE_MAX_PATH_BYTES = 512;

/** A clearer error than SQLITE_CANTOPEN when the lock file's absolute path is past SQLite's limit. */
function tooLong(path: string, cause: unknown): Error | undefined {
  const bytes = Buffer.byteLength(resolve(path), "utf8");
  if (bytes <= SQLITE_MAX_PATH_BYTES) return undefined;
  return new Error(
    `expected a lock file path of at most ${SQLITE_MAX_PATH_BYTES} bytes (SQLite's limit), got ${bytes}: ${path}; use a shorter store path`,
    { cause },
  );
}

function busy(sessionId: string, path: string): StorageError<"SESSION_BUSY"> {
  return new StorageError(
    "SESSION_BUSY",
    `expected no other writer of session ${show(sessionId)}, got its lock ${path} held by another process or backend`,
    { sessionId },
  );
}
