// The message text a store's live sessions keep unpacked, held to one budget: older messages are deflated off the append's path, and past the budget the logs appended to least recently.
import type { SessionLog } from "../../log/session-log.js";

/**
 * Messages kept as derived (read back from storage, or appended parsed) that a writer's surface
 * may hold unpacked before an append packs them in line rather than on a later turn of the event
 * loop (see {@link TextBudget.packLater}): about 3 MB of message text in a real log.
 */
const PACK_BACKLOG = 1024;

/**
 * The most message text a store's live sessions keep unpacked as the text of their events (the
 * messages of batches taken from a caller, see `TextMessage`), in UTF-16 code units: past it, the
 * sessions appended to least recently are packed, oldest messages first, down to half of it.
 * Holding the text costs about its size; packing it costs a deflate on the append's path. 16 Mi:
 * the messages of a 300,000-event real log, and a sixth of what 1,000 open sessions may hold in
 * all (M2).
 * @internal
 */
export const UNPACKED_TEXT_BUDGET = 16 * 1024 * 1024;

/** The unpacked message text of a store's live logs, counted and held to a budget. */
export class TextBudget {
  readonly #budget: number;
  /** Logs appended to whose older messages are to be deflated (see {@link packLater}). */
  readonly #toPack = new Set<SessionLog>();
  /**
   * The live logs that keep message text unpacked, least recently appended to first (a Map keeps
   * insertion order), with how much each kept at its last count (see {@link keep}).
   */
  readonly #kept = new Map<string, { log: SessionLog; text: number }>();
  /** The sum of {@link #kept}'s counts. */
  #total = 0;

  /** @param budget the most text kept unpacked in all, in UTF-16 code units. */
  constructor(budget: number) {
    this.#budget = budget;
  }

  /**
   * Deflates the older messages of a log just appended to on a later turn of the event loop: not
   * on the append's path, but while the next batch waits on storage (a writer appends batch after
   * batch; each waits on a write and its flush, when this process has nothing else to do).
   */
  packLater(log: SessionLog): void {
    // A writer that appends without ever letting the event loop turn (a loop of appends whose
    // writes and flushes all complete on this thread) never reaches the later turn: past a
    // backlog, it packs in line, so what it keeps unpacked stays bounded.
    if (log.unpackedMessages >= PACK_BACKLOG) log.packOlderMessages();
    const first = this.#toPack.size === 0;
    this.#toPack.add(log);
    if (!first) return;
    setImmediate(() => {
      const logs = [...this.#toPack];
      this.#toPack.clear();
      for (const pending of logs) {
        pending.packOlderMessages();
        // It packs text too: the count follows.
        const id = pending.header.id;
        const kept = this.#kept.get(id);
        if (kept?.log === pending) this.#recount(id, kept);
      }
    });
  }

  /**
   * Counts the message text `log` (the live log of `id`, just appended to) keeps unpacked and,
   * past the budget in all, packs the logs appended to least recently, oldest messages first,
   * until half of it is left: a writer keeps its newest messages as text, which costs nothing to
   * keep, and a store with many open sessions holds a bounded amount of it.
   */
  keep(id: string, log: SessionLog): void {
    this.forget(id);
    const text = log.unpackedText;
    if (text === 0) return;
    this.#kept.set(id, { log, text });
    this.#total += text;
    if (this.#total <= this.#budget) return;
    const target = this.#budget / 2;
    for (const [oldest, kept] of this.#kept) {
      if (this.#total <= target) break;
      kept.log.packOlderMessages(Math.max(0, kept.text - (this.#total - target)));
      this.#recount(oldest, kept);
    }
  }

  /** No longer counts the text of `id`'s log (let go of, or counted anew). */
  forget(id: string): void {
    const kept = this.#kept.get(id);
    if (kept === undefined) return;
    this.#total -= kept.text;
    this.#kept.delete(id);
  }

  /** Counts again the text a kept log holds, in place. */
  #recount(id: string, kept: { log: SessionLog; text: number }): void {
    const text = kept.log.unpackedText;
    this.#total += text - kept.text;
    kept.text = text;
    if (text === 0) this.#kept.delete(id);
  }
}
