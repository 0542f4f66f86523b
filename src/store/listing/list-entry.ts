// A listed session as `session/list` answers it: the store's listing in the wire's shape.
import type { SessionListEntry } from "../../generated.js";
import type { StoreListedSession } from "../session-store.js";

/** The `session/list` entry of a listed session (absent members stay absent). */
export function listEntryOf(listed: StoreListedSession): SessionListEntry {
  const { header, eventCount, updatedAt, title } = listed;
  return {
    sessionId: header.id,
    ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
    ...(title === undefined ? {} : { title }),
    ...(updatedAt === undefined ? {} : { updatedAt }),
    eventCount,
    header,
  };
}
