// How a JSONL backend is set up: durability, watching for other processes' writes, and the memory it may keep of what it read.
import type { WatchFolder, WatchMode } from "./change-watch.js";
import type { Durability, FileOps } from "./durable-file.js";
import type { budgetShares } from "./memory-budget.js";

/** How a JSONL backend writes. */
export interface JsonlBackendOptions {
  /**
   * "fsync" (the default): an acknowledged write survives a power cut — each batch, temp file
   * and folder change is flushed. "process": it survives a killed process only (no flushes).
   */
  readonly durability?: Durability;
  /** @internal Replaces file operations, so tests can make a real write or flush fail. */
  readonly fileOps?: Partial<FileOps>;
  /** @internal The read size of streamed reads, so tests can put lines across chunk boundaries. */
  readonly chunkBytes?: number;
  /**
   * How `subscribe` learns of other processes' writes: "auto" (the default) watches the sessions
   * folder with `fs.watch` and polls only when that fails; "poll" always polls.
   */
  readonly watchMode?: WatchMode;
  /** How often each subscribed log is `stat`ed while polling, in milliseconds (default 100). */
  readonly pollIntervalMs?: number;
  /** @internal Replaces `fs.watch`, so tests can make watching the folder fail. */
  readonly watchFolder?: WatchFolder;
  /**
   * @internal How many sessions' file states are kept for the next read or write (default 1024),
   * so tests can see one dropped.
   */
  readonly retainedStates?: number;
  /**
   * The most memory, in estimated bytes, kept of what was read of logs between calls, however many
   * sessions are touched (default 32 MiB; see {@link budgetShares}); a dropped entry is read again.
   * @throws StorageError INVALID_PARAMS (from the constructor) unless an integer >= 1.
   */
  readonly cacheBytes?: number;
}

/** The default of {@link JsonlBackendOptions.pollIntervalMs}. */
export const POLL_INTERVAL_MS = 100;
