// The rows of a settled read (resuming a log from its message-producing events): columns to events.
import { StorageError, show } from "../../errors.js";

/** A message-producing event row of a settled read: its columns, the JSON ones as text. */
export interface SettledRow {
  readonly type: unknown;
  readonly seq: unknown;
  readonly time: unknown;
  readonly data: unknown;
  readonly sourceEventSeqs: unknown;
  readonly surfaceOp: unknown;
}

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
 * The events of settled rows, built from their columns in envelope member order (type, seq,
 * time, data, then sourceEventSeqs and surfaceOp when not NULL), as a row's JSONL line would
 * parse. A row whose JSON columns do not parse, or whose seqs go back, is damage before the last
 * turn/end: corruption, never a torn tail.
 * @throws StorageError CORRUPT_LOG naming `location` (the table and session) and the seq.
 */
export function settledEvents(rows: Iterable<SettledRow>, location: string): unknown[] {
  const events: unknown[] = [];
  let last = -1;
  for (const row of rows) {
    const seq = Number(row.seq);
    const event = eventOf(row, seq);
    if (event === undefined || seq <= last) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected an intact event at seq ${seq} of ${location} (before the last turn/end), found a row that is not a JSON event: ${show(row.data)}`,
        { location, seq },
      );
    }
    last = seq;
    events.push(event);
  }
  return events;
}

function eventOf(row: SettledRow, seq: number): Record<string, unknown> | undefined {
  try {
    const event: Record<string, unknown> = {
      type: row.type,
      seq,
      time: Number(row.time),
      data: JSON.parse(row.data as string),
    };
    if (row.sourceEventSeqs !== null)
      event.sourceEventSeqs = JSON.parse(row.sourceEventSeqs as string);
    if (row.surfaceOp !== null) event.surfaceOp = JSON.parse(row.surfaceOp as string);
    return event;
  } catch {
    return undefined;
  }
}
