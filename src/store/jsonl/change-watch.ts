// Learns of other processes' writes to watched logs: one fs.watch on the sessions folder, or polling stat when that cannot work.
import { type BigIntStats, type FSWatcher, statSync, watch } from "node:fs";
import { join } from "node:path";
import { isErrno } from "../../util/errno.js";
import { logFileName } from "./layout.js";

/**
 * How a JSONL backend learns of other processes' writes: "auto" watches the sessions folder
 * (inotify and the like: no cost while nothing changes) and polls only when watching fails;
 * "poll" always polls.
 */
export type WatchMode = "auto" | "poll";

/** Starts watching a folder, calling `listener` with the name of each entry that changed. */
export type WatchFolder = (
  dir: string,
  listener: (event: string, filename: string | null) => void,
) => FSWatcher;

/** How a {@link ChangeWatch} watches. */
export interface ChangeWatchOptions {
  readonly mode: WatchMode;
  /** How often each watched log is `stat`ed while polling. */
  readonly pollIntervalMs: number;
  /** Replaces `fs.watch` (so tests can make it fail). */
  readonly watchFolder?: WatchFolder | undefined;
}

/** `fs.watch` without keeping the process alive, names as UTF-8 strings. */
const NODE_WATCH: WatchFolder = (dir, listener) =>
  watch(dir, { persistent: false, encoding: "utf8" }, listener);

/**
 * Watches the logs of a changing set of sessions in one folder, and calls `onChange(id)` soon after
 * one of them may have changed — written, cut, created, deleted — by any process. Calls may be
 * spurious (every process's writes and lock files show up in the folder; only watched log names
 * are passed on) and are coalesced by nothing here. One `fs.watch` serves every session; it runs
 * only while some session is watched. When it cannot be started or fails later (watch limits,
 * a file system without notifications) — or in mode "poll" — each watched log is `stat`ed every
 * `pollIntervalMs` and the sessions whose file identity, size or modification time moved are
 * reported. Neither the watch nor the timer keeps the process alive.
 */
export class ChangeWatch {
  readonly #dir: string;
  readonly #options: ChangeWatchOptions;
  readonly #onChange: (id: string) => void;
  /** Watched log file names, to the session id each stands for. */
  readonly #ids = new Map<string, string>();
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** While polling: what each watched log's `stat` showed last (undefined: no file). */
  readonly #seen = new Map<string, string | undefined>();
  /** Whether polling stands in for a watch that failed only because the folder was missing. */
  #retryWatch = false;

  constructor(dir: string, options: ChangeWatchOptions, onChange: (id: string) => void) {
    this.#dir = dir;
    this.#options = options;
    this.#onChange = onChange;
  }

  /** Starts watching session `id`'s log (the folder's watch starts with the first session). */
  add(id: string): void {
    const name = logFileName(id);
    this.#ids.set(name, id);
    if (this.#timer !== undefined) this.#seen.set(name, this.#signature(name));
    if (this.#ids.size === 1) this.#start();
  }

  /** Stops watching session `id`'s log (and the folder, after the last session). */
  remove(id: string): void {
    const name = logFileName(id);
    if (!this.#ids.delete(name)) return;
    this.#seen.delete(name);
    if (this.#ids.size === 0) this.#stop();
  }

  /** Stops watching everything; idempotent. */
  close(): void {
    this.#ids.clear();
    this.#stop();
  }

  #start(): void {
    if (this.#options.mode === "poll") {
      this.#startPolling(false);
      return;
    }
    try {
      this.#startWatch();
    } catch (error) {
      // A folder not created yet can be watched once it is; any other failure (watch limits,
      // no notifications on this file system) is not going away.
      this.#startPolling(isErrno(error, "ENOENT"));
    }
  }

  /** @throws the file system's error when the folder cannot be watched. */
  #startWatch(): void {
    const watcher = (this.#options.watchFolder ?? NODE_WATCH)(this.#dir, (_event, filename) => {
      if (filename === null) {
        // The platform did not say which entry changed: any watched log may have.
        this.#notifyAll();
        return;
      }
      const id = this.#ids.get(filename);
      if (id !== undefined) this.#onChange(id);
    });
    watcher.on("error", () => {
      if (this.#watcher !== watcher) return;
      this.#closeWatcher();
      this.#startPolling(false);
      // Whatever happened between the failure and the first poll would otherwise go unseen.
      this.#notifyAll();
    });
    this.#watcher = watcher;
  }

  #startPolling(retryWatch: boolean): void {
    this.#retryWatch = retryWatch;
    for (const name of this.#ids.keys()) this.#seen.set(name, this.#signature(name));
    this.#timer = setInterval(() => this.#poll(), this.#options.pollIntervalMs);
    this.#timer.unref();
  }

  #poll(): void {
    if (this.#retryWatch && this.#tryWatch()) return;
    for (const [name, id] of this.#ids) {
      const now = this.#signature(name);
      if (now === this.#seen.get(name)) continue;
      this.#seen.set(name, now);
      this.#onChange(id);
    }
  }

  /** Switches from polling to a watch of the folder once it exists; whether it did. */
  #tryWatch(): boolean {
    try {
      this.#startWatch();
    } catch (error) {
      // The folder exists now but cannot be watched: polling stays, without retrying.
      if (!isErrno(error, "ENOENT")) this.#retryWatch = false;
      return false;
    }
    this.#stopPolling();
    // A change between the last poll and the start of the watch would otherwise go unseen.
    this.#notifyAll();
    return true;
  }

  #notifyAll(): void {
    for (const id of [...this.#ids.values()]) this.#onChange(id);
  }

  /** What identifies a log's contents cheaply: identity, size, modification time; undefined when absent. */
  #signature(name: string): string | undefined {
    let info: BigIntStats | undefined;
    try {
      info = statSync(join(this.#dir, name), { bigint: true, throwIfNoEntry: false });
    } catch {
      // Unreadable now (permissions, a vanished folder): treated as absent, reported when it changes.
      return undefined;
    }
    return info === undefined ? undefined : `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
  }

  #stop(): void {
    this.#closeWatcher();
    this.#stopPolling();
  }

  #closeWatcher(): void {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    watcher?.close();
  }

  #stopPolling(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#retryWatch = false;
    this.#seen.clear();
  }
}
