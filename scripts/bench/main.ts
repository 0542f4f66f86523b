// `npm run bench [-- --quick] [-- --only B1,B3] [-- --out FILE]`: runs the benchmarks of docs/performance.md, prints a table, writes bench-results.json.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, platform, release, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { b1PostgresAppend } from "./b1-postgres-append.js";
import { b1SqliteAppend } from "./b1-sqlite-append.js";
import { b2JsonlAppend } from "./b2-jsonl-append.js";
import { b3Load } from "./b3-load.js";
import { b3PostgresLoad } from "./b3-postgres-load.js";
import { b4Fork } from "./b4-fork.js";
import { b4PostgresFork } from "./b4-postgres-fork.js";
import { b5RpcAppend } from "./b5-rpc-append.js";
import { b6RpcRead } from "./b6-rpc-read.js";
import { b7List } from "./b7-list.js";
import { b7ListScale } from "./b7-list-scale.js";
import { b7PostgresList } from "./b7-postgres-list.js";
import { b8Derive } from "./b8-derive.js";
import { b9PostgresResume } from "./b9-postgres-resume.js";
import { b9Resume } from "./b9-resume.js";
import { FULL_SIZES, QUICK_SIZES, type Sizes } from "./fixtures.js";
import {
  type BenchContext,
  type Benchmark,
  type BenchRow,
  fmt,
  type SkippedRow,
} from "./harness.js";
import { i1Import } from "./i1-import.js";
import { m1Memory } from "./m1-memory.js";
import { m2ServerRss } from "./m2-server-rss.js";
import { m3PagedRead } from "./m3-paged-read.js";
import { p1ProxyStream } from "./p1-proxy-stream.js";
import { p2ProxyReplay } from "./p2-proxy-replay.js";
import { p3ProxyMemory } from "./p3-proxy-memory.js";
import {
  builtPath,
  REPO_ROOT,
  RUNNING_FROM_DIST,
  runtimeDescription,
  staleBuild,
} from "./runtime.js";
import { s1Search } from "./s1-search.js";
import { v1ViewerFirstContent } from "./v1-viewer-first-content.js";
import { w1WatchLatency } from "./w1-watch-latency.js";
import { w2IdleWatches } from "./w2-idle-watches.js";
import { WATCH_KINDS } from "./watch-stores.js";

/**
 * Every benchmark, in docs/performance.md's order; the PostgreSQL rows of an id follow the others (they are
 * skipped, with the reason, when no server answers).
 */
export function benchmarks(sizes: Sizes): Benchmark[] {
  return [
    b1SqliteAppend(sizes),
    b1PostgresAppend(sizes),
    b2JsonlAppend(sizes),
    b3Load(sizes),
    b3PostgresLoad(sizes),
    b4Fork(sizes),
    b4PostgresFork(sizes),
    b5RpcAppend(sizes),
    b6RpcRead(sizes),
    b7List(sizes),
    b7ListScale(sizes),
    b7PostgresList(sizes),
    s1Search(sizes),
    b8Derive(sizes),
    b9Resume(sizes),
    b9PostgresResume(sizes),
    m1Memory(sizes),
    m2ServerRss(sizes),
    m3PagedRead(sizes),
    ...WATCH_KINDS.map((kind) => w1WatchLatency(sizes, kind)),
    ...WATCH_KINDS.map((kind) => w2IdleWatches(sizes, kind)),
    v1ViewerFirstContent(sizes),
    p1ProxyStream(sizes),
    p2ProxyReplay(sizes),
    p3ProxyMemory(sizes),
    i1Import(sizes),
  ];
}

/** The parsed command line. */
interface Options {
  readonly quick: boolean;
  /** Measure the sources through tsx even when dist/ is up to date. */
  readonly tsx: boolean;
  readonly only: ReadonlySet<string> | undefined;
  readonly out: string;
}

function parseArgs(argv: readonly string[]): Options {
  let quick = false;
  let tsx = false;
  let only: Set<string> | undefined;
  let out = join(REPO_ROOT, "bench-results.json");
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`expected a value after ${arg}`);
      return next;
    };
    if (arg === "--quick") quick = true;
    else if (arg === "--tsx") tsx = true;
    else if (arg === "--only") only = new Set(value().toUpperCase().split(",").filter(Boolean));
    else if (arg.startsWith("--only=")) only = new Set(arg.slice(7).toUpperCase().split(","));
    else if (arg === "--out") out = resolve(value());
    else if (arg.startsWith("--out=")) out = resolve(arg.slice(6));
    else {
      throw new Error(
        `expected --quick, --only IDS, --out FILE or --tsx, got ${JSON.stringify(arg)}`,
      );
    }
  }
  return { quick, tsx, only, out };
}

/** The results file: every figure of every row, with what the run was. */
export interface BenchResults {
  readonly version: 1;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly quick: boolean;
  /** Which build was measured (see runtime.ts). */
  readonly runtime: string;
  readonly machine: {
    readonly node: string;
    readonly platform: string;
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryBytes: number;
  };
  readonly sizes: Sizes;
  readonly rows: readonly BenchRow[];
  /** Rows that were not measured in this run (say, no PostgreSQL server), with why. */
  readonly skipped: readonly SkippedRow[];
  /** Benchmarks that could not run, with why. */
  readonly failures: readonly { readonly id: string; readonly error: string }[];
}

