// Reading a stored session into timeline rows page by page, and choosing the rows to show (one turn, the last N).

import { sessionNotFound } from "../store/errors/storage-errors.js";
import type { SessionStore } from "../store/session-store.js";
import { TimelineBuilder, type TimelineRow, type TimelineSummary } from "../view/timeline.js";
import { CliError } from "./cli-error.js";

/** Events read a page at a time: memory holds one page and the rows being shown. */
const PAGE = 1_000;

/** The rows a timeline shows: one turn's (`turn`), the last `tail` rows, or both. */
export interface RowChoice {
  readonly turn?: number;
  /** The most rows to keep (the last ones); undefined for every row. */
  readonly tail?: number;
}

/**
 * Keeps the rows a {@link RowChoice} asks for, as they come: only those of its turn (from the
 * turn's row to its end, a chunk row within it too), and of those only the last `tail`.
 */
export class RowSelection {
  readonly #choice: RowChoice;
  #inside = false;
  #found = false;
  readonly #turns = { first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY };

  constructor(choice: RowChoice) {
    this.#choice = choice;
  }

  /** Whether `row` is among the rows asked for (it must be given every row, in order). */
  accepts(row: TimelineRow): boolean {
    const turn = this.#choice.turn;
    if (turn === undefined) return true;
    if (row.kind === "turn") {
      this.#turns.first = Math.min(this.#turns.first, row.turn);
      this.#turns.last = Math.max(this.#turns.last, row.turn);
      if (row.turn === turn) this.#inside = this.#found = true;
    }
    const inside = this.#inside;
    if (row.kind === "turn-end" && row.turn === turn) this.#inside = false;
    return inside;
  }

  /**
   * @throws CliError TURN_NOT_FOUND when a turn was asked for and the log has none of that number.
   */
  checkFound(id: string): void {
    const turn = this.#choice.turn;
    if (turn === undefined || this.#found) return;
    const { first, last } = this.#turns;
    const got =
      first > last ? "no turns" : first === last ? `turn ${first}` : `turns ${first}–${last}`;
    throw new CliError(
      "TURN_NOT_FOUND",
      `expected a turn ${turn} in session ${JSON.stringify(id)}, got ${got}`,
    );
  }
}

/** The last `size` of the values pushed, and how many were pushed before them. */
export class Tail<T> {
  readonly #size: number;
  #values: T[] = [];
  #dropped = 0;

  constructor(size: number) {
    this.#size = size;
  }

  push(value: T): void {
    this.#values.push(value);
    // Dropping in batches keeps pushing cheap (no shift per value).
    if (this.#values.length >= 2 * this.#size) this.#trim();
  }

  /** The values kept, oldest first. */
  values(): T[] {
    this.#trim();
    return this.#values;
  }

  /** How many values were pushed before those kept. */
  get dropped(): number {
    this.#trim();
    return this.#dropped;
  }

  #trim(): void {
    const extra = this.#values.length - this.#size;
    if (extra <= 0) return;
    this.#values.splice(0, extra);
    this.#dropped += extra;
  }
}

/** What the start of a stored session says, read before its events: header and length now. */
export interface StoredStart {
  readonly summary: TimelineSummary;
  /** The seq after the last event shown: where following goes on. */
  readonly length: number;
}

/**
 * The header and length of a stored session now, without reading its events (and without the
 * writer lock). @throws StorageError SESSION_NOT_FOUND.
 */
export async function storedStart(store: SessionStore, id: string): Promise<StoredStart> {
  const point = await store.backend.forkPoint(id, undefined);
  if (point === undefined) throw sessionNotFound(id);
  const { header, length } = point;
  const title = await store.title(id);
  return {
    summary: {
      header,
      ...(title === undefined ? {} : { title }),
      eventCount: length,
      seedLength: header.seedLength ?? 0,
    },
    length,
  };
}

/**
 * Reads a stored session's first `length` events page by page and hands on their rows, as far as
 * they are final, to `onRows`; stops early when `onRows` answers false (the reader went away).
 * @returns the builder, to follow the session on, and the timeline's summary (with `openTurn`).
 * @throws StorageError SESSION_NOT_FOUND, CORRUPT_LOG, FORMAT_UNSUPPORTED.
 */
export async function readRows(
  store: SessionStore,
  id: string,
  start: StoredStart,
  onRows: (rows: readonly TimelineRow[]) => Promise<boolean>,
): Promise<{ builder: TimelineBuilder; summary: TimelineSummary }> {
  const builder = new TimelineBuilder(start.summary.header);
  if (start.length > 0) {
    for await (const page of store.pages(id, { limit: PAGE })) {
      const events = page.events.filter((e) => e.seq < start.length);
      if (!(await onRows(builder.read(events))))
        return { builder, summary: { ...start.summary, ...builder.summary() } };
      if (page.nextSeq >= start.length) break;
    }
  }
  await onRows(builder.finish());
  return { builder, summary: { ...start.summary, ...builder.summary() } };
}
