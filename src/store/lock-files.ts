// One writer per session across processes on one host: exclusive-create lock files that record a pid.
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { StorageError, show } from "../errors.js";
import type { ReleaseLock } from "./backend.js";
import { refusedOr } from "./storage-refusal.js";

/** Every instance that may hold locks, so that one exit handler releases them all. */
const living = new Set<LockFiles>();

function releaseEverything(): void {
  for (const locks of [...living]) locks.releaseAllSync();
}

/** A `.steal` marker older than this is left over from a crash and may be removed. */
const STALE_STEAL_MS = 10_000;

/**
 * Lock files in one folder, one per session (`<name>.lock`, holding the owner's pid). A lock whose
 * pid is no longer alive on this host is stale and is taken over. Locks this instance holds are
 * counted, so taking one twice returns a second release. Every lock still held is removed at exit.
 */
export class LockFiles {
  readonly dir: string;
  readonly #held = new Map<string, number>();

  constructor(dir: string) {
    this.dir = dir;
    if (living.size === 0) process.on("exit", releaseEverything);
    living.add(this);
  }

  /**
   * Takes the lock `name` for `sessionId`.
   * @throws StorageError SESSION_BUSY when a live process (or another holder in this one) has it;
   *   StorageRefusedError STORAGE_REFUSED (location: the lock file) when the folder is full,
   *   read-only or may not be written.
   */
  async acquire(name: string, sessionId: string): Promise<ReleaseLock> {
    const count = this.#held.get(name);
    if (count === undefined) {
      try {
        this.#take(name, sessionId);
      } catch (error) {
        throw refusedOr(error, this.#path(name));
      }
    }
    this.#held.set(name, (count ?? 0) + 1);
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(name) ?? 1) - 1;
      if (left > 0) {
        this.#held.set(name, left);
        return;
      }
      this.#held.delete(name);
      this.#remove(name);
    };
  }

  /** Whether this instance holds the lock `name`. */
  holds(name: string): boolean {
    return this.#held.has(name);
  }

  /** Removes every lock this instance holds (at exit, or when the backend closes). */
  releaseAllSync(): void {
    for (const name of this.#held.keys()) this.#remove(name);
    this.#held.clear();
    living.delete(this);
    if (living.size === 0) process.removeListener("exit", releaseEverything);
  }

  #path(name: string): string {
    return join(this.dir, `${name}.lock`);
  }

  #take(name: string, sessionId: string): void {
    mkdirSync(this.dir, { recursive: true });
    if (this.#tryCreate(name)) return;
    const owner = readPid(this.#path(name));
    if (owner !== undefined && isAlive(owner)) throw busy(sessionId, owner);
    // The owner is gone: take the lock over, one stealer at a time.
    const steal = join(this.dir, `${name}.steal`);
    let marker: number;
    try {
      marker = openSync(steal, "wx");
    } catch {
      clearStaleSteal(steal);
      throw busy(sessionId, owner);
    }
    try {
      const again = readPid(this.#path(name));
      if (again !== undefined && again !== owner && isAlive(again)) throw busy(sessionId, again);
      rmSync(this.#path(name), { force: true });
      if (!this.#tryCreate(name)) throw busy(sessionId, readPid(this.#path(name)));
    } finally {
      closeSync(marker);
      rmSync(steal, { force: true });
    }
  }

  #tryCreate(name: string): boolean {
    let fd: number;
    try {
      fd = openSync(this.#path(name), "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } catch (error) {
      // A lock file without a pid (a full disk) would be taken for a stale one: none is left.
      closeSync(fd);
      rmSync(this.#path(name), { force: true });
      throw error;
    }
    closeSync(fd);
    return true;
  }

  #remove(name: string): void {
    const path = this.#path(name);
    if (readPid(path) === process.pid) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone: nothing to release.
      }
    }
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid is alive on this host (signal 0 checks without sending). */
function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function clearStaleSteal(path: string): void {
  try {
    if (Date.now() - statSync(path).mtimeMs > STALE_STEAL_MS) rmSync(path, { force: true });
  } catch {
    // Gone already.
  }
}

function busy(sessionId: string, pid: number | undefined): StorageError<"SESSION_BUSY"> {
  return new StorageError(
    "SESSION_BUSY",
    `expected no other writer of session ${show(sessionId)}, got one held by process ${pid ?? "unknown"}`,
    { sessionId },
  );
}
