// What listing in activity order learnt of each JSONL log's last event, kept while the file stays as it was.
import { statSync } from "node:fs";
import type { ListedSession } from "../backend.js";
import { BudgetedLru, stringBytes } from "./memory-budget.js";

/** The heap of an entry besides its strings: the entry, the listed session and its header. */
const ENTRY_BYTES = 320;

interface Entry {
  readonly key: string;
  readonly listed: ListedSession;
}

/** The estimated heap of what is kept of the file at `path`. */
function entryBytes(entry: Entry, path: string): number {
  const { header, title } = entry.listed;
  return (
    ENTRY_BYTES +
    stringBytes(path) +
    stringBytes(entry.key) +
    stringBytes(title) +
    stringBytes(header.id) +
    stringBytes(header.cwd) +
    stringBytes(header.parentSession)
  );
}

/**
 * The listing index orders by creation only, so activity order needs every matching log's last
 * event. Reading it costs an open and two reads per file; this keeps what was read, keyed by the
 * file's identity, size and modification time, so a later listing pays one `stat` per unchanged
 * file. An append (by any process) changes size and time; a replaced file changes its identity.
 * At most `budget` bytes (estimated) are kept, the files listed least recently dropped first: a
 * dropped entry is read again from its file by the next listing that needs it.
 */
export class ActivityCache {
  readonly #entries: BudgetedLru<string, Entry>;

  constructor(budget: number) {
    this.#entries = new BudgetedLru(budget, entryBytes);
  }

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
    this.#entries.set(path, { key, listed });
  }

  /** The estimated heap of what is kept. */
  get bytes(): number {
    return this.#entries.bytes;
  }
}
