// Rows to values and back for PostgreSQL: a batch as column arrays, turn markers read from data text, sessionFrom rows split.
import { show } from "../../errors.js";
import type { TurnMarker } from "../../log/invariants.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { eventMembers, memberValue, turnMarkerOf } from "../sql/core.js";
import {
  POSTGRES_QUERY_PARAMS,
  POSTGRES_TABLES,
  type PostgresQueryParams,
  type PostgresQueryRows,
} from "./statements.js";

/** The members insertEvents binds as arrays besides the session id. */
const EVENT_MEMBERS = eventMembers(POSTGRES_QUERY_PARAMS.insertEvents, POSTGRES_TABLES.events);

/**
 * The insertEvents parameters of a batch: one array per member, in batch order, JSON members as
 * JSON text, absent members NULL.
 */
export function eventArrays(
  sessionId: string,
  events: readonly SerializedEvent[],
): PostgresQueryParams<"insertEvents"> {
  const params: Record<string, unknown> = { sessionId };
  for (const member of EVENT_MEMBERS) {
    params[member.member] = events.map((event) => memberValue(event, member));
  }
  return params as PostgresQueryParams<"insertEvents">;
}

/**
 * The turn marker a lastTurnMarker row names: its `turn` is read from the data text here, so that
 * a damaged row is reported rather than failing the query.
 * @throws StorageError CORRUPT_LOG naming `location` and the seq when the data has no turn number.
 */
export function markerOfRow(
  row: PostgresQueryRows["lastTurnMarker"],
  location: string,
): TurnMarker {
  let turn: unknown;
  try {
    turn = (JSON.parse(row.data) as { turn?: unknown } | null)?.turn;
  } catch {
    turn = undefined;
  }
  return turnMarkerOf(row, turn, location, show(row.data));
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
