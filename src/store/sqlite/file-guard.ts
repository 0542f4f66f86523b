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
 * commits are acknowledged and gone after a restart. A check costs one or two `stat` calls.
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
   * Checks that the database path (and its `-wal` path, once recorded) still names the file the
   * connection opened.
   * @param committed whether a commit just went to the connection's file: when the check fails
   *   then, the error says `commitUnknown` (the write landed in the removed or moved file, which
   *   holds it if it is put back); else nothing was written.
   * @throws StorageUnavailableError STORAGE_UNAVAILABLE (location: the database path) when it
   *   does not, now or at an earlier check.
   */
  check(committed = false): void {
    if (this.#failure !== undefined) throw this.#failure;
    const now = identityAt(this.path);
    if (now !== this.#database) throw this.#fail(this.path, this.#database, now, committed);
    const wal = `${this.path}-wal`;
    const walNow = identityAt(wal);
    if (this.#wal === undefined) this.#wal = walNow;
    else if (walNow !== this.#wal) throw this.#fail(wal, this.#wal, walNow, committed);
  }

  #fail(
    path: string,
    expected: string,
    found: string | undefined,
    committed: boolean,
  ): StorageUnavailableError {
    const got =
      found === undefined ? "no file there" : `another file (device:inode ${found}) there`;
    const advice =
      "restore the original file if you have it, then restart the server (or reopen the store) to use the file the path names";
    const message = `expected ${path} to be the file this process opened (device:inode ${expected}), got ${got}: it was removed or replaced while the store was open`;
    // Every later operation fails before writing anything.
    this.#failure = new StorageUnavailableError(
      "STORAGE_UNAVAILABLE",
      `${message}, so nothing is written to it any more and nothing of this operation was stored; ${advice}`,
      { location: this.path, commitUnknown: false },
    );
    if (!committed) return this.#failure;
    return new StorageUnavailableError(
      "STORAGE_UNAVAILABLE",
      `${message} — found just after a commit, which went to the file that was removed or moved: it is not in the store at that path, and is in that file if it is put back; ${advice}`,
      { location: this.path, commitUnknown: true },
    );
  }
}
