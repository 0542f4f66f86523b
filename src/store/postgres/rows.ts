// Rows to values and back for PostgreSQL: a batch as column arrays, turn markers read from data text, sessionFrom rows split.
import { StorageError, show } from "../../errors.js";
import type { SessionEvent } from "../../generated.js";
import type { TurnMarker } from "../../log/invariants.js";
import {
  POSTGRES_QUERY_PARAMS,
  POSTGRES_TABLES,
  type PostgresQueryParams,
  type PostgresQueryRows,
} from "./statements.js";

// Headers and event framing follow the same rules as SQLite rows (NULL means absent; torn tails
// and corruption judged like JSONL lines), so they are shared rather than restated.
export { frameEventRows, headerFromRow } from "../sqlite/rows.js";

const { columns, jsonColumns } = POSTGRES_TABLES.events;
/** Event members stored as JSON text, derived from the layout's JSON columns. */
const JSON_MEMBERS: ReadonlySet<string> = new Set(
  Object.entries(columns)
    .filter(([, column]) => (jsonColumns as readonly string[]).includes(column))
    .map(([member]) => member),
);
/** The members insertEvents binds as arrays (all its parameters but the session id). */
const EVENT_MEMBERS = POSTGRES_QUERY_PARAMS.insertEvents.filter((param) => param !== "sessionId");

/**
 * The insertEvents parameters of a batch: one array per member, in batch order, JSON members as
 * JSON text, absent members NULL.
 */
export function eventArrays(
  sessionId: string,
  events: readonly SessionEvent[],
): PostgresQueryParams<"insertEvents"> {
  const params: Record<string, unknown> = { sessionId };
  for (const member of EVENT_MEMBERS) {
    const json = JSON_MEMBERS.has(member);
    params[member] = events.map((event) => {
      const value = (event as unknown as Record<string, unknown>)[member];
      if (value === undefined) return null;
      return json ? JSON.stringify(value) : value;
    });
  }
  return params as PostgresQueryParams<"insertEvents">;
}

/**
 * The turn marker a lastTurnMarker row names: its `turn` is read from the data text, so that a
 * damaged row is reported rather than failing the query.
 * @throws StorageError CORRUPT_LOG naming `location` and the seq when the data has no turn number.
 */
export function turnMarkerOf(
  row: PostgresQueryRows["lastTurnMarker"],
  location: string,
): TurnMarker {
  let turn: unknown;
  try {
    turn = (JSON.parse(row.data) as { turn?: unknown } | null)?.turn;
  } catch {
    turn = undefined;
  }
  if (
    typeof turn !== "number" ||
    !Number.isSafeInteger(turn) ||
    (row.type !== "turn/start" && row.type !== "turn/end")
  ) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a turn marker with a turn number at seq ${row.seq} of ${location}, found ${show(row.data)}`,
      { location, seq: row.seq },
    );
  }
  return { seq: row.seq, type: row.type, turn };
}

/** A sessionFrom answer split in two: the header columns, and the event rows in seq order. */
export interface SessionFromRows {
  readonly header: PostgresQueryRows["sessionHeader"];
  readonly events: PostgresQueryRows["eventLines"][];
}

/**
 * Splits the rows of sessionFrom into the session's header columns and its event rows; undefined
 * when there is no session (no row).
 */
export function splitSessionFrom(
  rows: readonly PostgresQueryRows["sessionFrom"][],
): SessionFromRows | undefined {
  const first = rows[0];
  if (first === undefined) return undefined;
  const { seq: _seq, type: _type, line: _line, ...header } = first;
  const events: PostgresQueryRows["eventLines"][] = [];
  for (const { seq, type, line } of rows) {
    // NULL event columns: the one row of a session with no event rows from the asked seq on.
    if (seq === null || type === null) continue;
    events.push({ seq, type, line });
  }
  // The header columns come from the join's left side, a stored sessions row: NOT NULL where
  // sessionHeader says so (the outer join is what makes the generator type them nullable).
  return { header: header as PostgresQueryRows["sessionHeader"], events };
}
