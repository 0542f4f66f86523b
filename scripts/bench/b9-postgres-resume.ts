// B9 (PostgreSQL): resuming a large session (open for writing, messages derived) against one SELECT of its message-producing rows and JSON.parse of each.
import type pg from "pg";
import { eventFromRow, type RawEventRow } from "./b3-load.js";
import { B9_TARGET, messageProducing, resumeThroughStore } from "./b9-resume.js";
import { SEED, type Sizes } from "./fixtures.js";
import { alternateWithChecks, type Benchmark, row, timed } from "./harness.js";
import { benchSchema, fillPostgres, postgresUnavailable } from "./postgres.js";
import { readCheckFacts, resumeChecks, resumeLines } from "./read-checks.js";
import { syntheticLog } from "./synthetic-log.js";

const SELECT_MESSAGE_ROWS = {
  name: "bench_b9_message_rows",
  text: "SELECT type, seq, time, data, source_event_seqs, surface_op FROM events WHERE session_id = $1 AND surface_op IS NOT NULL ORDER BY seq",
  rowMode: "array",
} as const;

/** Selects the session's message-producing rows and builds each event with JSON.parse of its JSON columns. */
async function floorPostgres(client: pg.Client, id: string): Promise<number> {
  const result = await client.query<RawEventRow>({ ...SELECT_MESSAGE_ROWS, values: [id] });
  const events: unknown[] = [];
  for (const r of result.rows) events.push(eventFromRow(r));
  return events.length;
}

export function b9PostgresResume(sizes: Sizes): Benchmark {
  return {
    id: "B9",
    title: "resume a large session (PostgreSQL): open for writing, messages derived",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b9");
      const producing = messageProducing(log.events);
      const what = `resume ${log.events.length} events (postgres): openForWriting + deriveMessages`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("B9", what, unavailable);
        return [];
      }
      const pg = await benchSchema("b9");
      try {
        await fillPostgres(pg, [{ header: log.header, events: log.events }]);
        const backend = await pg.open("fsync");
        const client = await pg.raw("fsync");
        ctx.progress(
          `B9 postgres: resuming ${log.events.length} events (${producing} message-producing)`,
        );
        const subject = resumeThroughStore(backend, log.header.id, log.events.length, "postgres");
        const floor = async (): Promise<number> => {
          let length = 0;
          const ms = await timed(async () => {
            length = await floorPostgres(client, log.header.id);
          });
          if (length !== producing) {
            throw new Error(`B9 postgres floor: parsed ${length} events, expected ${producing}`);
          }
          return ms;
        };
        const resumed = resumeLines(log.events);
        const checks = resumeChecks(log.header, resumed.lines, resumed.turnEnd);
        const figures = await alternateWithChecks(
          ctx.rounds,
          "B9 postgres",
          subject,
          floor,
          checks,
          ctx.progress,
        );
        return [
          row({
            id: "B9",
            what,
            floor:
              "one raw SELECT of only the rows WHERE surface_op IS NOT NULL + JSON.parse each JSON column",
            unit: "ms",
            ...figures,
            target: B9_TARGET,
            facts: {
              backend: "postgres",
              events: log.events.length,
              messageProducingEvents: producing,
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
