// The file states a JSONL backend keeps between reads: at most a fixed number of sessions', least recently used out first.
import type { FileState } from "./file-state.js";

/** How many sessions' states a backend keeps by default. */
export const RETAINED_STATES = 1024;

/**
 * The {@link FileState}s of recently read or written logs by session id, at most `limit` of them;
 * the least recently used is dropped first. A backend is not told when a reader is done with a
 * session (a store unloads a session it only reads without a call), so this bound is what keeps
 * memory from growing with every session ever read. A dropped state costs only speed: the next
 * read or write of that log reads the file.
 */
export class StateCache {
  readonly #limit: number;
  readonly #states = new Map<string, FileState>();

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`expected a state limit of at least 1, got ${limit}`);
    }
    this.#limit = limit;
  }

  /** The state of `id`, now the most recently used. */
  get(id: string): FileState | undefined {
    const state = this.#states.get(id);
    if (state !== undefined) {
      this.#states.delete(id);
      this.#states.set(id, state);
    }
    return state;
  }

  /** Keeps `state` as the most recently used, dropping the least recently used beyond the limit. */
  set(id: string, state: FileState): void {
    this.#states.delete(id);
    this.#states.set(id, state);
    if (this.#states.size > this.#limit) {
      const oldest = this.#states.keys().next().value as string;
      this.#states.delete(oldest);
    }
  }

  delete(id: string): void {
    this.#states.delete(id);
  }

  clear(): void {
    this.#states.clear();
  }

  /** The ids whose states are kept. */
  ids(): IterableIterator<string> {
    return this.#states.keys();
  }
}
