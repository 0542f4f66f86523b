// B2: durable JSONL appends of turn-sized batches through the store (validation on) against raw writeSync + fsync per batch.
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { JsonlBackend } from "../../src/index.js";
import { formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { checkFacts, checksOnly, withChecks } from "./checks-only.js";
import { SEED, type Sizes, storeOver } from "./fixtures.js";
import { type Benchmark, row, tempDir, timed } from "./harness.js";
import { syntheticLog } from "./synthetic-log.js";

export function b2JsonlAppend(sizes: Sizes): Benchmark {
  return {
    id: "B2",
    title: "JSONL append, turn-sized batches, fsync per batch, validation on",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.appendEvents, "b2");
      const { header, batches, events } = log;
      ctx.progress(`B2: ${events.length} events in ${batches.length} turn batches`);

      const subject = async (): Promise<number> => {
        const temp = tempDir("b2");
        try {
          const store = storeOver(new JsonlBackend(temp.dir));
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

      // The same lines: the header with the first batch, then each batch in one writeSync and one
      // fsync, with no validation, lock, atomic publish or seq check.
      const floor = async (): Promise<number> => {
        const temp = tempDir("b2-floor");
        try {
          const dir = join(temp.dir, "sessions");
          mkdirSync(dir);
          const fd = openSync(join(dir, "b2.jsonl"), "wx");
          const ms = await timed(() => {
            batches.forEach((batch, i) => {
              let text = i === 0 ? formatHeaderLine(header) : "";
              for (const event of batch) text += `${JSON.stringify(event)}\n`;
              writeSync(fd, text);
              fsyncSync(fd);
            });
          });
          closeSync(fd);
          return ms;
        } finally {
          temp.remove();
        }
      };

      const figures = await withChecks(
        ctx.rounds,
        "B2",
        subject,
        floor,
        checksOnly(header, batches),
        batches,
        (message) => ctx.progress(message),
      );
      return [
        row({
          id: "B2",
          what: `JSONL append ${events.length} events, ${batches.length} turn batches, fsync, validated`,
          floor: "raw writeSync of the same lines + fsync per batch",
          unit: "ms",
          subject: figures.subject,
          baseline: figures.baseline,
          target: { op: "<=", value: 1.25 },
          facts: {
            ...checkFacts(figures),
            events: events.length,
            batches: batches.length,
            eventBytes: log.eventBytes,
          },
        }),
      ];
    },
  };
}
