// B3 (PostgreSQL): loading a large session through the store (validation on) against a raw SELECT of its rows and JSON.parse of each.
import type pg from "pg";
import { B3_TARGET, eventFromRow, loadThroughStore, type RawEventRow } from "./b3-load.js";
import { SEED, type Sizes } from "./fixtures.js";
import { alternateWithChecks, type Benchmark, row, timed } from "./harness.js";
import { benchSchema, fillPostgres, postgresUnavailable } from "./postgres.js";
import { loadChecks, readCheckFacts } from "./read-checks.js";
import { syntheticLog } from "./synthetic-log.js";

const SELECT_ROWS = {
  name: "bench_b3_rows",
  text: "SELECT type, seq, time, data, source_event_seqs, surface_op FROM events WHERE session_id = $1 ORDER BY seq",
  rowMode: "array",
} as const;

/** Reads every row of a session and builds each event with JSON.parse of its JSON columns. */
async function floorPostgres(client: pg.Client, id: string): Promise<number> {
  const result = await client.query<RawEventRow>({ ...SELECT_ROWS, values: [id] });
  const events: unknown[] = [];
  for (const r of result.rows) events.push(eventFromRow(r));
  return events.length;
}

export function b3PostgresLoad(sizes: Sizes): Benchmark {
  return {
    id: "B3",
    title: "load a large session (PostgreSQL), validation on",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b3");
      const what = `load ${log.events.length} events (postgres), validated`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("B3", what, unavailable);
        return [];
      }
      const pg = await benchSchema("b3");
      try {
        await fillPostgres(pg, [{ header: log.header, events: log.events }]);
        const backend = await pg.open("fsync");
        const client = await pg.raw("fsync");
        ctx.progress(`B3 postgres: loading ${log.events.length} events`);
        const subject = loadThroughStore(backend, log.header.id, log.events.length, "postgres");
        const floor = async (): Promise<number> => {
          let length = 0;
          const ms = await timed(async () => {
            length = await floorPostgres(client, log.header.id);
          });
          if (length !== log.events.length) throw new Error(`B3 postgres floor: ${length} events`);
          return ms;
        };
        const checks = loadChecks(
          log.header,
          log.events.map((event) => JSON.stringify(event)),
        );
        const figures = await alternateWithChecks(
          ctx.rounds,
          "B3 postgres",
          subject,
          floor,
          checks,
          ctx.progress,
        );
        return [
          row({
            id: "B3",
            what,
            floor: "raw SELECT of the rows + JSON.parse each JSON column",
            unit: "ms",
            ...figures,
            target: B3_TARGET,
            facts: {
              backend: "postgres",
              events: log.events.length,
              eventBytes: log.eventBytes,
              ...readCheckFacts(figures),
            },
          }),
        ];
      } finally {
        await pg.drop();
      }
    },
  };
}
