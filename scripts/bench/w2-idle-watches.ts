// W2: what idle watches cost: the CPU of a spawned server holding many watches on sessions nobody appends to, over an idle window.
import { spawnSync } from "node:child_process";
import { setMaxListeners } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { SessionStore } from "../../src/index.js";
import type { Sizes } from "./fixtures.js";
import { type Benchmark, type BenchRow, fmt, row, settle } from "./harness.js";
import { spawnSeedline } from "./rpc-clients.js";
import { type WatchKind, watchStore } from "./watch-stores.js";

/** docs/performance.md's target (W2): the server's CPU, in % of one core. */
const TARGET_PERCENT = 2;

/** How long the server is left alone after its watches are set up, before the window opens. */
const QUIET_MS = 1000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second, the unit of /proc/PID/stat's CPU times. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim();
    const value = Number(out);
    ticksPerSecond = Number.isInteger(value) && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

/** The CPU time `pid` has used so far, user and system, all its threads, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The fields after the command name, which is in parentheses and may hold spaces: state is the
  // first of them, utime and stime the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

/** The server's CPU over a window of `ms`, in % of one core (wall time of the window). */
async function cpuPercent(pid: number, ms: number): Promise<number> {
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  await sleep(ms);
  const cpu1 = cpuMs(pid);
  return ((cpu1 - cpu0) / (performance.now() - t0)) * 100;
}

/** W2 on one backend: the server's CPU with its watches, and (context) the same server before them. */
async function onBackend(
  kind: WatchKind,
  sizes: Sizes,
  ctx: Parameters<Benchmark["run"]>[0],
): Promise<BenchRow[]> {
  const count = sizes.idleWatches;
  const what = `${count} idle watches, server CPU (${kind})`;
  if (!existsSync(`/proc/${process.pid}/stat`)) {
    ctx.skip("W2", what, "no /proc/PID/stat to read a process's CPU time from (Linux only)");
    return [];
  }
  const store = await watchStore(kind, "w2", ctx, "W2", what);
  if (store === undefined) return [];
  try {
    ctx.progress(`W2 ${kind}: creating ${count} sessions`);
    const ids = Array.from({ length: count }, (_, i) => `w2-${i}`);
    const creator = new SessionStore({ backend: await store.open() });
    for (let at = 0; at < ids.length; at += 50)
      await Promise.all(ids.slice(at, at + 50).map((id) => creator.create({ id })));
    await creator.close();
    const server = spawnSeedline(store.url);
    try {
      const pid = server.process?.pid;
      if (pid === undefined) throw new Error("W2: the server has no pid");
      // The server is up and has served a request before anything is measured.
      await server.sessionList({ limit: 1 });
      const windowMs = sizes.idleWindowMs;
      const subject: number[] = [];
      const baseline: number[] = [];
      for (let round = 0; round < sizes.watchRounds; round++) {
        await settle();
        const before = await cpuPercent(pid, windowMs);
        // Stopped through the signal: it also ends a `next` that is waiting (`return` does not).
        const controller = new AbortController();
        // One signal for every watch: not a leak.
        setMaxListeners(0, controller.signal);
        const watches = ids.map((id) => server.watch(id, { signal: controller.signal }));
        await Promise.all(watches.map((watch) => watch.ready));
        let delivered = 0;
        let failure: unknown;
        const loops = watches.map(async (watch) => {
          try {
            for await (const batch of watch) delivered += batch.events.length;
          } catch (error) {
            failure ??= error;
          }
        });
        await sleep(Math.min(QUIET_MS, windowMs));
        const idle = await cpuPercent(pid, windowMs);
        controller.abort();
        await Promise.all(loops);
        if (failure !== undefined) throw failure;
        // Nothing was appended: a watch that delivered something measured something else.
        if (delivered > 0) throw new Error(`W2: idle watches delivered ${delivered} events`);
        baseline.push(before);
        subject.push(idle);
        ctx.progress(
          `W2 ${kind} round ${round + 1}: ${count} idle watches ${fmt(idle)}% of a core, no watches ${fmt(before)}% (${windowMs} ms windows)`,
        );
      }
      return [
        row({
          id: "W2",
          what,
          floor: "context: the same server before the watches, same window",
          unit: "% core",
          ratioOf: "absolute",
          subject,
          baseline,
          target: { op: "<=", value: TARGET_PERCENT },
          facts: {
            backend: kind,
            watches: count,
            sessions: count,
            windowMs,
            quietBeforeWindowMs: Math.min(QUIET_MS, windowMs),
            clockTicksPerSecond: clockTicks(),
            cpu: "utime + stime of /proc/PID/stat, every thread of the server",
          },
        }),
      ];
    } finally {
      await server.close();
    }
  } finally {
    await store.remove();
  }
}

/** W2 on one backend (one benchmark each, so that one backend's failure leaves the others' rows). */
export function w2IdleWatches(sizes: Sizes, kind: WatchKind): Benchmark {
  return {
    id: "W2",
    title: `idle watches, server CPU (${kind})`,
    run: (ctx) => onBackend(kind, sizes, ctx),
  };
}
