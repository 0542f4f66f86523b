// The rows of a settled read (resuming a log from its message-producing events): columns to events.
import { StorageError, show } from "../../errors.js";
import type { JsonColumns } from "./event-members.js";

/**
 * Checks that a log has a row for every seq before `settled`.
 * @throws StorageError CORRUPT_LOG naming `location` when rows are missing.
 */
export function checkSettledCount(count: number, settled: number, location: string): void {
  if (count === settled) return;
  throw new StorageError(
    "CORRUPT_LOG",
    `expected ${settled} event rows before the last turn/end of ${location}, found ${count} (a hole)`,
    { location },
  );
}

/**
 * The events of settled rows, each built from its columns in their order (the statement lists
 * them in envelope member order, as a JSONL line holds them): a row is an object of members, or
 * an array of values in the order of `columns` (the cheaper form, where the driver gives it);
 * `json` names the members stored as JSON text (see {@link jsonMembers}); NULL columns are absent
 * members. A row whose JSON columns do not parse, or whose seqs go back, is damage before the last
 * turn/end: corruption, never a torn tail.
 *
 * Rows of values may hold other columns first: the event's columns start at `offset`. An array
 * of rows is taken, not only read: each entry is cleared once its event is built, so that the
 * text of the rows parsed so far can be collected while the rest are (a whole result in memory,
 * as a driver hands it over, would otherwise stay live to the end, and every young-generation
 * collection on the way would copy it).
 * @throws StorageError CORRUPT_LOG naming `location` (the table and session) and the seq.
 */
export function settledEvents(
  rows: Iterable<object> | (readonly unknown[] | undefined)[],
  json: ReadonlySet<string>,
  location: string,
  columns?: readonly string[],
  offset = 0,
): unknown[] {
  const parsed = columns?.map((member) => json.has(member));
  const seqAt = (columns?.indexOf("seq") ?? -1) + offset;
  const events: unknown[] = [];
  const taken = Array.isArray(rows) ? rows : undefined;
  let at = 0;
  let last = -1;
  for (const row of rows as Iterable<object>) {
    if (taken !== undefined) taken[at++] = undefined;
    const event =
      columns === undefined || parsed === undefined
        ? eventOf(row as Record<string, unknown>, json)
        : eventOfValues(row as readonly unknown[], columns, parsed, offset);
    const seq =
      columns === undefined ? (row as { seq?: unknown }).seq : (row as readonly unknown[])[seqAt];
    if (event === undefined || typeof seq !== "number" || seq <= last) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected an intact event at seq ${show(seq)} of ${location} (before the last turn/end), found a row that is not a JSON event`,
        { location, ...(typeof seq === "number" ? { seq } : {}) },
      );
    }
    last = seq;
    events.push(event);
  }
  return events;
}

/** The members of a table description stored as JSON text. */
export function jsonMembers(table: JsonColumns): ReadonlySet<string> {
  return new Set(
    Object.entries(table.columns)
      .filter(([, column]) => table.jsonColumns.includes(column))
      .map(([member]) => member),
  );
}

function eventOf(
  row: Record<string, unknown>,
  json: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  const event: Record<string, unknown> = {};
  try {
    for (const member in row) {
      const value = row[member];
      if (value === null) continue;
      event[member] = json.has(member) ? JSON.parse(value as string) : value;
    }
  } catch {
    return undefined;
  }
  return event;
}

/**
 * The event of a row of values in the order of `columns` from `offset` on (`parsed[i]`: column i
 * is JSON text); NULL columns are absent members. Undefined when a JSON column does not parse.
 */
export function eventOfValues(
  values: readonly unknown[],
  columns: readonly string[],
  parsed: readonly boolean[],
  offset = 0,
): Record<string, unknown> | undefined {
  const event: Record<string, unknown> = {};
  try {
    for (let i = 0; i < columns.length; i++) {
      const value = values[offset + i];
      if (value === null) continue;
      event[columns[i] as string] = parsed[i] ? JSON.parse(value as string) : value;
    }
  } catch {
    return undefined;
  }
  return event;
}
