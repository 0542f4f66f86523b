// B9: resuming a large session (open for writing, messages derived) against reading and parsing only its message-producing events.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import type { SessionBackend, SessionEvent } from "../../src/index.js";
import { eventFromRow, type RawEventRow } from "./b3-load.js";
import {
  type BackendKind,
  fillOne,
  jsonlPath,
  openDurable,
  rawSqlite,
  SEED,
  type Sizes,
  storeOver,
} from "./fixtures.js";
import {
  alternateWithChecks,
  type Benchmark,
  type BenchRow,
  type Measure,
  row,
  tempDir,
  timed,
} from "./harness.js";
import { readCheckFacts, resumeChecks, resumeLines } from "./read-checks.js";
import { syntheticLog } from "./synthetic-log.js";

/** docs/performance.md's target for B9. */
export const B9_TARGET = { op: "<=", value: 1.25 } as const;

/** The member a message-producing event has, as it appears in a stored JSONL line. */
const SURFACE_OP_MEMBER = '"surfaceOp":';

/** How many of `events` produce messages: those with a `surfaceOp` (what the floors read). */
export function messageProducing(events: readonly SessionEvent[]): number {
  return events.filter((e) => (e as { surfaceOp?: unknown }).surfaceOp !== undefined).length;
}

/**
 * The subject of B9: a fresh store over `backend` opens the session (`as: "writer"`: for writing,
 * its writer lock taken, the stored log read and checked; `"reader"`: loaded for reading, no lock,
 * read as a writer resumes) and derives its messages; in ms. A writer's session is unloaded (its
 * lock let go) afterwards, off the clock; a reader's store is dropped (closing it would close the
 * shared backend).
 * @throws Error when the session opened at another length than `expected` or derived no messages.
 */
export function resumeThroughStore(
  backend: SessionBackend,
  id: string,
  expected: number,
  label: string,
  as: "writer" | "reader" = "writer",
): Measure {
  return async () => {
    const store = storeOver(backend);
    let length = 0;
    let messages = 0;
    const ms = await timed(async () => {
      const session = as === "writer" ? await store.openForWriting(id) : await store.load(id);
      length = session.nextSeq;
      messages = (await session.deriveMessages()).length;
    });
    if (length !== expected) throw new Error(`B9 ${label}: opened at ${length}, not ${expected}`);
    if (messages === 0) throw new Error(`B9 ${label}: derived no messages`);
    if (as === "writer") await store.unload(id);
    return ms;
  };
}

/** The SQLite floor's statement: only the rows with a surface_op, in seq order. */
const SELECT_MESSAGE_ROWS =
  "SELECT type, seq, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? AND surface_op IS NOT NULL ORDER BY seq";

/** Selects the session's message-producing rows and builds each event with JSON.parse of its JSON columns. */
function floorSqlite(select: Database.Statement, id: string): number {
  const events: unknown[] = [];
  for (const r of select.iterate(id) as IterableIterator<RawEventRow>) events.push(eventFromRow(r));
  return events.length;
}

/**
 * Reads the whole file, JSON.parse-s the header line, then finds each line holding a
 * `"surfaceOp":` member (an indexOf scan, no split into lines) and JSON.parse-s only those.
 * The string test stands in for knowing where the message-producing lines are; the caller checks
 * that it found exactly the log's message-producing events.
 */
function floorJsonl(path: string): number {
  const text = readFileSync(path, "utf8");
  const headerEnd = text.indexOf("\n");
  JSON.parse(text.slice(0, headerEnd));
  const events: unknown[] = [];
  let at = text.indexOf(SURFACE_OP_MEMBER, headerEnd);
  while (at >= 0) {
    const start = text.lastIndexOf("\n", at) + 1;
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    events.push(JSON.parse(text.slice(start, end)));
    at = text.indexOf(SURFACE_OP_MEMBER, end);
  }
  return events.length;
}

export function b9Resume(sizes: Sizes): Benchmark {
  return {
    id: "B9",
    title: "resume a large session: open for writing, messages derived",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b9");
      const producing = messageProducing(log.events);
      const resumed = resumeLines(log.events);
      const checks = resumeChecks(log.header, resumed.lines, resumed.turnEnd);
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const temp = tempDir(`b9-${kind}`);
        try {
          fillOne(kind, temp.dir, log.header, log.events);
          const backend = await openDurable(kind, temp.dir);
          const db = kind === "sqlite" ? rawSqlite(join(temp.dir, "store.db")) : undefined;
          const select = db?.prepare(SELECT_MESSAGE_ROWS).raw();
          ctx.progress(
            `B9 ${kind}: resuming ${log.events.length} events (${producing} message-producing)`,
          );
          const subject = resumeThroughStore(backend, log.header.id, log.events.length, kind);
          const floor = async (): Promise<number> => {
            let length = 0;
            const ms = await timed(() => {
              length =
                select !== undefined
                  ? floorSqlite(select, log.header.id)
                  : floorJsonl(jsonlPath(join(temp.dir, "jsonl"), log.header.id));
            });
            if (length !== producing) {
              throw new Error(`B9 ${kind} floor: parsed ${length} events, expected ${producing}`);
            }
            return ms;
          };
          const figures = await alternateWithChecks(
            ctx.rounds,
            `B9 ${kind}`,
            subject,
            floor,
            checks,
            ctx.progress,
          );
          const reading = await alternateWithChecks(
            ctx.rounds,
            `B9 ${kind} reader`,
            resumeThroughStore(backend, log.header.id, log.events.length, kind, "reader"),
            floor,
            checks,
            ctx.progress,
          );
          db?.close();
          await backend.close();
          rows.push(
            row({
              id: "B9",
              what: `reader: load ${log.events.length} events (${kind}) + deriveMessages`,
              floor:
                kind === "sqlite"
                  ? "SELECT only the rows WHERE surface_op IS NOT NULL + JSON.parse each JSON column"
                  : 'readFileSync + JSON.parse of only the lines with "surfaceOp": (indexOf scan)',
              unit: "ms",
              ...reading,
              target: B9_TARGET,
              facts: {
                backend: kind,
                events: log.events.length,
                messageProducingEvents: producing,
                ...readCheckFacts(reading),
              },
            }),
          );
          rows.push(
            row({
              id: "B9",
              what: `resume ${log.events.length} events (${kind}): openForWriting + deriveMessages`,
              floor:
                kind === "sqlite"
                  ? "SELECT only the rows WHERE surface_op IS NOT NULL + JSON.parse each JSON column"
                  : 'readFileSync + JSON.parse of only the lines with "surfaceOp": (indexOf scan)',
              unit: "ms",
              ...figures,
              target: B9_TARGET,
              facts: {
                backend: kind,
                events: log.events.length,
                messageProducingEvents: producing,
                eventBytes: log.eventBytes,
                ...readCheckFacts(figures),
              },
            }),
          );
        } finally {
          temp.remove();
        }
      }
      return rows;
    },
  };
}
