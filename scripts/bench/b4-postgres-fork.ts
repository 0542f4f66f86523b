// B4 (PostgreSQL): a durable fork at the middle of a large session, against a hand-written INSERT … SELECT and against forking through JavaScript.
import type { SessionHeader } from "../../src/index.js";
import { SEED, type Sizes, storeOver } from "./fixtures.js";
import { type Benchmark, fmt, rotate, row, timed } from "./harness.js";
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
        const childHeader = (id: string): SessionHeader => ({
          version: 0,
          id,
          createdAt: log.header.createdAt + 1,
          cwd: log.header.cwd as string,
          parentSession: sourceId,
          seedLength: boundary + 1,
        });
        const dropChild = (id: string) => client.query(prepared("deleteSession", [id]));

        const fork = async (round: number): Promise<number> => {
          const store = storeOver(backend);
          const child = `fork-${round}`;
          const ms = await timed(() => store.fork(sourceId, boundary, child));
          await store.delete(child);
          return ms;
        };
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
        // Forking through JavaScript: load the source, create the child seeded with the prefix.
        const viaJs = async (round: number): Promise<number> => {
          const store = storeOver(backend);
          const child = `js-${round}`;
          const ms = await timed(async () => {
            const source = await store.load(sourceId);
            await store.create(child, {
              seed: source.events.slice(0, boundary + 1),
              meta: {
                ...(source.header.cwd === undefined ? {} : { cwd: source.header.cwd }),
                parentSession: sourceId,
                seedLength: boundary + 1,
              },
            });
          });
          await store.delete(child);
          await store.unload(sourceId);
          return ms;
        };

        const [forks = [], copies = [], js = []] = await rotate(
          ctx.rounds,
          [fork, copy, viaJs],
          (r, f) =>
            ctx.progress(
              `B4 postgres round ${r + 1}: fork ${fmt(f[0] as number)} ms, copy ${fmt(f[1] as number)} ms, via JS ${fmt(f[2] as number)} ms`,
            ),
        );
        const facts = { backend: "postgres", events: log.events.length, boundary };
        return [
          row({
            id: "B4",
            what,
            floor: "hand-written INSERT … SELECT of the prefix rows, one durable transaction",
            unit: "ms",
            subject: forks,
            baseline: copies,
            target: { op: "<=", value: 1.3 },
            facts,
          }),
          row({
            id: "B4",
            what: "fork speed-up over load + seeded create (postgres)",
            floor: "fork through JavaScript: load, then create with the prefix as seed",
            unit: "ms",
            ratioOf: "floor/subject",
            subject: forks,
            baseline: js,
            target: { op: ">=", value: 3 },
            facts,
          }),
        ];
      } finally {
        await pg.drop();
      }
    },
  };
}
