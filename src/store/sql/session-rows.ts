// Session rows of either SQL dialect: headers without NULL members, checked versions, lengths, where a session is.
import { show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { checkFormatVersion } from "../../log/format-version.js";

/** A row with a column per header member (in SessionHeader order), NULL where the member is absent. */
export type HeaderRow = Readonly<Record<keyof SessionHeader, unknown>>;

/** The header a row holds: its members in the row's column order, the NULL ones left out. */
export function headerFromRow(row: HeaderRow): SessionHeader {
  const header: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(row)) if (value !== null) header[member] = value;
  return header as unknown as SessionHeader;
}

/**
 * The header of stored session `id`, read only once its format version is this build's.
 * @throws StorageError FORMAT_UNSUPPORTED naming the session and `store`.
 */
export function readHeader(row: HeaderRow, id: string, store: string): SessionHeader {
  checkFormatVersion(row, sessionWhere(id, store));
  return headerFromRow(row);
}

/** The number of events of a log whose last event row has seq `lastSeq` (NULL or absent: none). */
export function lengthAfter(lastSeq: unknown): number {
  return typeof lastSeq === "number" ? lastSeq + 1 : 0;
}

/** A session in a store, for messages: `session "<id>" in <store>`. */
export function sessionWhere(id: string, store: string): string {
  return `session ${show(id)} in ${store}`;
}

/** The event rows of a session in a store, for messages and error locations. */
export function eventsOf(id: string, store: string): string {
  return `table events of ${sessionWhere(id, store)}`;
}
