// Events as the positional values of SQLite's insert, its one row repeated for a group of events.
import { SQLITE_QUERIES } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { rowParams, type SqliteScalar } from "./statements.js";

/**
 * Events one insert takes at most: insertEvent's row repeated (see `Statements.runRepeated`).
 * The rows of a batch cost about a fifth less time in groups of 32 than one statement each
 * (100,000 events of the benchmarks' log: 443 ms against 573 for the whole durable append, in
 * the floor's own loop); a batch's last few events go one to a statement.
 */
export const EVENTS_PER_INSERT = 32;

/** insertEvent's parameters in the order its row binds them by position. */
const ROW_PARAMS = rowParams(SQLITE_QUERIES.insertEvent);

/**
 * The positional values of insertEvent repeated for `count` events of `events` from `from`
 * (see `Statements.runRepeated`): JSON members as the JSON text the event was serialized to
 * (under the member's own name), absent members NULL, written into `into` (an array the caller
 * reuses), which is returned.
 */
export function eventRowValues(
  sessionId: string,
  events: readonly SerializedEvent[],
  from: number,
  count: number,
  into: SqliteScalar[],
): SqliteScalar[] {
  const width = ROW_PARAMS.length;
  into.length = count * width;
  for (let i = 0; i < count; i++) {
    const source = events[from + i] as unknown as Record<string, SqliteScalar | undefined>;
    for (let p = 0; p < width; p++) {
      const param = ROW_PARAMS[p] as string;
      into[i * width + p] = param === "sessionId" ? sessionId : (source[param] ?? null);
    }
  }
  return into;
}
