// B6: session/read of a whole session over stdio (page by page, as a client reads it), against loading it and JSON.stringify in process.
import { join } from "node:path";
import { SqliteBackend } from "../../src/index.js";
import { fillSqlite, SEED, type Sizes, storeOver } from "./fixtures.js";
import { alternate, type Benchmark, fmt, row, tempDir, timed } from "./harness.js";
import { spawnSeedline } from "./rpc-clients.js";
import { syntheticLog } from "./synthetic-log.js";

export function b6RpcRead(sizes: Sizes): Benchmark {
  return {
    id: "B6",
    title: "session/read of a session over stdio",
    async run(ctx) {
      const log = syntheticLog(SEED + 6, sizes.readEvents, "b6");
      // Whole turns: a log cut inside a turn would be repaired (written) by the first read.
      const events = log.events;
      // Each measurement reads a session nobody has loaded yet: one copy per round and side
      // (plus the warm-up's).
      const copies = (prefix: string) =>
        Array.from({ length: ctx.rounds + 1 }, (_, round) => ({
          header: { ...log.header, id: `${prefix}-${round}` },
          events,
        }));
      const temp = tempDir("b6");
      const path = join(temp.dir, "store.db");
      fillSqlite(path, [...copies("rpc"), ...copies("local")]);
      const backend = await SqliteBackend.open(path);
      const client = spawnSeedline(`sqlite:${path}`);
      try {
        const overWire = async (round: number): Promise<number> => {
          let read = 0;
          const ms = await timed(async () => {
            // Page by page, as a client reads a whole session: one answer holds at most
            // MAX_READ_LIMIT events (and a bounded number of bytes).
            for (let done = false; !done; ) {
              const page = await client.sessionRead({ sessionId: `rpc-${round}`, fromSeq: read });
              read += page.events.length;
              done = page.done;
            }
          });
          if (read !== events.length) throw new Error(`B6: read ${read} events over stdio`);
          return ms;
        };
        const inProcess = async (round: number): Promise<number> => {
          const store = storeOver(backend);
          let bytes = 0;
          const ms = await timed(async () => {
            const session = await store.load(`local-${round}`);
            bytes = JSON.stringify({
              header: session.header,
              events: await session.readEvents(),
            }).length;
          });
          if (bytes === 0) throw new Error("B6: nothing serialized");
          await store.unload(`local-${round}`);
          return ms;
        };
        ctx.progress(`B6: ${events.length} events, ${ctx.rounds} rounds`);
        await overWire(ctx.rounds);
        await inProcess(ctx.rounds);
        const figures = await alternate(ctx.rounds, overWire, inProcess, (r, s, f) =>
          ctx.progress(`B6 round ${r + 1}: over stdio ${fmt(s)} ms, in process ${fmt(f)} ms`),
        );
        return [
          row({
            id: "B6",
            what: `session/read of ${events.length} events over stdio (sqlite, cold session)`,
            floor: "store.load (cold) + JSON.stringify in process",
            unit: "ms",
            ...figures,
            target: { op: "<=", value: 2 },
            facts: { events: events.length, store: "sqlite" },
          }),
        ];
      } finally {
        await Promise.allSettled([client.close(), backend.close()]);
        temp.remove();
      }
    },
  };
}
