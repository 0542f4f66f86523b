// Where a session's log lives in the sessions folder: one name per id, suffixes kept apart.
import {
  encodeSessionId,
  isShortenedName,
  legacySessionIdName,
  mayBeLegacyHashedName,
} from "../ids/id-encoding.js";

/** The suffix of log files; lock (`.lck`) and temp (`.tmp`) files have their own. */
export const LOG_SUFFIX = ".jsonl";

/** The file name of a session's log: its encoded id plus {@link LOG_SUFFIX}. */
export function logFileName(id: string): string {
  return `${encodeSessionId(id)}${LOG_SUFFIX}`;
}

/**
 * The file name the previous build gave the log of an id whose encoding is shortened (see
 * {@link legacySessionIdName}), or undefined for any other id.
 */
export function legacyLogFileName(id: string): string | undefined {
  const name = legacySessionIdName(id);
  return name === undefined ? undefined : `${name}${LOG_SUFFIX}`;
}

/** Whether a log file name (a {@link logFileName} result) is the shortened name of a long id. */
export function isShortenedLogFileName(name: string): boolean {
  return isShortenedName(name.slice(0, -LOG_SUFFIX.length));
}

/** Whether a log file name may be a previous build's shortened name of some long id. */
export function mayBeLegacyLogFileName(name: string): boolean {
  return name.endsWith(LOG_SUFFIX) && mayBeLegacyHashedName(name.slice(0, -LOG_SUFFIX.length));
}
