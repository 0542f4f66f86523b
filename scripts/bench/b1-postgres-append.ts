// B1 (PostgreSQL): durable appends of turn-sized batches through the store (validation on) against raw prepared inserts.

import { checkFacts, checksOnly, withChecks } from "./checks-only.js";
import { SEED, type Sizes, storeOver } from "./fixtures.js";
import { type Benchmark, row, timed } from "./harness.js";
import {
  benchSchema,
  postgresUnavailable,
  prepared,
  rawEventValues,
  rawSessionValues,
} from "./postgres.js";
import { syntheticLog } from "./synthetic-log.js";

export function b1PostgresAppend(sizes: Sizes): Benchmark {
  return {
    id: "B1",
    title: "PostgreSQL append, turn-sized batches, durable, validation on",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.appendEvents, "b1");
      const { header, batches, events } = log;
      const what = `PostgreSQL append ${events.length} events, ${batches.length} turn batches, synchronous_commit on, validated`;
      const unavailable = await postgresUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("B1", what, unavailable);
        return [];
      }
      ctx.progress(`B1 postgres: ${events.length} events in ${batches.length} turn batches`);
      const pg = await benchSchema("b1");
      try {
        const subject = async (round: number): Promise<number> => {
          const id = `${header.id}-store-${round}`;
          const store = storeOver(await pg.open("fsync"));
          const session = await store.create({ id, meta: { createdAt: header.createdAt } });
          const ms = await timed(async () => {
            for (const batch of batches) await store.append(session, batch);
          });
          await store.close();
          return ms;
        };

        // The same rows in the same transactions (the session row with the first batch), with
        // the backend's own statements and connection settings, one statement per batch, without
        // validation, the row lock or the seq check.
        const client = await pg.raw("fsync");
        const floor = async (round: number): Promise<number> => {
          const id = `${header.id}-raw-${round}`;
          return timed(async () => {
            for (const [i, batch] of batches.entries()) {
              await client.query("BEGIN");
              if (i === 0) {
                await client.query(prepared("insertSession", rawSessionValues({ ...header, id })));
              }
              await client.query(prepared("insertEvents", rawEventValues(id, batch)));
              await client.query("COMMIT");
            }
          });
        };

        const figures = await withChecks(
          ctx.rounds,
          "B1 postgres",
          subject,
          floor,
          checksOnly(header, batches),
          batches,
          (message) => ctx.progress(message),
        );
        return [
          row({
            id: "B1",
            what,
            floor:
              "raw prepared multi-row inserts (the same unnest statement), same rows/transactions/settings",
            unit: "ms",
            subject: figures.subject,
            baseline: figures.baseline,
            target: { op: "<=", value: 1.15 },
            facts: {
              ...checkFacts(figures),
              backend: "postgres",
              events: events.length,
              batches: batches.length,
              eventBytes: log.eventBytes,
            },
          }),
        ];
      } finally {
        await pg.drop();
      }
    },
  };
}
