// The load and resume benchmarks' third contender: a reader's checks on events it has parsed, without storage, so a row shows how much of the subject is checks and how much is reading.
import type { SessionEvent, SessionHeader } from "../../src/index.js";
import { SessionLog } from "../../src/log/session-log.js";
import {
  type FiguresWithChecks,
  floorPlusChecks,
  type Measure,
  median,
  settle,
  timed,
} from "./harness.js";

/**
 * How many events the store checks at a time on a full read (its read page). Checking the same
 * events in one call measures the same work within a few percent; pages keep the figure to what
 * the store does.
 */
const READ_PAGE = 4096;

/**
 * What a validating reader does to the events of a full read besides reading and parsing them:
 * each page admitted to a log read from seq 0 — the walk that checks each event's depth, the
 * schema, and the log's rules across pages. The events are parsed from `lines` (what the floors
 * parse) before the clock starts, fresh each run, and the machine settled again there (see `settle`): the floor
 * pays for keeping what it parsed, and the checks' figure is their own work and their own garbage.
 */
export function loadChecks(header: SessionHeader, lines: readonly string[]): Measure {
  return async () => {
    const events = lines.map((line) => JSON.parse(line) as unknown);
    await settle();
    let length = 0;
    const ms = await timed(() => {
      const log = new SessionLog(header);
      for (let from = 0; from < events.length; from += READ_PAGE) {
        log.admit(events.slice(from, from + READ_PAGE), "parsed");
      }
      length = log.length;
    });
    if (length !== lines.length) throw new Error(`expected ${lines.length} events, got ${length}`);
    return ms;
  };
}

/**
 * What a resuming writer does to the message-producing events of the settled part besides reading
 * and parsing them: each checked against the schema, placed on the surface, the state put at the
 * last `turn/end`, and the messages derived (the content they share with their events frozen). Parsed from `lines` before the clock (and the
 * machine settled there, see {@link loadChecks}).
 */
export function resumeChecks(
  header: SessionHeader,
  lines: readonly string[],
  turnEnd: string,
): Measure {
  return async () => {
    const events = lines.map((line) => JSON.parse(line) as unknown);
    const end = JSON.parse(turnEnd) as unknown;
    await settle();
    let messages = 0;
    const ms = await timed(() => {
      const log = new SessionLog(header);
      log.admitSurface(events);
      log.settleAt(end);
      messages = log.deriveMessages().length;
    });
    if (messages === 0) throw new Error("expected messages from the message-producing events");
    return ms;
  };
}

/** The lines of `events` the resume checks take: those with a `surfaceOp`, and the last `turn/end`. */
export function resumeLines(events: readonly SessionEvent[]): {
  lines: string[];
  turnEnd: string;
} {
  let last = -1;
  for (let i = events.length - 1; i >= 0 && last < 0; i--) {
    if (events[i]?.type === "turn/end") last = i;
  }
  if (last < 0) throw new Error("expected a turn/end in the log");
  const lines = events
    .slice(0, last)
    .filter((e) => (e as { surfaceOp?: unknown }).surfaceOp !== undefined)
    .map((e) => JSON.stringify(e));
  return { lines, turnEnd: JSON.stringify(events[last]) };
}

/**
 * The facts a read row carries about its checks: their median time and the median over rounds of
 * (floor + checks) / floor — the ratio of a reader whose only cost over the floor were these
 * checks, whatever its storage.
 */
export function readCheckFacts(figures: FiguresWithChecks): Record<string, number> {
  return {
    readChecksMs: Math.round(median(figures.checks) * 10) / 10,
    floorPlusReadChecks: floorPlusChecks(figures),
  };
}
