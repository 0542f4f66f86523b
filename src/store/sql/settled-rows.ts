// The rows of a settled read (resuming a log from its message-producing events): columns to events.
import { StorageError, show } from "../../errors.js";
import { CANONICAL_EVENT_MEMBERS } from "../../generated.js";
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
  const build = columns === undefined ? undefined : valuesEventBuilder(columns, json);
  const seqAt = (columns?.indexOf("seq") ?? -1) + offset;
  const events: unknown[] = [];
  const taken = Array.isArray(rows) ? rows : undefined;
  let at = 0;
  let last = -1;
  for (const row of rows as Iterable<object>) {
    if (taken !== undefined) taken[at++] = undefined;
    const event =
      build === undefined
        ? eventOf(row as Record<string, unknown>, json)
        : build(row as readonly unknown[], offset);
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

/** Builds the event a row of values holds from `offset` on; undefined when a JSON column does not parse. */
export type ValuesEventBuilder = (
  values: readonly unknown[],
  offset?: number,
) => Record<string, unknown> | undefined;

/**
 * The builder of events from rows of values in the order of `columns` (`json`: the members stored
 * as JSON text); NULL columns are absent members. Columns in the canonical member order with the
 * JSON ones where every backend stores them (data, sourceEventSeqs, surfaceOp) get a builder that
 * makes each event as one object literal, whose members V8 lays out by one fixed chain of shapes:
 * building members by name from a list costs a reader of 100,000 rows about a fifth of its
 * parsing.
 */
export function valuesEventBuilder(
  columns: readonly string[],
  json: ReadonlySet<string>,
): ValuesEventBuilder {
  const parsed = columns.map((member) => json.has(member));
  if (isCanonicalLayout(columns, parsed)) return canonicalEventOf;
  return (values, offset = 0) => eventOfValues(values, columns, parsed, offset);
}

/** Whether `columns` are the envelope's members in canonical order, JSON text from `data` on. */
function isCanonicalLayout(columns: readonly string[], parsed: readonly boolean[]): boolean {
  const dataAt = CANONICAL_EVENT_MEMBERS.indexOf("data");
  return (
    columns.length === CANONICAL_EVENT_MEMBERS.length &&
    columns.every((member, i) => member === CANONICAL_EVENT_MEMBERS[i]) &&
    parsed.every((isJson, i) => isJson === i >= dataAt)
  );
}

/** {@link eventOfValues} for the canonical layout (see {@link valuesEventBuilder}). */
function canonicalEventOf(
  values: readonly unknown[],
  offset = 0,
): Record<string, unknown> | undefined {
  try {
    const event: Record<string, unknown> = {
      type: values[offset],
      seq: values[offset + 1],
      time: values[offset + 2],
      data: JSON.parse(values[offset + 3] as string),
    };
    const sourceEventSeqs = values[offset + 4];
    if (sourceEventSeqs !== null) event.sourceEventSeqs = JSON.parse(sourceEventSeqs as string);
    const surfaceOp = values[offset + 5];
    if (surfaceOp !== null) event.surfaceOp = JSON.parse(surfaceOp as string);
    return event;
  } catch {
    return undefined;
  }
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
