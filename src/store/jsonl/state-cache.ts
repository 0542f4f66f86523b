// The file states a JSONL backend keeps between reads: within a byte budget and a count, least recently used out first.
import type { FileState } from "./file-state.js";
import { BudgetedLru, stringBytes } from "./memory-budget.js";

/** How many sessions' states a backend keeps at most by default (the byte budget usually binds first). */
export const RETAINED_STATES = 1024;

/**
 * The heap one turn marker takes, estimated from a heap measured with 4,000 markers a state: an
 * object of four small members (about 32 bytes) and its slot in the array, with the array's room
 * to grow (a marker measured 55–60 bytes).
 */
export const MARKER_BYTES = 64;

/**
 * The heap of a state besides its markers and strings: the state and header objects, the array,
 * the line check's buffer (64 bytes of data and a `Buffer` object).
 */
const STATE_BYTES = 640;

/** The estimated heap of `state`: it grows with the log's turns (two markers a turn). */
export function stateBytes(state: FileState): number {
  const { header } = state;
  return (
    STATE_BYTES +
    state.markers.length * MARKER_BYTES +
    stringBytes(state.key) +
    stringBytes(header.id) +
    stringBytes(header.cwd) +
    stringBytes(header.parentSession)
  );
}

/**
 * The {@link FileState}s of recently read or written logs by session id, within `budget` bytes (as
 * {@link stateBytes} estimates them) and at most `limit` of them; the least recently used is
 * dropped first. A backend is not told when a reader is done with a session (a store unloads a
 * session it only reads without a call), so these bounds are what keep memory from growing with
 * every session ever read: a count alone would not, as a state's turn markers grow with its log.
 * A dropped state costs only speed: the next read or write of that log reads the file.
 */
export class StateCache {
  readonly #states: BudgetedLru<string, FileState>;

  constructor(limit: number, budget: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`expected a state limit of at least 1, got ${limit}`);
    }
    this.#states = new BudgetedLru(budget, stateBytes, limit);
  }

  /** The state of `id`, now the most recently used. */
  get(id: string): FileState | undefined {
    return this.#states.get(id);
  }

  /**
   * Keeps `state` as the most recently used, dropping the least recently used beyond the bounds.
   * Set again after its markers grow (an append pushes to them), so that its weight follows.
   */
  set(id: string, state: FileState): void {
    this.#states.set(id, state);
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

  /** The estimated heap of the states kept. */
  get bytes(): number {
    return this.#states.bytes;
  }
}