function table(rows: readonly BenchRow[]): string {
  const header = ["id", "what", "subject", "floor", "ratio median (min–max)", "target", "met"];
  const lines = rows.map((r) => {
    const s = [...r.subject].sort((a, b) => a - b)[r.subject.length >> 1] as number;
    const f = [...r.baseline].sort((a, b) => a - b)[r.baseline.length >> 1];
    // An absolute row's figure is in its unit, not a multiple of the floor (see BenchRow.ratioOf).
    const unit = r.ratioOf === "absolute" ? ` ${r.unit}` : "×";
    return [
      r.id,
      r.what,
      `${fmt(s)} ${r.unit}`,
      f === undefined ? "–" : `${fmt(f)} ${r.unit}`,
      `${fmt(r.ratio.median)}${unit} (${fmt(r.ratio.min)}–${fmt(r.ratio.max)})`,
      `${r.target.op} ${r.target.value}${unit}`,
      r.met ? "yes" : "NO",
    ];
  });
  const widths = header.map((h, i) =>
    Math.max(h.length, ...lines.map((l) => (l[i] as string).length)),
  );
  const format = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [
    format(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...lines.map(format),
  ].join("\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const options = parseArgs(args);
  if (!RUNNING_FROM_DIST && !options.tsx) {
    const stale = staleBuild();
    if (stale.length === 0) {
      // Measure what ships: the tsc build, on plain node.
      const child = spawnSync(process.execPath, [builtPath(import.meta.filename), ...args], {
        stdio: "inherit",
      });
      process.exitCode = child.status ?? 1;
      return;
    }
    process.stderr.write(
      `[bench] dist/ is missing or older than ${stale.length} source file(s) (${stale[0]}…): measuring the sources through tsx, whose keepNames helpers make per-call closures dearer. Run \`npm run build\` first for the shipped build's figures.\n`,
    );
  }
  const sizes = options.quick ? QUICK_SIZES : FULL_SIZES;
  const started = Date.now();
  const skipped: SkippedRow[] = [];
  const ctx: BenchContext = {
    quick: options.quick,
    rounds: sizes.rounds,
    progress: (message) =>
      process.stderr.write(`[bench ${fmt((Date.now() - started) / 1000)}s] ${message}\n`),
    skip: (id, what, reason) => {
      skipped.push({ id, what, reason });
      ctx.progress(`${id} ${what}: skipped, ${reason}`);
    },
  };
  const selected = benchmarks(sizes).filter(
    (b) => options.only === undefined || options.only.has(b.id),
  );
  if (options.only !== undefined) {
    const known = new Set(benchmarks(sizes).map((b) => b.id));
    const unknown = [...options.only].filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw new Error(
        `expected benchmark ids among ${[...known].join(",")}, got ${unknown.join(",")}`,
      );
  }
  const rows: BenchRow[] = [];
  const failures: { id: string; error: string }[] = [];
  for (const bench of selected) {
    ctx.progress(`${bench.id}: ${bench.title}`);
    try {
      rows.push(...(await bench.run(ctx)));
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ id: bench.id, error: message });
      ctx.progress(`${bench.id} FAILED: ${message}`);
    }
  }
  const results: BenchResults = {
    version: 1,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    quick: options.quick,
    runtime: runtimeDescription(),
    machine: {
      node: process.version,
      platform: `${platform()} ${release()}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      memoryBytes: totalmem(),
    },
    sizes,
    rows,
    skipped,
    failures,
  };
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${table(rows)}\n`);
  for (const r of rows) {
    const {
      checksMs,
      floorPlusChecks,
      serializeMs,
      floorPlusChecksBeyondSerializing,
      schemaMs,
      losslessMs,
      floorPlusRequired,
    } = r.facts;
    if (checksMs === undefined) continue;
    process.stdout.write(
      `${r.id} ${r.facts.backend ?? r.what.split(" ")[0]}: the store's checks alone (no storage) ${checksMs} ms, floor + checks ${floorPlusChecks}×; JSON.stringify alone (the floor's too) ${serializeMs} ms, floor + the checks beyond it ${floorPlusChecksBeyondSerializing}×; the schema validation ${schemaMs} ms and the lossless check ${losslessMs} ms, floor + those two ${floorPlusRequired}×\n`,
    );
  }
  for (const r of rows) {
    const { readChecksMs, floorPlusReadChecks } = r.facts;
    if (readChecksMs === undefined) continue;
    const checked =
      r.id === "B9"
        ? "the schema of the message-producing events, the surface, the messages and the content they share frozen"
        : "the depth walk of each event, the schema, the log's rules";
    process.stdout.write(
      `${r.id} ${r.facts.backend}: the reader's checks alone on events parsed beforehand (${checked}) ${readChecksMs} ms, floor + checks ${floorPlusReadChecks}×\n`,
    );
  }
  for (const r of rows) {
    const { mappingMBps, floorPlusMapping, bareWriteMBps, floorPlusBareWrite } = r.facts;
    if (mappingMBps === undefined) continue;
    process.stdout.write(
      `${r.id} ${r.facts.backend}: reading and mapping the transcripts alone (nothing stored) ${mappingMBps} MB/s, ${floorPlusMapping}× the floor's time; the rest of the import's time is the store's create (the schema and lossless checks, serializing, the log's rules, writing)\n`,
    );
    process.stdout.write(
      `${r.id} ${r.facts.backend}: the mapped events serialized and written durably with nothing checked ${bareWriteMBps} MB/s: the floor plus that write alone is ${floorPlusBareWrite}× the floor's time, the least any import that stores its events takes\n`,
    );
  }
  for (const skip of skipped)
    process.stdout.write(`${skip.id} ${skip.what} skipped: ${skip.reason}\n`);
  for (const failure of failures)
    process.stdout.write(`${failure.id} FAILED: ${failure.error.split("\n")[0]}\n`);
  process.stdout.write(
    `\n${rows.filter((r) => r.met).length}/${rows.length} targets met in ${fmt(results.durationMs / 1000)} s (${results.runtime}); figures in ${options.out}\n`,
  );
  if (failures.length > 0) process.exitCode = 1;
}

await main();
