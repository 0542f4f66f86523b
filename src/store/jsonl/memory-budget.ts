// The memory budget of what a JSONL backend keeps between calls: least-recently-used maps weighed in estimated bytes.
import { show } from "../../errors.js";
import { invalidParams } from "../errors/storage-errors.js";

/** The default of `JsonlBackendOptions.cacheBytes`: 32 MiB. */
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * How a backend's budget is shared by its three caches. File states (their turn-marker index
 * grows with a log's turns) take half; what listing in activity order read of each log's last
 * event and the derived titles take a quarter each. Each share is kept on its own, so that a long
 * listing does not push out the states of the logs being read, nor the other way round.
 */
export interface BudgetShares {
  readonly states: number;
  readonly activity: number;
  readonly titles: number;
}

/**
 * The shares of `cacheBytes`.
 * @throws StorageError INVALID_PARAMS when `cacheBytes` is not a safe integer of at least 1.
 */
export function budgetShares(cacheBytes: number): BudgetShares {
  if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 1) {
    throw invalidParams(
      "/cacheBytes",
      `expected cacheBytes to be an integer >= 1, got ${show(cacheBytes)}`,
    );
  }
  const quarter = Math.max(1, Math.floor(cacheBytes / 4));
  return { states: Math.max(1, cacheBytes - 2 * quarter), activity: quarter, titles: quarter };
}

/**
 * The heap a string takes, as an estimate: two bytes a character (V8 keeps non-Latin-1 text in
 * two, Latin-1 in one: the larger keeps the estimate above what is used) and its object header.
 */
export function stringBytes(text: string | undefined): number {
  return text === undefined ? 0 : 16 + 2 * text.length;
}

/**
 * A map kept in least-recently-used order whose entries are weighed (in estimated bytes, by
 * `weigh`, when they are set) and, optionally, counted: setting an entry drops the least recently
 * used ones until the total weight is within `budget` and the count within `maxEntries`. An entry
 * heavier than the whole budget is not kept at all. What a cache of this kind drops costs only
 * speed: its owner reads it again from the files.
 */
export class BudgetedLru<K, V> {
  readonly #budget: number;
  readonly #maxEntries: number;
  readonly #weigh: (value: V, key: K) => number;
  readonly #entries = new Map<K, { readonly value: V; readonly weight: number }>();
  #bytes = 0;

  constructor(budget: number, weigh: (value: V, key: K) => number, maxEntries = Infinity) {
    this.#budget = budget;
    this.#weigh = weigh;
    this.#maxEntries = maxEntries;
  }

  /** The value of `key`, now the most recently used. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` as the most recently used, weighed now; drops the least recently used beyond the bounds. */
  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.#weigh(value, key);
    if (weight > this.#budget) return;
    this.#entries.set(key, { value, weight });
    this.#bytes += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.#budget && this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.weight;
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.weight;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** The keys kept, least recently used first. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  /** The estimated weight of what is kept; at most the budget. */
  get bytes(): number {
    return this.#bytes;
  }
}
