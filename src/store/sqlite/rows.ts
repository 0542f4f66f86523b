// Rows to values and back: headers without NULL members, events as bound parameters, logs framed like JSONL.
import { StorageError, show } from "../../errors.js";
import { type SessionEvent, type SessionHeader, SQLITE_TABLES } from "../../generated.js";
import { paramsOf, type SqliteQueryParams, type SqliteQueryRows } from "./statements.js";

/** The header members in the statement's column order (SessionHeader order); NULL means absent. */
export function headerFromRow(row: SqliteQueryRows["sessionHeader"]): SessionHeader {
  const header: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(row)) if (value !== null) header[member] = value;
  return header as unknown as SessionHeader;
}

const { columns, jsonColumns } = SQLITE_TABLES.events;
/** Event members stored as JSON text, derived from the layout's JSON columns. */
const JSON_MEMBERS: ReadonlySet<string> = new Set(
  Object.entries(columns)
    .filter(([, column]) => (jsonColumns as readonly string[]).includes(column))
    .map(([member]) => member),
);
/**
 * The members of an event that insertEvent binds (all its parameters but the session id), each
 * with whether it is stored as JSON text: decided once here, not per event.
 */
const EVENT_MEMBERS: readonly { readonly member: string; readonly json: boolean }[] = paramsOf(
  "insertEvent",
)
  .filter((param) => param !== "sessionId")
  .map((member) => ({ member, json: JSON_MEMBERS.has(member) }));
/**
 * Every insertEvent parameter bound to NULL. Each event's parameters start as a copy of it, so
 * they all share one shape and only the present members are written.
 */
const NULL_EVENT_PARAMS: Readonly<Record<string, null>> = Object.fromEntries(
  paramsOf("insertEvent").map((param) => [param, null]),
);

/** The insertEvent parameters of one event: JSON members as JSON text, absent members NULL. */
export function eventParams(
  sessionId: string,
  event: SessionEvent,
): SqliteQueryParams<"insertEvent"> {
  const source = event as unknown as Record<string, unknown>;
  const params: Record<string, unknown> = { ...NULL_EVENT_PARAMS };
  params.sessionId = sessionId;
  for (let i = 0; i < EVENT_MEMBERS.length; i++) {
    const { member, json } = EVENT_MEMBERS[i] as (typeof EVENT_MEMBERS)[number];
    const value = source[member];
    if (value !== undefined) params[member] = json ? JSON.stringify(value) : value;
  }
  return params as SqliteQueryParams<"insertEvent">;
}

/** A log read from rows: the intact events and whether a torn tail follows. */
export interface FramedLog {
  readonly events: unknown[];
  readonly tornTail: boolean;
}

/**
 * Frames event rows (in seq order, from seq `first` on) the way JSONL lines are framed: keeps the
 * longest run of rows whose line parses with `seq` equal to `first` plus the index. A bad row (a
 * line that does not parse, or a seq missing) at or before the last `turn/end` row is corruption;
 * after it, it starts a torn tail (repair deletes it). Rows after the first bad one are not
 * parsed. Framing from `first` > 0 judges the rows from `first` on exactly as framing the whole log
 * would when the rows before `first` are intact: a `turn/end` before `first` is before every bad
 * row it could make corruption.
 * @throws StorageError CORRUPT_LOG naming `location` (the table and session) and the seq.
 */
export function frameEventRows(
  rows: Iterable<SqliteQueryRows["eventLines"]>,
  location: string,
  first = 0,
): FramedLog {
  const events: unknown[] = [];
  let bad: { seq: number; what: string } | undefined;
  let lastTurnEnd = -1;
  for (const row of rows) {
    if (row.type === "turn/end") lastTurnEnd = row.seq;
    if (bad !== undefined) continue;
    const seq = first + events.length;
    if (row.seq !== seq) {
      bad = { seq, what: `no row (the next row has seq ${row.seq})` };
      continue;
    }
    const event = parseLine(row.line);
    if (event === undefined || (event as { seq?: unknown }).seq !== seq) {
      bad = { seq, what: `a row that is not a JSON event: ${show(row.line)}` };
      continue;
    }
    events.push(event);
  }
  if (bad !== undefined && bad.seq <= lastTurnEnd) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected an intact event at seq ${bad.seq} of ${location} (the last turn/end is at seq ${lastTurnEnd}), found ${bad.what}`,
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
