// Rows to values and back for PostgreSQL: a batch as column arrays, turn markers read from data text, sessionFrom and settledRead rows split.
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

/**
 * A settledRead answer split up: the header columns, the seq of the last turn/end (undefined
 * without one), the message-producing rows before it and the rows from it on (the tail part).
 * The event columns of a settled row start at `offset` (the rows are not copied: a copy would
 * add to what a resume allocates); a tail row holds them alone. `columns` are eventRows' columns.
 */
export interface SettledReadRows {
  readonly header: PostgresQueryRows["sessionHeader"];
  readonly lastTurnEnd: number | undefined;
  readonly columns: readonly string[];
  readonly offset: number;
  readonly settled: (readonly unknown[] | undefined)[];
  readonly tail: (readonly unknown[])[];
}

/**
 * Splits the rows of settledRead (arrays of the values of `columns`); undefined when there is no
 * session (no row). The message-producing rows from the last turn/end on, which come in both
 * parts, are kept in the tail part only. `rows` is taken: it is emptied, so that the settled
 * rows are held by the answer alone (see `settledEvents`, which lets go of each once parsed).
 */
export function splitSettledRead(
  rows: unknown[][],
  columns: readonly string[],
): SettledReadRows | undefined {
  const first = rows[0];
  if (first === undefined) return undefined;
  const tailAt = columns.indexOf("tail");
  const eventsAt = tailAt + 1;
  const seqAt = columns.indexOf("seq");
  const { header, lastTurnEnd } = headerRowOf(first, columns);
  const settled: (readonly unknown[])[] = [];
  const tail: (readonly unknown[])[] = [];
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r] as readonly unknown[];
    if (row[tailAt] === true) tail.push(row.slice(eventsAt));
    else if (lastTurnEnd !== undefined && (row[seqAt] as number) < lastTurnEnd) settled.push(row);
  }
  rows.length = 0;
  return {
    header,
    lastTurnEnd,
    columns: columns.slice(eventsAt),
    offset: eventsAt,
    settled,
    tail,
  };
}

/**
 * An openTurnRead answer split up: the header columns, the seq of the last turn/end (undefined
 * without one), the last turn marker's row (undefined without one), and the event rows after
 * the header row (their event columns alone, `columns` naming them as eventRows does).
 */
export interface OpenTurnReadRows {
  readonly header: PostgresQueryRows["sessionHeader"];
  readonly lastTurnEnd: number | undefined;
  readonly marker: PostgresQueryRows["lastTurnMarker"] | undefined;
  readonly columns: readonly string[];
  readonly rows: (readonly unknown[])[];
}

/** Splits the rows of openTurnRead (arrays of the values of `columns`); undefined when there is no session (no row). */
export function splitOpenTurnRead(
  rows: readonly (readonly unknown[])[],
  columns: readonly string[],
): OpenTurnReadRows | undefined {
  const first = rows[0];
  if (first === undefined) return undefined;
  const markerAt = columns.indexOf("markerSeq");
  const eventsAt = columns.indexOf("markerData") + 1;
  const { header, lastTurnEnd } = headerRowOf(first, columns);
  const markerSeq = first[markerAt];
  const marker =
    typeof markerSeq === "number"
      ? { seq: markerSeq, type: first[markerAt + 1] as string, data: first[markerAt + 2] as string }
      : undefined;
  const events: (readonly unknown[])[] = [];
  for (let r = 1; r < rows.length; r++)
    events.push((rows[r] as readonly unknown[]).slice(eventsAt));
  return {
    header,
    lastTurnEnd,
    marker,
    columns: columns.slice(eventsAt),
    rows: events,
  };
}

/**
 * The header row of settledRead and openTurnRead: the header columns (those before
 * "lastTurnEnd"), and the seq of the last turn/end (undefined without one).
 */
function headerRowOf(
  first: readonly unknown[],
  columns: readonly string[],
): { header: PostgresQueryRows["sessionHeader"]; lastTurnEnd: number | undefined } {
  const lastAt = columns.indexOf("lastTurnEnd");
  const header: Record<string, unknown> = {};
  for (let i = 0; i < lastAt; i++) header[columns[i] as string] = first[i];
  const last = first[lastAt];
  return {
    header: header as PostgresQueryRows["sessionHeader"],
    lastTurnEnd: typeof last === "number" ? last : undefined,
  };
}
