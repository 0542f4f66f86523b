// Where a JSONL store's logs are and how they are opened and written: the sessions folder, each log's path (a long id's previous name moved to its own), the queue and writer lock of each id, and new logs published whole.
import { openSync } from "node:fs";
import { type FileHandle, link, mkdir, open, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { isErrno } from "../../util/errno.js";
import { KeyedQueue } from "../../util/keyed-queue.js";
import { sessionTaken } from "../errors/storage-errors.js";
import { refusedOr } from "../errors/storage-refusal.js";
import { encodeSessionId } from "../ids/id-encoding.js";
import type { LockFiles } from "../locks/lock-files.js";
import type { DurableFiles } from "./durable-file.js";
import type { OpenFile } from "./file-state.js";
import { LOG_SUFFIX, logFileName } from "./layout.js";
import { legacyLogToMove, legacyOwnerOf, locateLog } from "./legacy-names.js";
import type { ListIndex } from "./list-index.js";

/**
 * The sessions folder of a JSONL store as its backend uses it: paths, opening, the per-id queue
 * of writes and the writer lock they hold, and publishing a new log atomically.
 */
export class LogFolder {
  /** The one folder holding every log, lock and temp file. */
  readonly dir: string;
  readonly #files: DurableFiles;
  readonly #locks: LockFiles;
  readonly #index: ListIndex;
  readonly #assertOpen: () => void;
  readonly #queue = new KeyedQueue();
  #ready: Promise<void> | undefined;

  /**
   * @param assertOpen throws when the backend is closed (checked before a write is queued).
   */
  constructor(
    dir: string,
    files: DurableFiles,
    locks: LockFiles,
    index: ListIndex,
    assertOpen: () => void,
  ) {
    this.dir = dir;
    this.#files = files;
    this.#locks = locks;
    this.#index = index;
    this.#assertOpen = assertOpen;
  }

  /** Where the log of `id` is (see {@link locateLog}), or where it would be when it has none. */
  path(id: string): string {
    return this.where(id) ?? join(this.dir, logFileName(id));
  }

  /** Where the log of `id` is, or undefined when it certainly has none; see {@link locateLog}. */
  where(id: string): string | undefined {
    return locateLog(this.dir, id);
  }

  /** Where the log of `id` is under its own name, without looking at the folder. */
  ownPath(id: string): string {
    return join(this.dir, logFileName(id));
  }

  /** Runs `task` after the earlier tasks of `id` in this instance (no writer lock, no write counted). */
  run<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.#queue.run(id, task);
  }

  /** Runs a write after the earlier ones of the same id, holding the id's writer lock throughout. */
  exclusive<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.queued(id, async () => {
      const name = encodeSessionId(id);
      if (this.#locks.holds(name)) {
        await this.#adoptLegacy(id, name);
        return await task();
      }
      const release = await this.#locks.acquire(name, id);
      try {
        await this.#adoptLegacy(id, name);
        return await task();
      } finally {
        await release();
      }
    });
  }

  /**
   * Runs a write after the earlier ones of the same id in this instance, counted as a write going
   * on (see {@link DurableFiles.writing}), without a writer lock: a fork's child, published
   * atomically; {@link exclusive} for the others.
   */
  queued<T>(id: string, task: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    return this.#queue.run(id, () =>
      this.#files.writing(async () => {
        try {
          return await task();
        } catch (error) {
          throw refused(error, this.ownPath(id));
        }
      }),
    );
  }

  /**
   * Publishes a new log of `id` whole: written under a temp name by `fill`, then linked to its
   * name, which fails when the name is taken.
   * @throws StorageError SESSION_ALREADY_EXISTS.
   */
  async publish(
    id: string,
    fill: (write: (bytes: Uint8Array) => Promise<void>) => Promise<void>,
  ): Promise<{ key: string; size: number }> {
    await this.#ensureDir();
    // The previous build's log of a long id may sit under this id's name: it moves to its own.
    const occupant = legacyOwnerOf(this.dir, id);
    if (occupant !== undefined) await this.exclusive(occupant, async () => undefined);
    try {
      return await this.#files.publish(this.dir, logFileName(id), fill);
    } catch (error) {
      if (isErrno(error, "EEXIST")) {
        throw sessionTaken(id);
      }
      throw error;
    }
  }

  /** Opens the log of `id`; undefined when it has none. */
  async openFile(id: string, flags: "r" | "r+"): Promise<FileHandle | undefined> {
    for (const path of this.#pathsToOpen(id)) {
      try {
        return await open(path, flags);
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
      }
    }
    return undefined;
  }

  /**
   * {@link openFile} for reading, by a synchronous call: where a fork reads a few blocks of a log
   * or copies it from the page cache, the round trip through the thread pool costs more than the
   * open. The caller closes the descriptor.
   */
  openFileSync(id: string): OpenFile | undefined {
    for (const path of this.#pathsToOpen(id)) {
      try {
        return { fd: openSync(path, "r") };
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
      }
    }
    return undefined;
  }

  /**
   * Where to open the log of `id`, in turn while the one before is missing: where it is found,
   * then its own name (a log under the previous build's name may have just been moved to it).
   */
  #pathsToOpen(id: string): string[] {
    const path = this.where(id);
    if (path === undefined) return [];
    const own = join(this.dir, logFileName(id));
    return path === own ? [path] : [path, own];
  }

  /**
   * Under a long id's writer lock: moves its log from the name the previous build gave it to its
   * own (a link, then the old name removed, then the folder flushed), so that every later write,
   * lock and watch of it uses one name. Nothing happens for any other id.
   */
  async #adoptLegacy(id: string, name: string): Promise<void> {
    const legacyPath = legacyLogToMove(this.dir, id, `${name}${LOG_SUFFIX}`);
    if (legacyPath === undefined) return;
    try {
      await link(legacyPath, join(this.dir, logFileName(id)));
    } catch (error) {
      // Linked by an earlier move that stopped before removing the old name.
      if (!isErrno(error, "EEXIST")) throw error;
    }
    await unlink(legacyPath);
    // The log's new name is read into the index when the folder is next checked.
    this.#index.noteRemoved(basename(legacyPath));
    await this.#files.syncDir(this.dir);
  }

  async #ensureDir(): Promise<void> {
    this.#ready ??= (async () => {
      const created = await mkdir(this.dir, { recursive: true });
      if (created === undefined) return;
      // A new folder is durable once its parent's entry is: flush the parent of each new level.
      for (let dir = this.dir; dir !== dirname(dir); dir = dirname(dir)) {
        await this.#files.syncDir(dirname(dir));
        if (dir === created) break;
      }
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }
}

/**
 * A file-system failure as the store reports it: STORAGE_REFUSED naming the file it concerns (the
 * one the error names, unless a temp file), else `fallback`; any other error as it is.
 */
export function refused(error: unknown, fallback: string): unknown {
  const path = (error as { path?: unknown } | undefined)?.path;
  const named = typeof path === "string" && !path.endsWith(".tmp") ? path : fallback;
  return refusedOr(error, named);
}
