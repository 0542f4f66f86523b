// Notices an SQLite database file removed or replaced under an open connection, before a write is acknowledged.
import { type BigIntStats, statSync } from "node:fs";
import { StorageUnavailableError } from "../../errors.js";

/** A file's device and inode, as one string. */
function identity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}`;
}

function identityAt(path: string): string | undefined {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stats === undefined ? undefined : identity(stats);
}

/**
 * The identity (device, inode) of the database file a connection opened, and of its `-wal` file
 * once one exists, compared with what the paths name now. A connection keeps writing to a file
 * that was removed or replaced — its open descriptors still work — so without this check its
 * commits are acknowledged and gone after a restart. The backend checks the database file before
 * each read (one `stat`), and both files inside each group commit's transaction just before its
 * COMMIT (two `stat`s, under the write lock): a file found gone rolls the group back, so nothing
 * is written to it and nothing acknowledged. (A file removed after that check is removed after
 * the commit, like one removed just after the acknowledgement: no check can see it coming.) A
 * `-wal` file removed on its own is found too.
 *
 * Once a check has failed the guard stays failed: the connection's file is no longer the store,
 * so every later check fails too, until the backend is opened again (a restart opens whatever
 * file the path names then).
 */
export class FileGuard {
  readonly path: string;
  readonly #database: string;
  /** The `-wal` file's identity, recorded the first time it is seen (it appears with the first write). */
  #wal: string | undefined;
  #failure: StorageUnavailableError | undefined;

  private constructor(path: string, database: string) {
    this.path = path;
    this.#database = database;
  }

  /**
   * Records the identity of the file at `path`, just opened by a connection.
   * @throws the file system's error when it cannot be `stat`ed.
   */
  static record(path: string): FileGuard {
    return new FileGuard(path, identity(statSync(path, { bigint: true })));
  }

  /** The error every check throws once the file was found gone, if it was. */
  get failure(): StorageUnavailableError | undefined {
    return this.#failure;
  }

  /**
   * Checks that the database path still names the file the connection opened and, with
   * `withWal`, that its `-wal` path names the connection's `-wal` file (once recorded).
   * @throws StorageUnavailableError STORAGE_UNAVAILABLE (location: the database path,
   *   commitUnknown false) when it does not, now or at an earlier check.
   */
  check(withWal: boolean): void {
    if (this.#failure !== undefined) throw this.#failure;
    const now = identityAt(this.path);
    if (now !== this.#database) throw this.#fail(this.path, this.#database, now);
    if (!withWal) return;
    const wal = `${this.path}-wal`;
    const walNow = identityAt(wal);
    if (this.#wal === undefined) this.#wal = walNow;
    else if (walNow !== this.#wal) throw this.#fail(wal, this.#wal, walNow);
  }

  #fail(path: string, expected: string, found: string | undefined): StorageUnavailableError {
    const got =
      found === undefined ? "no file there" : `another file (device:inode ${found}) there`;
    this.#failure = new StorageUnavailableError(
      "STORAGE_UNAVAILABLE",
      `expected ${path} to be the file this process opened (device:inode ${expected}), got ${got}: it was removed or replaced while the store was open, so nothing of this operation was stored and nothing more will be written to it; restore the original file if you have it, then restart the server (or reopen the store) to use the file the path names`,
      { location: this.path, commitUnknown: false },
    );
    return this.#failure;
  }
}
