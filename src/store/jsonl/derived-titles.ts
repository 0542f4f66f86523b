// The derived titles a JSONL backend found, kept within a byte budget so that listing them again reads no log.
import type { SessionHeader } from "../../generated.js";
import { BudgetedLru, stringBytes } from "./memory-budget.js";
import { readDerivedTitle } from "./title-files.js";

/** The heap of an entry besides its strings. */
const ENTRY_BYTES = 64;

interface Found {
  readonly createdAt: number;
  readonly title: string;
}

/**
 * Derived titles by session id, each read from its log's first lines once found and then kept
 * (a log's first user message never changes; a session deleted and created again has another
 * createdAt), at most `budget` bytes of them (estimated), the least recently used dropped first.
 * A dropped title is read again from its log.
 */
export class DerivedTitles {
  readonly #found: BudgetedLru<string, Found>;

  constructor(budget: number) {
    this.#found = new BudgetedLru(
      budget,
      (found, id) => ENTRY_BYTES + stringBytes(id) + stringBytes(found.title),
    );
  }

  /** The derived title of the session `header` names, whose log is at `path` (undefined: none). */
  async of(header: SessionHeader, path: string | undefined): Promise<string | undefined> {
    const known = this.#found.get(header.id);
    if (known !== undefined && known.createdAt === header.createdAt) return known.title;
    if (path === undefined) return undefined;
    const title = await readDerivedTitle(path);
    if (title !== undefined) this.#found.set(header.id, { createdAt: header.createdAt, title });
    return title;
  }

  delete(id: string): void {
    this.#found.delete(id);
  }

  /** The estimated heap of what is kept. */
  get bytes(): number {
    return this.#found.bytes;
  }
}
