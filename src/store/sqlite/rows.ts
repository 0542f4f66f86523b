// Events as the bound parameters of SQLite's one-row insert, every event's parameters of one shape.
import { SQLITE_TABLES } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { eventMembers } from "../sql/core.js";
import { paramsOf, type SqliteQueryParams } from "./statements.js";

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
