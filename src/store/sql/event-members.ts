// Events as column values in either SQL dialect: the members a statement binds, and which are stored as JSON text.
import type { SerializedEvent } from "../../log/serialized-event.js";

/** One event member a statement binds, and whether its column holds JSON text. */
export interface EventMember {
  readonly member: string;
  readonly json: boolean;
}

/** The part of a generated table description that says which columns hold JSON text. */
export interface JsonColumns {
  readonly columns: Readonly<Record<string, string>>;
  readonly jsonColumns: readonly string[];
}

/**
 * The event members that an insert statement with parameters `params` binds (all but the session
 * id), each with whether `table` stores it as JSON text: decided once per statement, not per event.
 */
export function eventMembers(params: readonly string[], table: JsonColumns): EventMember[] {
  const json = new Set(
    Object.entries(table.columns)
      .filter(([, column]) => table.jsonColumns.includes(column))
      .map(([member]) => member),
  );
  return params
    .filter((param) => param !== "sessionId")
    .map((member) => ({ member, json: json.has(member) }));
}

/**
 * What `event` binds for `member`, NULL when the event has none: a serialized event holds every
 * JSON member as JSON text already, under the member's own name.
 */
export function memberValue(event: SerializedEvent, { member }: EventMember): unknown {
  return (event as unknown as Record<string, unknown>)[member] ?? null;
}
