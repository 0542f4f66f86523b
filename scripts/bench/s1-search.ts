// S1: the first page of a full-text search over the many-session store of B7, on SQLite, PostgreSQL and (the slow path) JSONL.
import { join } from "node:path";
import type { SessionStore } from "../../src/index.js";
import { manySessions } from "./b7-list.js";
import {
  type BackendKind,
  fillJsonl,
  fillSqlite,
  openDurable,
  type Sizes,
  storeOver,
} from "./fixtures.js";
import {
  alternate,
  type BenchContext,
  type Benchmark,
  type BenchRow,
  fmt,
  row,
  tempDir,
  timed,
} from "./harness.js";
import { benchSchema, fillPostgres, postgresUnavailable } from "./postgres.js";

/** The page size asked for: session/search's default. */
const PAGE = 20;

/**
 * The queries timed: two words of the synthetic prose (every session holds them, so a page fills
 * from the newest sessions), and a word no session holds (every indexed row is looked at).
 */
const QUERIES = [
  { name: "two common words", query: "function error", hits: PAGE },
  { name: "no match", query: "zzqx", hits: 0 },
] as const;

/** The target of the first page on an indexed store, in ms. */
const INDEXED_TARGET_MS = 50;
/** The JSONL scan: reported as the slow path, with a loose bound for a page that fills early. */
const SCAN_TARGET_MS = 1000;

async function measure(
  ctx: BenchContext,
  label: string,
  store: SessionStore,
  calls: number,
  query: (typeof QUERIES)[number],
): Promise<{ subject: number[]; baseline: number[] }> {
  const subject = async (): Promise<number> => {
    let found = -1;
    const ms = await timed(async () => {
      for (let i = 0; i < calls; i++)
        found = (await store.search({ query: query.query, limit: PAGE })).results.length;
    });
    if (found !== query.hits)
      throw new Error(`S1 ${label}: found ${found}, expected ${query.hits}`);
    return ms / calls;
  };
  const floor = async (): Promise<number> => {
    const ms = await timed(async () => {
      for (let i = 0; i < calls; i++) await store.list({ limit: PAGE });
    });
    return ms / calls;
  };
  return alternate(ctx.rounds, subject, floor, (r, s, f) =>
    ctx.progress(
      `S1 ${label} ${query.name} round ${r + 1}: search ${fmt(s)} ms, list ${fmt(f)} ms`,
    ),
  );
}

function s1Row(
  kind: string,
  query: (typeof QUERIES)[number],
  count: number,
  figures: { subject: number[]; baseline: number[] },
  facts: Record<string, number | string>,
): BenchRow {
  const indexed = kind !== "jsonl";
  return row({
    id: "S1",
    what: `search first page of ${PAGE}, ${query.name}, ${count} sessions (${kind}${indexed ? "" : ": scan, the slow path"})`,
    floor: `list first page of ${PAGE} (context only)`,
    unit: "ms",
    ratioOf: "absolute",
    ...figures,
    target: { op: "<=", value: indexed ? INDEXED_TARGET_MS : SCAN_TARGET_MS },
    facts: { backend: kind, sessions: count, query: query.query, ...facts },
  });
}

export function s1Search(sizes: Sizes): Benchmark {
  return {
    id: "S1",
    title: "search, first page of 20",
    async run(ctx) {
      const count = sizes.listSessions;
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const temp = tempDir(`s1-${kind}`);
        try {
          ctx.progress(`S1 ${kind}: writing ${count} sessions`);
          if (kind === "sqlite") fillSqlite(join(temp.dir, "store.db"), manySessions(count));
          else fillJsonl(join(temp.dir, "jsonl"), manySessions(count));
          // The rows were written under the backend: opening it builds the index from them once.
          let backend: Awaited<ReturnType<typeof openDurable>> | undefined;
          const buildMs = await timed(async () => {
            backend = await openDurable(kind, temp.dir);
          });
          const store = storeOver(backend as NonNullable<typeof backend>);
          for (const query of QUERIES) {
            // The scan reads every log when nothing matches: seconds, not worth rounds.
            if (kind === "jsonl" && query.hits === 0) continue;
            const calls = kind === "sqlite" ? 5 : 1;
            const figures = await measure(ctx, kind, store, calls, query);
            rows.push(
              s1Row(kind, query, count, figures, {
                indexBuildMs: Math.round(buildMs),
                callsPerMeasurement: calls,
              }),
            );
          }
          await store.close();
        } finally {
          temp.remove();
        }
      }
      const what = `search first page of ${PAGE}, ${count} sessions (postgres)`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("S1", what, unavailable);
        return rows;
      }
      const pg = await benchSchema("s1");
      try {
        ctx.progress(`S1 postgres: writing ${count} sessions`);
        await fillPostgres(pg, manySessions(count));
        // The rows were written under the backend: without the index, the next open builds it.
        const raw = await pg.raw("process");
        await raw.query("DROP TABLE search_texts");
        let backend: Awaited<ReturnType<typeof pg.open>> | undefined;
        const buildMs = await timed(async () => {
          backend = await pg.open("fsync");
        });
        const store = storeOver(backend as NonNullable<typeof backend>);
        for (const query of QUERIES) {
          const calls = 5;
          const figures = await measure(ctx, "postgres", store, calls, query);
          rows.push(
            s1Row("postgres", query, count, figures, {
              indexBuildMs: Math.round(buildMs),
              callsPerMeasurement: calls,
            }),
          );
        }
        await store.close();
      } finally {
        await pg.drop();
      }
      return rows;
    },
  };
}
