// B3: loading a large session through the store (validation on) against reading the rows or the file and JSON.parse of each.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import type { SessionBackend } from "../../src/index.js";
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
import { loadChecks, readCheckFacts } from "./read-checks.js";
import { syntheticLog } from "./synthetic-log.js";

/** An event row as the floors select it: type, seq, time, data, source_event_seqs, surface_op. */
export type RawEventRow = [string, number, number, string, string | null, string | null];

/** The event of a raw row, with JSON.parse of its JSON columns: what any SQL load must do. */
export function eventFromRow(r: RawEventRow): Record<string, unknown> {
  const event: Record<string, unknown> = {
    type: r[0],
    seq: r[1],
    time: r[2],
    data: JSON.parse(r[3]),
  };
  if (r[4] !== null) event.sourceEventSeqs = JSON.parse(r[4]);
  if (r[5] !== null) event.surfaceOp = JSON.parse(r[5]);
  return event;
}

/** Reads every row of a session and builds each event with JSON.parse of its JSON columns. */
function floorSqlite(select: Database.Statement, id: string): number {
  const events: unknown[] = [];
  for (const r of select.iterate(id) as IterableIterator<RawEventRow>) events.push(eventFromRow(r));
  return events.length;
}

/**
 * The subject of B3: a full read of the session's events through a fresh store over `backend`
 * (page by page, each event checked against the schema and the log's invariants), in ms.
 */
export function loadThroughStore(
  backend: SessionBackend,
  id: string,
  expected: number,
  label: string,
): Measure {
  return async () => {
    const store = storeOver(backend);
    let length = 0;
    const ms = await timed(async () => {
      length = (await store.readEvents(id)).length;
    });
    if (length !== expected) throw new Error(`B3 ${label}: read ${length} events`);
    return ms;
  };
}

/** Reads the whole file and JSON.parse-s each line. */
function floorJsonl(path: string): number {
  const lines = readFileSync(path, "utf8").split("\n");
  const events: unknown[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line !== "") events.push(JSON.parse(line));
  }
  JSON.parse(lines[0] as string);
  return events.length;
}

/** docs/performance.md's target for B3: reads that do not freeze the events they return. */
export const B3_TARGET = { op: "<=", value: 1.3 } as const;

export function b3Load(sizes: Sizes): Benchmark {
  return {
    id: "B3",
    title: "load a large session, validation on",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b3");
      const lines = log.events.map((event) => JSON.stringify(event));
      const checks = loadChecks(log.header, lines);
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const temp = tempDir(`b3-${kind}`);
        try {
          fillOne(kind, temp.dir, log.header, log.events);
          const backend = await openDurable(kind, temp.dir);
          const db = kind === "sqlite" ? rawSqlite(join(temp.dir, "store.db")) : undefined;
          const select = db
            ?.prepare(
              "SELECT type, seq, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq",
            )
            .raw();
          ctx.progress(`B3 ${kind}: loading ${log.events.length} events`);
          const subject = loadThroughStore(backend, log.header.id, log.events.length, kind);
          const floor = async (): Promise<number> => {
            let length = 0;
            const ms = await timed(() => {
              length =
                select !== undefined
                  ? floorSqlite(select, log.header.id)
                  : floorJsonl(jsonlPath(join(temp.dir, "jsonl"), log.header.id));
            });
            if (length !== log.events.length) throw new Error(`B3 ${kind} floor: ${length} events`);
            return ms;
          };
          const figures = await alternateWithChecks(
            ctx.rounds,
            `B3 ${kind}`,
            subject,
            floor,
            checks,
            ctx.progress,
          );
          db?.close();
          await backend.close();
          rows.push(
            row({
              id: "B3",
              what: `load ${log.events.length} events (${kind}), validated`,
              floor:
                kind === "sqlite"
                  ? "SELECT the rows + JSON.parse each JSON column"
                  : "readFileSync + JSON.parse each line",
              unit: "ms",
              ...figures,
              target: B3_TARGET,
              facts: {
                backend: kind,
                events: log.events.length,
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
