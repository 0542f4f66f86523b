// Known backend bugs the SessionBackend contract finds, skipped by title with the reason.

/** The case that finds the bug below. */
export const TORN_FORK_POINT =
  "forkPoint of a log with a torn tail counts intact events only and finds the marker among them";

/**
 * Seen failing on SQLite and PostgreSQL: `forkPoint` takes the length from the last row's seq, so
 * a torn trailing row counts (14 for 13 intact events), and without a boundary it reads that row
 * as the last turn marker and throws CORRUPT_LOG, where `load` reports the same log as 13 intact
 * events and a torn tail.
 */
export const TORN_FORK_POINT_BUG =
  "known bug: SQLite and PostgreSQL forkPoint count a torn trailing row in length and read it as a marker (CORRUPT_LOG), where load reports a torn tail";
