// W1: watch latency across processes: from the writer's acknowledgement (one spawned server) to the session/events notification reaching a client of another spawned server, each durable backend, at the two load shapes of docs/performance.md (W1).
import { setMaxListeners } from "node:events";
import type { SeedlineClient } from "../../src/client/seedline-client.js";
import { type SessionEvent, SessionStore } from "../../src/index.js";
import type { WatchBatch } from "../../src/store/watch/session-watch.js";
import { SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, type BenchRow, fmt, median, row, settle } from "./harness.js";
import { spawnSeedline } from "./rpc-clients.js";
import { syntheticLog } from "./synthetic-log.js";
import { type WatchKind, watchStore } from "./watch-stores.js";

/** docs/performance.md's W1 targets, absolute: the median and the 99th percentile of the latencies, in ms. */
const TARGET_MEDIAN_MS = 50;
const TARGET_P99_MS = 250;

/** How long after the last acknowledgement a measurement waits for notifications still on their way. */
const GRACE_MS = 5000;

/** What each backend uses to hear another process's appends (docs/readers.md), for the facts. */
const MECHANISM: Record<WatchKind, string> = {
  sqlite: "PRAGMA data_version polled",
  jsonl: "fs.watch on the sessions folder",
  postgres: "LISTEN/NOTIFY",
};

/** A load shape of W1 (docs/performance.md): `sessions` sessions, each appended to `perSecond` times a second. */
interface Shape {
  readonly key: string;
  readonly sessions: number;
  readonly perSecond: number;
  readonly describe: string;
}

function shapes(sizes: Sizes): Shape[] {
  return [
    { key: "one", sessions: 1, perSecond: 100, describe: "100 appends/s on 1 session" },
    {
      key: "many",
      sessions: sizes.watchSessions,
      perSecond: 1,
      describe: `1 append/s on each of ${sizes.watchSessions} sessions`,
    },
  ];
}

/** Where one session's appends are: its id, and the index of its next event. */
interface Cursor {
  readonly id: string;
  next: number;
}

/** Whoever watches in a measurement: starts watching `ids` at their ends, hands each batch over as it arrives. */
type Watcher = (
  ids: readonly string[],
  onBatch: (batch: WatchBatch, at: number) => void,
) => Promise<{ stop: () => Promise<void> }>;

/** Consumes each watch into `onBatch`; `done` resolves when every one has ended, or rejects with the first error. */
function consume(
  watches: readonly AsyncIterable<WatchBatch>[],
  onBatch: (batch: WatchBatch, at: number) => void,
): () => Promise<void> {
  let failure: unknown;
  const loops = watches.map(async (watch) => {
    try {
      for await (const batch of watch) onBatch(batch, performance.now());
    } catch (error) {
      failure ??= error;
    }
  });
  return async () => {
    await Promise.all(loops);
    if (failure !== undefined) throw failure;
  };
}

/** The subject: watches through a client of the watching server (session/watch, session/events). */
function overRpc(client: SeedlineClient): Watcher {
  return async (ids, onBatch) => {
    // Stopped through the signal: it also ends a `next` that is waiting (`return` does not).
    const controller = new AbortController();
    // One signal for every watch: not a leak.
    setMaxListeners(0, controller.signal);
    const watches = ids.map((id) => client.watch(id, { signal: controller.signal }));
    await Promise.all(watches.map((watch) => watch.ready));
    const done = consume(watches, onBatch);
    return {
      stop: async () => {
        controller.abort();
        await done();
      },
    };
  };
}

/** The floor: `store.watch` in this process, on another backend over the same store. */
function inProcess(store: SessionStore): Watcher {
  return async (ids, onBatch) => {
    const controller = new AbortController();
    // One signal for every watch: not a leak.
    setMaxListeners(0, controller.signal);
    const watches = ids.map((id) => store.watch(id, { signal: controller.signal }));
    await Promise.all(watches.map((watch) => watch.ready));
    const done = consume(watches, onBatch);
    return {
      stop: async () => {
        controller.abort();
        await done();
      },
    };
  };
}

/** One measurement's latencies, and what happened around them. */
interface Sample {
  readonly latencies: number[];
  readonly appends: number;
  readonly seconds: number;
  /** Notifications that reached the watcher before the writer's acknowledgement reached us (counted as 0 ms). */
  readonly beforeAck: number;
  /** Acknowledged events never notified within GRACE_MS (counted as GRACE_MS). */
  readonly undelivered: number;
}

