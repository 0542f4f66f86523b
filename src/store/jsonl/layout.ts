// Where a session's log lives in the sessions folder: one name per id, suffixes kept apart.
import { encodeSessionId } from "../id-encoding.js";

/** The suffix of log files; lock (`.lock`, `.steal`) and temp (`.tmp`) files have their own. */
export const LOG_SUFFIX = ".jsonl";

/** The file name of a session's log: its encoded id plus {@link LOG_SUFFIX}. */
export function logFileName(id: string): string {
  return `${encodeSessionId(id)}${LOG_SUFFIX}`;
}
