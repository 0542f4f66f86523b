// B1: durable SQLite appends of turn-sized batches through the store (validation on) against raw prepared inserts.
import { join } from "node:path";
import { SQLITE_QUERIES } from "../../src/generated.js";
import { SqliteBackend } from "../../src/index.js";
import { checkFacts, checksOnly, withChecks } from "./checks-only.js";
import { rawEventRow, rawSessionRow, rawSqlite, SEED, type Sizes, storeOver } from "./fixtures.js";
import { type Benchmark, row, tempDir, timed } from "./harness.js";
import { syntheticLog } from "./synthetic-log.js";

export function b1SqliteAppend(sizes: Sizes): Benchmark {
  return {
    id: "B1",
    title: "SQLite append, turn-sized batches, durable, validation on",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.appendEvents, "b1");
      const { header, batches, events } = log;
      ctx.progress(`B1: ${events.length} events in ${batches.length} turn batches`);

      const subject = async (): Promise<number> => {
        const temp = tempDir("b1");
        try {
          const backend = await SqliteBackend.open(join(temp.dir, "store.db"));
          const store = storeOver(backend);
          const session = await store.create({
            id: header.id,
            meta: { createdAt: header.createdAt },
          });
          const ms = await timed(async () => {
            for (const batch of batches) await store.append(session, batch);
          });
          await store.close();
          return ms;
        } finally {
          temp.remove();
        }
      };

      // The same rows in the same transactions (the session row with the first batch), the same
      // statements and pragmas, without validation, grouping or the seq check.
      const floor = async (): Promise<number> => {
        const temp = tempDir("b1-floor");
        try {
          const db = rawSqlite(join(temp.dir, "store.db"), "fsync");
          const insertSession = db.prepare(SQLITE_QUERIES.insertSession);
          const insertEvent = db.prepare(SQLITE_QUERIES.insertEvent);
          const begin = db.prepare("BEGIN IMMEDIATE");
          const commit = db.prepare("COMMIT");
          const ms = await timed(() => {
            batches.forEach((batch, i) => {
              begin.run();
              if (i === 0) insertSession.run(rawSessionRow(header));
              for (const event of batch) insertEvent.run(rawEventRow(header.id, event));
              commit.run();
            });
          });
          db.close();
          return ms;
        } finally {
          temp.remove();
        }
      };

      const figures = await withChecks(
        ctx.rounds,
        "B1",
        subject,
        floor,
        checksOnly(header, batches),
        batches,
        (message) => ctx.progress(message),
      );
      return [
        row({
          id: "B1",
          what: `SQLite append ${events.length} events, ${batches.length} turn batches, fsync, validated`,
          floor: "raw prepared inserts, same rows/transactions/pragmas",
          unit: "ms",
          subject: figures.subject,
          baseline: figures.baseline,
          target: { op: "<=", value: 1.15 },
          facts: {
            ...checkFacts(figures),
            events: events.length,
            batches: batches.length,
            eventBytes: log.eventBytes,
            avgEventBytes: Math.round(log.eventBytes / events.length),
          },
        }),
      ];
    },
  };
}
