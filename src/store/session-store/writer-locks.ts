// What a store remembers of the writer locks it holds: which it wrote least recently (held to a most), and the turns it left open as it let go of one.
import { isDeepStrictEqual } from "node:util";
import type { SessionHeader } from "../../generated.js";
import type { SessionLog } from "../../log/session-log.js";

/**
 * The writer locks a store holds, least recently written first, held to a most: writing one
 * moves it to the end, and past the most the one written least recently is let go of.
 */
export class LockedSessions {
  readonly #max: number;
  readonly #order = new Map<string, true>();

  /** @param max the most locks held at once. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Notes that `id` was written; returns the id to let go of when the most is passed. */
  written(id: string): string | undefined {
    this.#order.delete(id);
    this.#order.set(id, true);
    if (this.#order.size <= this.#max) return undefined;
    const oldest = this.#order.keys().next().value as string;
    this.#order.delete(oldest);
    return oldest;
  }

  /** Whether `id` is among the locks held (written since it was last let go of). */
  has(id: string): boolean {
    return this.#order.has(id);
  }

  forget(id: string): void {
    this.#order.delete(id);
  }
}

/**
 * Where a log stood when this store let go of its writer lock with a turn open (past the most locks
 * held, after a store failure, or unloading it): the turn is its own, still going on, as long as
 * the stored log is this one (same header) and still ends there — another process that wrote it
 * meanwhile (its repair, to begin with) moved the end.
 */
interface LetGo {
  readonly header: SessionHeader;
  readonly length: number;
}

/**
 * The most open turns a store remembers it let go of (see {@link LetGo}): past it, the turn let go
 * of longest ago is forgotten, and closed as interrupted when the session is written again. Each
 * costs its id and header (a few hundred bytes).
 */
const MAX_LET_GO_TURNS = 10_000;

/** The turns a store left open as it let go of their writer locks (see {@link LetGo}). */
export class LetGoTurns {
  readonly #turns = new Map<string, LetGo>();

  /**
   * Remembers where `log` (of `id`) stood as the store lets go of its writer lock: a turn it
   * leaves open goes on when it takes the lock again. The oldest past {@link MAX_LET_GO_TURNS} is
   * forgotten.
   */
  note(id: string, log: SessionLog): void {
    this.#turns.delete(id);
    if (log.openTurn === undefined) return;
    this.#turns.set(id, { header: log.header, length: log.length });
    if (this.#turns.size > MAX_LET_GO_TURNS) {
      this.#turns.delete(this.#turns.keys().next().value as string);
    }
  }

  /**
   * Whether the open turn of `log`, as the store now reads it, is the one it let go of (the log
   * still ends where it did): forgets what it remembered of `id` either way.
   */
  takeOwn(id: string, log: SessionLog): boolean {
    const letGo = this.#turns.get(id);
    this.#turns.delete(id);
    return (
      letGo !== undefined &&
      letGo.length === log.length &&
      isDeepStrictEqual(letGo.header, log.header)
    );
  }

  forget(id: string): void {
    this.#turns.delete(id);
  }

  clear(): void {
    this.#turns.clear();
  }
}