/** The `q` quantile (0–1) of a non-empty list: the least value at or above that share of them. */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  ] as number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Drives one load shape for `windowMs` through `writer` while `watcher` watches every session:
 * each session's appends are 1 event each, due every 1/perSecond s, the sessions' schedules spread
 * evenly over that period; an append waits for its session's previous acknowledgement (so a slow
 * writer lowers the rate, reported as `appends`/`seconds`). Each event's latency is the time from
 * its acknowledgement reaching this process to the notification carrying it reaching this process.
 */
async function measure(
  writer: SeedlineClient,
  watcher: Watcher,
  cursors: readonly Cursor[],
  events: readonly SessionEvent[],
  shape: Shape,
  windowMs: number,
): Promise<Sample> {
  const acked = new Map<string, number>();
  const early = new Map<string, number>();
  const latencies: number[] = [];
  let beforeAck = 0;
  const key = (id: string, seq: number) => `${id}\n${seq}`;
  const watching = await watcher(
    cursors.map((c) => c.id),
    (batch, at) => {
      for (const event of batch.events) {
        const k = key(batch.sessionId, event.seq);
        const ack = acked.get(k);
        if (ack === undefined) {
          early.set(k, at);
        } else {
          acked.delete(k);
          latencies.push(at - ack);
        }
      }
    },
  ).catch((error: unknown) => {
    throw new Error(`W1: the watches could not start: ${String(error)}`);
  });
  const period = 1000 / shape.perSecond;
  const start = performance.now() + 20;
  const end = start + windowMs;
  let appends = 0;
  const drive = async (): Promise<Sample> => {
    await Promise.all(
      cursors.map(async (cursor, i) => {
        for (let due = start + (i / cursors.length) * period; due < end; due += period) {
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const event = events[cursor.next];
          if (event === undefined) throw new Error(`W1: ${cursor.id} ran out of events`);
          const { nextSeq } = await writer.sessionAppend({ sessionId: cursor.id, events: [event] });
          const at = performance.now();
          if (nextSeq !== event.seq + 1) throw new Error(`W1: ${cursor.id} answered ${nextSeq}`);
          cursor.next++;
          appends++;
          const k = key(cursor.id, event.seq);
          const seen = early.get(k);
          if (seen === undefined) {
            acked.set(k, at);
          } else {
            early.delete(k);
            beforeAck++;
            latencies.push(Math.max(0, seen - at));
          }
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const waitUntil = performance.now() + GRACE_MS;
    while (acked.size > 0 && performance.now() < waitUntil) await sleep(5);
    const undelivered = acked.size;
    for (let i = 0; i < undelivered; i++) latencies.push(GRACE_MS);
    return { latencies, appends, seconds, beforeAck, undelivered };
  };
  let sample: Sample;
  try {
    sample = await drive();
  } catch (error) {
    await watching.stop().catch(() => {});
    throw error;
  }
  // Rejects when a watch ended with an error (WATCH_OVERFLOW, a storage error) on the way.
  await watching.stop();
  return sample;
}

/** The figures of one contender over the rounds. */
interface Figures {
  medians: number[];
  p99s: number[];
  samples: number;
  appends: number;
  seconds: number;
  beforeAck: number;
  undelivered: number;
}

function figures(): Figures {
  return {
    medians: [],
    p99s: [],
    samples: 0,
    appends: 0,
    seconds: 0,
    beforeAck: 0,
    undelivered: 0,
  };
}

function add(to: Figures, sample: Sample): void {
  if (sample.latencies.length === 0) throw new Error("W1: no event was appended in the window");
  to.medians.push(median(sample.latencies));
  to.p99s.push(quantile(sample.latencies, 0.99));
  to.samples += sample.latencies.length;
  to.appends += sample.appends;
  to.seconds += sample.seconds;
  to.beforeAck += sample.beforeAck;
  to.undelivered += sample.undelivered;
}

/** W1 on one backend: both load shapes, the subject and its floor alternating round by round. */
async function onBackend(
  kind: WatchKind,
  sizes: Sizes,
  ctx: Parameters<Benchmark["run"]>[0],
): Promise<BenchRow[]> {
  const what = (shape: Shape, statistic: string) =>
    `watch latency ${statistic}, ${shape.describe} (${kind})`;
  const store = await watchStore(kind, "w1", ctx, "W1", `watch latency (${kind})`);
  if (store === undefined) return [];
  const writer = spawnSeedline(store.url);
  const watcherServer = spawnSeedline(store.url);
  try {
    const local = new SessionStore({ backend: await store.open() });
    const contenders: [Watcher, Watcher] = [overRpc(watcherServer), inProcess(local)];
    const rows: BenchRow[] = [];
    for (const shape of shapes(sizes)) {
      const windowMs = sizes.watchWindowMs;
      const warmMs = Math.min(1000, windowMs / 2);
      // Every measurement appends to the same sessions, each from where the last one stopped.
      const perSession =
        Math.ceil((shape.perSecond * (2 * sizes.watchRounds * windowMs + 2 * warmMs)) / 1000) +
        2 * (sizes.watchRounds + 1);
      const events = syntheticLog(SEED + 11, perSession).events.slice(0, perSession);
      const cursors: Cursor[] = Array.from({ length: shape.sessions }, (_, i) => ({
        id: `w1-${shape.key}-${i}`,
        next: 0,
      }));
      ctx.progress(`W1 ${kind}: ${shape.describe}, creating the sessions`);
      for (let at = 0; at < cursors.length; at += 50) {
        await Promise.all(
          cursors
            .slice(at, at + 50)
            .map((c) => writer.sessionCreate({ sessionId: c.id, cwd: "/work/bench" })),
        );
      }
      for (const watcher of contenders)
        await measure(writer, watcher, cursors, events, shape, warmMs);
      const results: [Figures, Figures] = [figures(), figures()];
      for (let round = 0; round < sizes.watchRounds; round++) {
        const current: Sample[] = [];
        for (let k = 0; k < contenders.length; k++) {
          const which = (round + k) % contenders.length;
          await settle();
          current[which] = await measure(
            writer,
            contenders[which] as Watcher,
            cursors,
            events,
            shape,
            windowMs,
          );
        }
        const [rpc, floor] = current as [Sample, Sample];
        add(results[0], rpc);
        add(results[1], floor);
        ctx.progress(
          `W1 ${kind} ${shape.key} round ${round + 1}: other server median ${fmt(median(rpc.latencies))} ms p99 ${fmt(quantile(rpc.latencies, 0.99))} ms; in process median ${fmt(median(floor.latencies))} ms p99 ${fmt(quantile(floor.latencies, 0.99))} ms (${rpc.latencies.length} events, ${fmt(rpc.appends / rpc.seconds)} appends/s)`,
        );
      }
      const [rpc, floor] = results;
      if (rpc.undelivered + floor.undelivered > 0)
        ctx.progress(
          `W1 ${kind} ${shape.key}: ${rpc.undelivered} (other server) and ${floor.undelivered} (in process) acknowledged events never notified within ${GRACE_MS} ms`,
        );
      const facts = {
        backend: kind,
        change: MECHANISM[kind],
        sessions: shape.sessions,
        appendsPerSecondPerSession: shape.perSecond,
        achievedAppendsPerSecond: Math.round(rpc.appends / rpc.seconds),
        windowMs,
        events: rpc.samples,
        notifiedBeforeAck: rpc.beforeAck,
        undelivered: rpc.undelivered,
        floorEvents: floor.samples,
        floorUndelivered: floor.undelivered,
        writer: "a spawned server (session/append, 1 event, default durability)",
      };
      const floorText =
        "context: the same appends watched in the bench process (store.watch on another backend over the store)";
      rows.push(
        row({
          id: "W1",
          what: what(shape, "median"),
          floor: floorText,
          unit: "ms",
          ratioOf: "absolute",
          subject: rpc.medians,
          baseline: floor.medians,
          target: { op: "<=", value: TARGET_MEDIAN_MS },
          facts,
        }),
        row({
          id: "W1",
          what: what(shape, "p99"),
          floor: floorText,
          unit: "ms",
          ratioOf: "absolute",
          subject: rpc.p99s,
          baseline: floor.p99s,
          target: { op: "<=", value: TARGET_P99_MS },
          facts,
        }),
      );
    }
    return rows;
  } finally {
    await Promise.allSettled([writer.close(), watcherServer.close()]);
    await store.remove();
  }
}

/** W1 on one backend (one benchmark each, so that one backend's failure leaves the others' rows). */
export function w1WatchLatency(sizes: Sizes, kind: WatchKind): Benchmark {
  return {
    id: "W1",
    title: `watch latency, writer's ack in one server process to the notification from another (${kind})`,
    run: (ctx) => onBackend(kind, sizes, ctx),
  };
}
