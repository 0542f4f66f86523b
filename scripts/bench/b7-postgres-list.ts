// B7 (PostgreSQL): the first page of 100 sessions in a store of many, against one SELECT of 100 session rows.
import type pg from "pg";
import { manySessions, PAGE } from "./b7-list.js";
import { type Sizes, storeOver } from "./fixtures.js";
import { alternate, type Benchmark, fmt, row, timed } from "./harness.js";
import { benchSchema, fillPostgres, postgresUnavailable, prepared } from "./postgres.js";

/** One SELECT of the first page's session rows, through the backend's own statement. */
async function floorPostgres(client: pg.Client): Promise<number> {
  const result = await client.query(
    prepared("listSessions", [Number.MAX_SAFE_INTEGER + 1, "", PAGE + 1]),
  );
  return Math.min(result.rows.length, PAGE);
}

export function b7PostgresList(sizes: Sizes): Benchmark {
  return {
    id: "B7",
    title: "list, first page of 100 (PostgreSQL)",
    async run(ctx) {
      const count = sizes.listSessions;
      const what = `list first page of ${PAGE}, ${count} sessions (postgres)`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("B7", what, unavailable);
        return [];
      }
      const pg = await benchSchema("b7");
      try {
        ctx.progress(`B7 postgres: writing ${count} sessions`);
        await fillPostgres(pg, manySessions(count));
        const store = storeOver(await pg.open("fsync"));
        const client = await pg.raw("fsync");
        // Enough calls per measurement to rise well above the timer's resolution.
        const calls = 100;
        const subject = async (): Promise<number> => {
          let listed = 0;
          const ms = await timed(async () => {
            for (let i = 0; i < calls; i++)
              listed = (await store.list({ limit: PAGE })).sessions.length;
          });
          if (listed !== Math.min(PAGE, count)) throw new Error(`B7 postgres: listed ${listed}`);
          return ms / calls;
        };
        const floor = async (): Promise<number> => {
          let listed = 0;
          const ms = await timed(async () => {
            for (let i = 0; i < calls; i++) listed = await floorPostgres(client);
          });
          if (listed !== Math.min(PAGE, count)) throw new Error(`B7 postgres floor: ${listed}`);
          return ms / calls;
        };
        const figures = await alternate(ctx.rounds, subject, floor, (r, s, f) =>
          ctx.progress(`B7 postgres round ${r + 1}: list ${fmt(s)} ms, floor ${fmt(f)} ms`),
        );
        await store.close();
        return [
          row({
            id: "B7",
            what,
            floor: "one SELECT of the page's session rows",
            unit: "ms",
            ...figures,
            target: { op: "<=", value: 3 },
            facts: { backend: "postgres", sessions: count, callsPerMeasurement: calls },
          }),
        ];
      } finally {
        await pg.drop();
      }
    },
  };
}
