// B4 (PostgreSQL): a durable fork at the middle of a large session, against a hand-written INSERT … SELECT and against forking through JavaScript.
import { forkChildHeader, forkRows, storeForks } from "./b4-fork.js";
import { SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, timed } from "./harness.js";
import {
  benchSchema,
  fillPostgres,
  postgresUnavailable,
  prepared,
  rawSessionValues,
} from "./postgres.js";
import { middleTurnEnd, syntheticLog } from "./synthetic-log.js";

/** The prefix copy, written by hand: the child's rows from the source's, inside the database. */
const COPY_PREFIX = {
  name: "bench_b4_copy",
  text: `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
SELECT $1::text, seq, type, time, data, source_event_seqs, surface_op
FROM events WHERE session_id = $2 AND seq <= $3
ORDER BY seq`,
} as const;

export function b4PostgresFork(sizes: Sizes): Benchmark {
  return {
    id: "B4",
    title: "fork at the middle of a large session (PostgreSQL), durable",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b4");
      const sourceId = log.header.id;
      const boundary = middleTurnEnd(log.events);
      const what = `fork at seq ${boundary} of ${log.events.length} (postgres), synchronous_commit on`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("B4", what, unavailable);
        return [];
      }
      const pg = await benchSchema("b4");
      try {
        await fillPostgres(pg, [{ header: log.header, events: log.events }]);
        const backend = await pg.open("fsync");
        const client = await pg.raw("fsync");
        ctx.progress(`B4 postgres: forking ${log.events.length} events at seq ${boundary}`);
        const childHeader = forkChildHeader(log.header, boundary);
        const dropChild = (id: string) => client.query(prepared("deleteSession", [id]));

        // The copy alone: the child's row and INSERT … SELECT of the prefix in one durable
        // transaction.
        const copy = async (round: number): Promise<number> => {
          const child = `copy-${round}`;
          const ms = await timed(async () => {
            await client.query("BEGIN");
            await client.query(prepared("insertSession", rawSessionValues(childHeader(child))));
            await client.query({ ...COPY_PREFIX, values: [child, sourceId, boundary] });
            await client.query("COMMIT");
          });
          await dropChild(child);
          return ms;
        };
        return await forkRows(
          ctx,
          "postgres",
          { ...storeForks(backend, sourceId, boundary), copy },
          {
            what,
            floor: "hand-written INSERT … SELECT of the prefix rows, one durable transaction",
            facts: { backend: "postgres", events: log.events.length, boundary },
          },
        );
      } finally {
        await pg.drop();
      }
    },
  };
}
