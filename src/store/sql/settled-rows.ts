// The rows of a settled read (resuming a log without its chunks): each a JSONL line that must parse.
import { StorageError, show } from "../../errors.js";
import type { EventRow } from "./event-frames.js";

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
 * The events of settled rows (every row before the last turn/end that is not a chunk), parsed.
 * A settled row that does not parse, or whose seqs go back, is damage before the last turn/end:
 * corruption, never a torn tail.
 * @throws StorageError CORRUPT_LOG naming `location` (the table and session) and the seq.
 */
export function settledEvents(rows: Iterable<EventRow>, location: string): unknown[] {
  const events: unknown[] = [];
  let last = -1;
  for (const row of rows) {
    let event: unknown;
    try {
      event = typeof row.line === "string" ? JSON.parse(row.line) : undefined;
    } catch {
      event = undefined;
    }
    if (
      typeof event !== "object" ||
      event === null ||
      (event as { seq?: unknown }).seq !== row.seq ||
      row.seq <= last
    ) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected an intact event at seq ${row.seq} of ${location} (before the last turn/end), found a row that is not a JSON event: ${show(row.line)}`,
        { location, seq: row.seq },
      );
    }
    last = row.seq;
    events.push(event);
  }
  return events;
}
