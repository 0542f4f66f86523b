// M3: the peak resident memory of a spawned server (SQLite store) while a client pages through a very large session with session/read.
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { SQLITE_QUERIES } from "../../src/generated.js";
import type { SessionHeader } from "../../src/index.js";
import { rawEventRow, rawSessionRow, rawSqlite, SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, type BenchRow, fmt, row, tempDir } from "./harness.js";
import { mib, SERVER_RSS_TARGET } from "./m2-server-rss.js";
import { type ProcMemory, procMemory, procMemoryUnavailable, sampleMemory } from "./proc-memory.js";
import { spawnSeedline } from "./rpc-clients.js";
import { entryArgs, REPO_ROOT } from "./runtime.js";
import { SYNTHETIC_EPOCH, syntheticTurns } from "./synthetic-log.js";

const MIB = 1024 * 1024;

/** Events per transaction while filling: keeps the WAL file small. */
const FILL_COMMIT_EVENTS = 100_000;

/**
 * Writes one session of whole generated turns, at least `minEvents` events, straight into a new
 * SQLite store with the backend's own insert statements (no validation, no fsync per commit),
 * generating turn by turn so that the whole log is never in memory. Returns its event count.
 */
function fillLargeSession(path: string, header: SessionHeader, minEvents: number): number {
  const db = rawSqlite(path, "process");
  try {
    const insertSession = db.prepare(SQLITE_QUERIES.insertSession);
    const insertEvent = db.prepare(SQLITE_QUERIES.insertEvent);
    const begin = db.prepare("BEGIN IMMEDIATE");
    const commit = db.prepare("COMMIT");
    let events = 0;
    let pending = 0;
    begin.run();
    insertSession.run(rawSessionRow(header));
    for (const turn of syntheticTurns(SEED + 3)) {
      if (events >= minEvents) break;
      for (const event of turn) insertEvent.run(rawEventRow(header.id, event));
      events += turn.length;
      pending += turn.length;
      if (pending >= FILL_COMMIT_EVENTS) {
        commit.run();
        begin.run();
        pending = 0;
      }
    }
    commit.run();
    db.pragma("wal_checkpoint(TRUNCATE)");
    return events;
  } finally {
    db.close();
  }
}

export function m3PagedRead(sizes: Sizes): Benchmark {
  return {
    id: "M3",
    title: "server RSS while session/read pages through a very large session",
    async run(ctx) {
      const header: SessionHeader = {
        version: 0,
        id: "m3",
        createdAt: SYNTHETIC_EPOCH,
        cwd: "/work/bench",
      };
      const unavailable = procMemoryUnavailable();
      if (unavailable !== undefined) {
        const what = `server peak RSS paging through ${sizes.pagedReadEvents} events (sqlite)`;
        ctx.skip("M3", what, unavailable);
        return [];
      }
      const temp = tempDir("m3");
      try {
        const path = join(temp.dir, "store.db");
        const fillStart = performance.now();
        const events = fillLargeSession(path, header, sizes.pagedReadEvents);
        const fileBytes = statSync(path).size;
        ctx.progress(
          `M3: ${events} events written (${fmt(fileBytes / MIB)} MiB) in ${fmt((performance.now() - fillStart) / 1000)} s`,
        );
        const what = `server peak RSS while session/read pages through ${events} events (sqlite)`;
        const server = spawnSeedline(`sqlite:${path}`);
        try {
          const pid = server.process?.pid;
          if (pid === undefined)
            throw new Error("M3: expected a spawned server with a pid, got none");
          // The server is up and has served a request before anything is read.
          await server.sessionList({ limit: 1 });
          const started = procMemory(pid);
          ctx.progress(`M3: server started at ${mib(started)}; reading every page`);
          const sampler = sampleMemory(pid);
          const start = performance.now();
          let read = 0;
          let pages = 0;
          let largestPage = 0;
          let fromSeq = 0;
          let peak: ProcMemory;
          try {
            // Pages as the server sizes them (no limit: as many events as fit its page).
            for (;;) {
              const page = await server.sessionRead({ sessionId: header.id, fromSeq });
              pages++;
              read += page.events.length;
              largestPage = Math.max(largestPage, page.events.length);
              if (page.done) break;
              if (page.nextSeq <= fromSeq) {
                throw new Error(
                  `M3: expected a page to move past seq ${fromSeq}, got nextSeq ${page.nextSeq}`,
                );
              }
              fromSeq = page.nextSeq;
            }
          } finally {
            peak = sampler.stop();
          }
          const readMs = performance.now() - start;
          if (read !== events) throw new Error(`M3: read ${read} of ${events} events`);
          ctx.progress(`M3: ${pages} pages read in ${fmt(readMs / 1000)} s; greatest ${mib(peak)}`);
          return [
            row({
              id: "M3",
              what,
              floor: "context: the server's VmRSS after starting, before the first page",
              unit: "MiB",
              ratioOf: "absolute",
              subject: [peak.hwm / MIB],
              baseline: [started.rss / MIB],
              target: SERVER_RSS_TARGET,
              facts: {
                store: "sqlite",
                events,
                fileBytes,
                pages,
                largestPageEvents: largestPage,
                pageLimit: "none (the server's own page size)",
                peakSampledRssMiB: Number(fmt(peak.rss / MIB)),
                startedRssMiB: Number(fmt(started.rss / MIB)),
                ratioToTarget: Number(fmt(peak.hwm / MIB / SERVER_RSS_TARGET.value)),
                readSeconds: Number(fmt(readMs / 1000)),
              },
            }),
            await loadRow(temp.dir, sizes.logEvents),
          ];
        } finally {
          await server.close().catch(() => {});
        }
      } finally {
        temp.remove();
      }
    },
  };
}

