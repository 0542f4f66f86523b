// What listing in activity order learnt of each JSONL log's last event, kept while the file stays as it was.
import { statSync } from "node:fs";
import type { ListedSession } from "../backend.js";

/** How many files' last events are kept before the cache starts over. */
const MAX_ENTRIES = 1_000_000;

/**
 * The listing index orders by creation only, so activity order needs every matching log's last
 * event. Reading it costs an open and two reads per file; this keeps what was read, keyed by the
 * file's identity, size and modification time, so a later listing pays one `stat` per unchanged
 * file. An append (by any process) changes size and time; a replaced file changes its identity.
 */
export class ActivityCache {
  readonly #entries = new Map<string, { readonly key: string; readonly listed: ListedSession }>();

  /** The stamp of the file at `path` now, or undefined when it is gone. */
  stamp(path: string): string | undefined {
    const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
    return stat === undefined ? undefined : `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  }

  /** What was read of the file at `path` when it had stamp `key`, if that is what it has now. */
  get(path: string, key: string): ListedSession | undefined {
    const known = this.#entries.get(path);
    return known?.key === key ? known.listed : undefined;
  }

  /** Keeps what was read of the file at `path`, stamped `key` just before the read. */
  set(path: string, key: string, listed: ListedSession): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(path, { key, listed });
  }
}
