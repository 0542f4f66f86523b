// B7: the first page of 100 sessions in a store of many, against one SELECT of 100 rows (SQLite) or the first line of every file (JSONL).
import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { SQLITE_QUERIES } from "../../src/generated.js";
import type { SessionEvent, SessionHeader } from "../../src/index.js";
import {
  type BackendKind,
  fillJsonl,
  fillSqlite,
  openDurable,
  rawSqlite,
  SEED,
  type Sizes,
  storeOver,
} from "./fixtures.js";
import { alternate, type Benchmark, type BenchRow, fmt, row, tempDir, timed } from "./harness.js";
import {
  DEFAULT_SHAPE,
  SYNTHETIC_EPOCH,
  type SyntheticShape,
  syntheticTurns,
} from "./synthetic-log.js";

/** The page size listed. */
export const PAGE = 100;

/** Small logs: one turn of one step of 20–40 chunks (~35 events). */
const SMALL: SyntheticShape = { ...DEFAULT_SHAPE, steps: [1, 1], chunks: [20, 40] };

/** `count` sessions of one small generated turn each, created one second apart. */
export function* manySessions(
  count: number,
): Generator<{ header: SessionHeader; events: SessionEvent[] }> {
  for (let i = 0; i < count; i++) {
    yield {
      header: {
        version: 0,
        id: `list-${String(i).padStart(6, "0")}`,
        createdAt: SYNTHETIC_EPOCH + i * 1000,
        cwd: `/work/project-${i % 10}`,
      },
      events: syntheticTurns(SEED + i, SMALL).next().value as SessionEvent[],
    };
  }
}

/** One SELECT of the first page's session rows, through the backend's own statement. */
function floorSqlite(select: Database.Statement): number {
  const rows = select.all({
    afterAt: Number.MAX_SAFE_INTEGER + 1,
    afterId: "",
    limit: PAGE + 1,
  });
  return Math.min(rows.length, PAGE);
}

/** Reads the first line of every log file, parses it, and keeps the newest page. */
function floorJsonl(dir: string): number {
  const buffer = Buffer.allocUnsafe(4096);
  const headers: { createdAt: number; id: string }[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const fd = openSync(join(dir, name), "r");
    try {
      const read = readSync(fd, buffer, 0, buffer.length, 0);
      const end = buffer.indexOf(10);
      headers.push(JSON.parse(buffer.toString("utf8", 0, end < 0 ? read : end)));
    } finally {
      closeSync(fd);
    }
  }
  headers.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return headers.slice(0, PAGE).length;
}

export function b7List(sizes: Sizes): Benchmark {
  return {
    id: "B7",
    title: "list, first page of 100",
    async run(ctx) {
      const count = sizes.listSessions;
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const temp = tempDir(`b7-${kind}`);
        try {
          ctx.progress(`B7 ${kind}: writing ${count} sessions`);
          if (kind === "sqlite") fillSqlite(join(temp.dir, "store.db"), manySessions(count));
          else fillJsonl(join(temp.dir, "jsonl"), manySessions(count));
          const backend = await openDurable(kind, temp.dir);
          const store = storeOver(backend);
          const db = kind === "sqlite" ? rawSqlite(join(temp.dir, "store.db")) : undefined;
          // The statement the store's default order (last activity) runs.
          const select = db?.prepare(SQLITE_QUERIES.listSessionsByActivity);
          // Enough calls per measurement to rise well above the timer's resolution.
          const calls = kind === "sqlite" ? 200 : 3;
          const subject = async (): Promise<number> => {
            let listed = 0;
            const ms = await timed(async () => {
              for (let i = 0; i < calls; i++)
                listed = (await store.list({ limit: PAGE })).sessions.length;
            });
            if (listed !== Math.min(PAGE, count)) throw new Error(`B7 ${kind}: listed ${listed}`);
            return ms / calls;
          };
          const floor = async (): Promise<number> => {
            let listed = 0;
            const ms = await timed(() => {
              for (let i = 0; i < calls; i++) {
                listed =
                  select !== undefined
                    ? floorSqlite(select)
                    : floorJsonl(join(temp.dir, "jsonl", "sessions"));
              }
            });
            if (listed !== Math.min(PAGE, count)) throw new Error(`B7 ${kind} floor: ${listed}`);
            return ms / calls;
          };
          const figures = await alternate(ctx.rounds, subject, floor, (r, s, f) =>
            ctx.progress(`B7 ${kind} round ${r + 1}: list ${fmt(s)} ms, floor ${fmt(f)} ms`),
          );
          db?.close();
          await store.close();
          rows.push(
            row({
              id: "B7",
              what: `list first page of ${PAGE}, ${count} sessions (${kind})`,
              floor:
                kind === "sqlite"
                  ? "one SELECT of the page's session and summary rows (activity order)"
                  : "read + parse the first line of every file, sort",
              unit: "ms",
              ...figures,
              target: { op: "<=", value: 3 },
              facts: { backend: kind, sessions: count, callsPerMeasurement: calls },
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