/**
 * The M3 bound for ACP's session/load: a server spawned over a SQLite store of one session of
 * `minEvents` events streams it as session/update notifications to a client reading them as
 * they come, its peak RSS sampled meanwhile.
 */
async function loadRow(dir: string, minEvents: number): Promise<BenchRow> {
  const header: SessionHeader = {
    version: 0,
    id: "m3-load",
    createdAt: SYNTHETIC_EPOCH,
    cwd: "/work/bench",
  };
  const path = join(dir, "load.db");
  const events = fillLargeSession(path, header, minEvents);
  const entry = entryArgs(join(REPO_ROOT, "src", "rpc", "stdio-main.ts"));
  const server = spawn(process.execPath, [...entry, "--store", `sqlite:${path}`], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "ignore"],
  });
  try {
    const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
    const send = (id: number, method: string, params: object) =>
      server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    send(1, "initialize", { protocolVersion: 1 });
    await lines.next();
    const pid = server.pid as number;
    const started = procMemory(pid);
    const sampler = sampleMemory(pid);
    const start = performance.now();
    let updates = 0;
    let peak: ProcMemory;
    try {
      send(2, "session/load", { sessionId: header.id, cwd: "/work/bench", mcpServers: [] });
      for (;;) {
        const next = await lines.next();
        if (next.done === true) throw new Error("M3 load: the server closed its output");
        const message = JSON.parse(next.value) as { id?: number; method?: string; error?: unknown };
        if (message.method === "session/update") updates++;
        else if (message.id === 2) {
          if (message.error !== undefined)
            throw new Error(`M3 load: ${JSON.stringify(message.error)}`);
          break;
        }
      }
    } finally {
      peak = sampler.stop();
    }
    const loadMs = performance.now() - start;
    return row({
      id: "M3",
      what: `server peak RSS while session/load streams ${events} events as session/update (sqlite)`,
      floor: "context: the server's VmRSS after starting, before the load",
      unit: "MiB",
      ratioOf: "absolute",
      subject: [peak.hwm / MIB],
      baseline: [started.rss / MIB],
      target: SERVER_RSS_TARGET,
      facts: {
        store: "sqlite",
        events,
        updates,
        loadSeconds: Number(fmt(loadMs / 1000)),
        startedRssMiB: Number(fmt(started.rss / MIB)),
      },
    });
  } finally {
    server.stdin.end();
    server.kill();
  }
}
