// M2: the resident memory of a spawned server (SQLite store) right after it appended turn-sized batches to many sessions.
import { join } from "node:path";
import type { SeedlineClient, SessionEvent } from "../../src/index.js";
import { DEFAULT_IDLE_MS } from "../../src/rpc/idle-sessions.js";
import { SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, fmt, row, tempDir } from "./harness.js";
import { type ProcMemory, procMemory, procMemoryUnavailable, sampleMemory } from "./proc-memory.js";
import { spawnSeedline } from "./rpc-clients.js";
import { syntheticLog } from "./synthetic-log.js";

const MIB = 1024 * 1024;

/** docs/performance.md's target for M2 and M3: the server's resident memory, in MiB. */
export const SERVER_RSS_TARGET = { op: "<=", value: 300 } as const;

/** Requests in flight at once, each for a different session. */
const IN_FLIGHT = 16;

/**
 * Exactly `count` generated events as turn-sized batches: whole turns, the last one cut at
 * `count` (a session still in its turn, as an agent's is while it works).
 */
function turnBatches(seed: number, count: number): SessionEvent[][] {
  const log = syntheticLog(seed, count, "m2");
  const batches: SessionEvent[][] = [];
  let taken = 0;
  for (const batch of log.batches) {
    if (taken >= count) break;
    const part = batch.slice(0, count - taken);
    batches.push(part);
    taken += part.length;
  }
  return batches;
}

/** Runs `work` on every item, at most `limit` at a time. */
async function inPool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A server's memory in MiB, for progress lines. */
export function mib(memory: ProcMemory): string {
  return `VmRSS ${fmt(memory.rss / MIB)} MiB, VmHWM ${fmt(memory.hwm / MIB)} MiB`;
}

/**
 * Creates the sessions, then appends the batches round-robin: every session gets its first batch,
 * then every session its second, and so on, so that every session was appended to within the
 * last round when the last ack comes (none has been idle long enough to be let go).
 * @throws Error naming the request that failed and the server's last memory reading, when the
 *   server answers an append with an unexpected next seq or goes away.
 */
async function appendAll(
  server: SeedlineClient,
  pid: number,
  ids: readonly string[],
  batches: readonly SessionEvent[][],
  progress: (message: string) => void,
): Promise<{ lastRoundMs: number }> {
  const sampler = sampleMemory(pid, 200);
  let doing = "creating the sessions";
  let lastRoundMs = 0;
  try {
    await inPool(ids, IN_FLIGHT, async (sessionId) => {
      await server.sessionCreate({ sessionId, cwd: "/work/bench" });
    });
    for (const [round, events] of batches.entries()) {
      doing = `appending batch ${round + 1} of ${batches.length}`;
      const start = performance.now();
      await inPool(ids, IN_FLIGHT, async (sessionId) => {
        const { nextSeq } = await server.sessionAppend({ sessionId, events });
        const expected = (events.at(-1)?.seq ?? -1) + 1;
        if (nextSeq !== expected) {
          throw new Error(`M2: ${sessionId} answered nextSeq ${nextSeq}, expected ${expected}`);
        }
      });
      lastRoundMs = performance.now() - start;
      if (round % 4 === 3 || round === batches.length - 1) {
        progress(`M2: ${round + 1}/${batches.length} rounds, ${mib(procMemory(pid))}`);
      }
    }
    return { lastRoundMs };
  } catch (error) {
    throw new Error(
      `M2: expected the server to keep answering while ${doing}; it failed with ${(error as Error).message} (its memory, greatest read: ${mib(sampler.stop())})`,
    );
  } finally {
    sampler.stop();
  }
}

export function m2ServerRss(sizes: Sizes): Benchmark {
  return {
    id: "M2",
    title: "RSS of a server that just appended to many sessions",
    async run(ctx) {
      const count = sizes.serverSessions;
      const batches = turnBatches(SEED + 2, sizes.serverSessionEvents);
      const perSession = batches.reduce((sum, batch) => sum + batch.length, 0);
      const what = `server RSS after appending to ${count} sessions × ${perSession} events (sqlite)`;
      const unavailable = procMemoryUnavailable();
      if (unavailable !== undefined) {
        ctx.skip("M2", what, unavailable);
        return [];
      }
      const temp = tempDir("m2");
      const server = spawnSeedline(`sqlite:${join(temp.dir, "store.db")}`);
      try {
        const pid = server.process?.pid;
        if (pid === undefined)
          throw new Error("M2: expected a spawned server with a pid, got none");
        // The server is up and has served a request before anything is read.
        await server.sessionList({ limit: 1 });
        const started = procMemory(pid);
        ctx.progress(
          `M2: ${count} sessions × ${batches.length} turn batches (${perSession} events each); server started at ${mib(started)}`,
        );
        const start = performance.now();
        const ids = Array.from({ length: count }, (_, i) => `m2-${i}`);
        const { lastRoundMs } = await appendAll(server, pid, ids, batches, ctx.progress);
        // Right after the last ack: nothing has been let go for idleness yet.
        const after = procMemory(pid);
        const totalMs = performance.now() - start;
        ctx.progress(`M2: after the last ack ${mib(after)} (${fmt(totalMs / 1000)} s)`);
        if (lastRoundMs >= DEFAULT_IDLE_MS) {
          ctx.progress(
            `M2: the last round took ${fmt(lastRoundMs / 1000)} s, longer than the server's idle time (${DEFAULT_IDLE_MS / 1000} s): some sessions may have been let go`,
          );
        }
        return [
          row({
            id: "M2",
            what,
            floor: "context: the server's VmRSS after starting, before any session",
            unit: "MiB",
            ratioOf: "absolute",
            subject: [after.rss / MIB],
            baseline: [started.rss / MIB],
            target: SERVER_RSS_TARGET,
            facts: {
              store: "sqlite",
              durability: "fsync (the default)",
              sessions: count,
              eventsPerSession: perSession,
              batchesPerSession: batches.length,
              inFlight: IN_FLIGHT,
              vmHwmMiB: Number(fmt(after.hwm / MIB)),
              startedRssMiB: Number(fmt(started.rss / MIB)),
              ratioToTarget: Number(fmt(after.rss / MIB / SERVER_RSS_TARGET.value)),
              appendSeconds: Number(fmt(totalMs / 1000)),
              lastRoundSeconds: Number(fmt(lastRoundMs / 1000)),
              idleSeconds: DEFAULT_IDLE_MS / 1000,
            },
          }),
        ];
      } finally {
        await server.close().catch(() => {});
        temp.remove();
      }
    },
  };
}
