// Event rows framed the way JSONL lines are: the intact run, then a torn tail or corruption, by the whole log or a page.
import { StorageError, show } from "../../errors.js";
import { valuesEventBuilder } from "./settled-rows.js";

/** An event row as eventLines reads it: its seq, its type and its rebuilt JSONL line. */
export interface EventRow {
  readonly seq: number;
  readonly type: string;
  readonly line: unknown;
}

/** A log read from rows: the intact events and whether a torn tail follows. */
export interface FramedLog {
  readonly events: unknown[];
  readonly tornTail: boolean;
}

/** Event rows framed but not judged yet: whether a bad row is corruption may need one more lookup. */
export interface ScannedRows {
  readonly events: unknown[];
  /** The first bad row: the seq expected there and what was found instead. */
  readonly bad: { readonly seq: number; readonly what: string } | undefined;
  /** The seq of the last `turn/end` row read, -1 when none was. */
  readonly lastTurnEnd: number;
  /** How many rows were read, and the seq of the last one (-1 when none was). */
  readonly count: number;
  readonly lastSeq: number;
}

/** How {@link scanEventRows} reads one form of row: its seq, its type, and the event it holds. */
export interface RowForm<R> {
  seq(row: R): unknown;
  type(row: R): unknown;
  /** The event the row holds, or undefined when it holds none (a damaged row). */
  event(row: R): unknown;
  /** The row as an error message shows it. */
  show(row: R): string;
}

/** Rows whose event is one JSONL line, rebuilt by the statement (eventLines). */
export const LINE_ROWS: RowForm<EventRow> = {
  seq: (row) => row.seq,
  type: (row) => row.type,
  event: (row) => parseLine(row.line),
  show: (row) => show(row.line),
};

/**
 * Rows of values in the order of `columns` (eventRows), whose members named in `json` are JSON
 * text: each event is built from its columns, as a settled read builds it.
 */
export function valueRowForm(
  columns: readonly string[],
  json: ReadonlySet<string>,
): RowForm<readonly unknown[]> {
  const seqAt = columns.indexOf("seq");
  const typeAt = columns.indexOf("type");
  const build = valuesEventBuilder(columns, json);
  return {
    seq: (row) => row[seqAt],
    type: (row) => row[typeAt],
    event: (row) => build(row),
    show: (row) => show(row),
  };
}

/**
 * Frames event rows (in seq order, from seq `first` on): keeps the longest run of rows that hold
 * an event with `seq` equal to `first` plus the index. Rows after the first bad one (a row that
 * holds no event, or a seq missing) are not parsed; their types are still read, for
 * {@link judgeEventRows}. An array of rows is taken, not only read: each entry is cleared once
 * read, so that a row's text can be collected as soon as its event is built (see `settledEvents`).
 */
export function scanEventRows(rows: Iterable<EventRow>, first: number): ScannedRows;
export function scanEventRows<R>(rows: Iterable<R>, first: number, form: RowForm<R>): ScannedRows;
export function scanEventRows<R>(
  rows: Iterable<R>,
  first: number,
  form: RowForm<R> = LINE_ROWS as unknown as RowForm<R>,
): ScannedRows {
  const events: unknown[] = [];
  let bad: { seq: number; what: string } | undefined;
  let lastTurnEnd = -1;
  let count = 0;
  let lastSeq = -1;
  const taken = Array.isArray(rows) ? (rows as (R | undefined)[]) : undefined;
  let at = 0;
  for (const row of rows) {
    if (taken !== undefined) taken[at++] = undefined;
    const rowSeq = form.seq(row) as number;
    count++;
    lastSeq = rowSeq;
    if (form.type(row) === "turn/end") lastTurnEnd = rowSeq;
    if (bad !== undefined) continue;
    const seq = first + events.length;
    if (rowSeq !== seq) {
      bad = { seq, what: `no row (the next row has seq ${rowSeq})` };
      continue;
    }
    const event = form.event(row);
    if (event === undefined || (event as { seq?: unknown }).seq !== seq) {
      bad = { seq, what: `a row that is not a JSON event: ${form.show(row)}` };
      continue;
    }
    events.push(event);
  }
  return { events, bad, lastTurnEnd, count, lastSeq };
}

/**
 * The seq from which a page read with `LIMIT take` must look up the next `turn/end` before its bad
 * row can be judged; undefined when its own rows settle it (no bad row, a `turn/end` after it, or
 * fewer rows than asked: the end of the log was read), as they always do for a whole read (`take`
 * undefined). So the one indexed lookup is made only for a full page that holds a bad row.
 */
export function turnEndLookup(scanned: ScannedRows, take: number | undefined): number | undefined {
  const { bad, lastTurnEnd, count, lastSeq } = scanned;
  if (bad === undefined || lastTurnEnd >= bad.seq) return undefined;
  return take !== undefined && count >= take ? lastSeq + 1 : undefined;
}

/**
 * Judges scanned rows as the whole log would be: a bad row at or before the last `turn/end` (of
 * the rows read, or `laterTurnEnd`, what {@link turnEndLookup}'s lookup found after them) is
 * corruption; after it, it starts a torn tail (repair deletes it). Framing from `first` > 0 judges
 * the rows from `first` on as framing the whole log would when the rows before `first` are intact:
 * a `turn/end` before `first` is before every bad row it could make corruption.
 * @throws StorageError CORRUPT_LOG naming `location` (the table and session) and the seq.
 */
export function judgeEventRows(
  scanned: ScannedRows,
  location: string,
  laterTurnEnd?: number,
): FramedLog {
  const { bad, events } = scanned;
  const turnEnd = laterTurnEnd ?? scanned.lastTurnEnd;
  if (bad !== undefined && bad.seq <= turnEnd) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected an intact event at seq ${bad.seq} of ${location} (a turn/end follows at seq ${turnEnd}), found ${bad.what}`,
      { location, seq: bad.seq },
    );
  }
  return { events, tornTail: bad !== undefined };
}

function parseLine(line: unknown): unknown {
  if (typeof line !== "string") return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
