// Events as the bound parameters of SQLite's one-row insert, every event's parameters of one shape.
import { SQLITE_QUERIES, SQLITE_TABLES } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { eventMembers } from "../sql/core.js";
import { paramsOf, rowParams, type SqliteQueryParams, type SqliteScalar } from "./statements.js";

/** The members insertEvent binds besides the session id, decided once here, not per event. */
const EVENT_MEMBERS = eventMembers(paramsOf("insertEvent"), SQLITE_TABLES.events);
/**
 * Every insertEvent parameter bound to NULL. Each event's parameters start as a copy of it, so
 * they all share one shape.
 */
const NULL_EVENT_PARAMS: Readonly<Record<string, null>> = Object.fromEntries(
  paramsOf("insertEvent").map((param) => [param, null]),
);

/**
 * The insertEvent parameters of one event: JSON members as the JSON text the event was serialized
 * to (under the member's own name), absent members NULL.
 */
export function eventParams(
  sessionId: string,
  event: SerializedEvent,
): SqliteQueryParams<"insertEvent"> {
  // The hottest loop of an append, one event at a time: only present members are written over
  // the NULLs, without a call per member.
  const source = event as unknown as Record<string, unknown>;
  const params: Record<string, unknown> = { ...NULL_EVENT_PARAMS };
  params.sessionId = sessionId;
  for (let i = 0; i < EVENT_MEMBERS.length; i++) {
    const { member } = EVENT_MEMBERS[i] as (typeof EVENT_MEMBERS)[number];
    const value = source[member];
    if (value !== undefined) params[member] = value;
  }
  return params as SqliteQueryParams<"insertEvent">;
}

/**
 * Events one insert takes at most: insertEvent's row repeated (see `Statements.runRepeated`).
 * The rows of a batch cost about a fifth less time in groups of 32 than one statement each
 * (100,000 events of the benchmarks' log: 443 ms against 573 for the whole durable append, in
 * the floor's own loop); a batch's last few events go one by one.
 */
export const EVENTS_PER_INSERT = 32;

/** insertEvent's parameters in the order its row binds them by position. */
const ROW_PARAMS = rowParams(SQLITE_QUERIES.insertEvent);

/**
 * The positional values of insertEvent repeated for `count` events of `events` from `from`
 * (see `Statements.runRepeated`): each event's values as {@link eventParams} names them, written
 * into `into` (an array the caller reuses), which is returned.
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
