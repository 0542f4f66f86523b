// B5: session/append of 1-event batches over stdio, many sessions in flight, against a bare echo server with the same client.
import { join } from "node:path";
import type { SeedlineClient } from "../../src/client/seedline-client.js";
import type { SessionEvent } from "../../src/index.js";
import { SEED, type Sizes } from "./fixtures.js";
import { alternate, type Benchmark, fmt, row, tempDir } from "./harness.js";
import { spawnEcho, spawnSeedline } from "./rpc-clients.js";
import { syntheticLog } from "./synthetic-log.js";

/**
 * Appends `events` one at a time to each session, every session in its own loop, so that one
 * request per session is in flight throughout; returns requests per second.
 */
async function drive(
  client: SeedlineClient,
  sessions: readonly string[],
  events: readonly SessionEvent[],
): Promise<number> {
  const start = performance.now();
  await Promise.all(
    sessions.map(async (sessionId) => {
      for (const event of events) {
        const { nextSeq } = await client.sessionAppend({ sessionId, events: [event] });
        if (nextSeq !== event.seq + 1) throw new Error(`B5: ${sessionId} answered ${nextSeq}`);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return (sessions.length * events.length) / seconds;
}

export function b5RpcAppend(sizes: Sizes): Benchmark {
  return {
    id: "B5",
    title: "session/append of 1-event batches over stdio, many in flight",
    async run(ctx) {
      const count = sizes.rpcSessions;
      const events = syntheticLog(SEED + 5, sizes.rpcAppendsPerSession).events.slice(
        0,
        sizes.rpcAppendsPerSession,
      );
      const temp = tempDir("b5");
      const seedline = spawnSeedline(`sqlite:${join(temp.dir, "store.db")}`);
      const echo = spawnEcho();
      try {
        let batch = 0;
        // Fresh sessions for every measurement, created before the clock starts.
        const measureSeedline = async (): Promise<number> => {
          const ids = Array.from({ length: count }, (_, i) => `b5-${batch}-${i}`);
          batch++;
          for (const sessionId of ids)
            await seedline.sessionCreate({ sessionId, cwd: "/work/bench" });
          return drive(seedline, ids, events);
        };
        const measureEcho = async (): Promise<number> =>
          drive(
            echo,
            Array.from({ length: count }, (_, i) => `echo-${i}`),
            events,
          );
        ctx.progress(`B5: warming up (${count} sessions × ${events.length} appends)`);
        await measureSeedline();
        await measureEcho();
        const figures = await alternate(ctx.rounds, measureSeedline, measureEcho, (r, s, f) =>
          ctx.progress(`B5 round ${r + 1}: seedline ${fmt(s)} req/s, echo ${fmt(f)} req/s`),
        );
        return [
          row({
            id: "B5",
            what: `session/append 1-event batches, ${count} in flight on ${count} sessions (sqlite, fsync)`,
            floor: "bare NDJSON echo server on vscode-jsonrpc, same client",
            unit: "req/s",
            ...figures,
            target: { op: ">=", value: 0.5 },
            facts: {
              sessions: count,
              inFlight: count,
              requestsPerMeasurement: count * events.length,
              store: "sqlite",
              durability: "fsync (the default)",
            },
          }),
        ];
      } finally {
        await Promise.allSettled([seedline.close(), echo.close()]);
        temp.remove();
      }
    },
  };
}
