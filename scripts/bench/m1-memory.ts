// M1: peak RSS of a fresh process that loads a large JSONL log, against the file's size.
import { execFile } from "node:child_process";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { jsonlPath, SEED, type Sizes } from "./fixtures.js";
import { type Benchmark, fmt, row, tempDir } from "./harness.js";
import type { MemoryReport } from "./m1-child.js";
import { REPO_ROOT, RUNNING_FROM_DIST } from "./runtime.js";
import { SYNTHETIC_EPOCH, syntheticTurns } from "./synthetic-log.js";

const run = promisify(execFile);
const MIB = 1024 * 1024;

/** Writes generated turns as a JSONL log until it holds at least `bytes`; returns its event count. */
function writeLargeLog(path: string, id: string, bytes: number): { events: number; size: number } {
  const fd = openSync(path, "wx");
  let size = 0;
  let events = 0;
  try {
    const header = formatHeaderLine({
      version: 0,
      id,
      createdAt: SYNTHETIC_EPOCH,
      cwd: "/work/bench",
    });
    size += writeSync(fd, header);
    for (const turn of syntheticTurns(SEED + 1)) {
      if (size >= bytes) break;
      let text = "";
      for (const event of turn) text += formatEventLine(event);
      size += writeSync(fd, text);
      events += turn.length;
    }
  } finally {
    closeSync(fd);
  }
  return { events, size };
}

export function m1Memory(sizes: Sizes): Benchmark {
  return {
    id: "M1",
    title: "peak RSS loading a large JSONL log",
    async run(ctx) {
      const temp = tempDir("m1");
      try {
        const root = join(temp.dir, "jsonl");
        const id = "m1";
        mkdirSync(join(root, "sessions"), { recursive: true });
        const written = writeLargeLog(jsonlPath(root, id), id, sizes.memoryLogBytes);
        ctx.progress(`M1: ${fmt(written.size / MIB)} MiB, ${written.events} events written`);
        // The child runs the same build as this process (see runtime.ts).
        const command = RUNNING_FROM_DIST
          ? [join(import.meta.dirname, "m1-child.js")]
          : ["--import", "tsx", join(import.meta.dirname, "m1-child.ts")];
        const reports: MemoryReport[] = [];
        for (let i = 0; i < sizes.memoryRuns; i++) {
          const { stdout } = await run(process.execPath, [...command, root, id], {
            cwd: REPO_ROOT,
            maxBuffer: 1 << 20,
          });
          const report = JSON.parse(stdout.trim()) as MemoryReport;
          if (report.events !== written.events) {
            throw new Error(`M1: the child loaded ${report.events} of ${written.events} events`);
          }
          reports.push(report);
          ctx.progress(
            `M1 run ${i + 1}: peak RSS ${fmt(report.peakRss / MIB)} MiB (baseline ${fmt(report.baselineRss / MIB)} MiB), load ${fmt(report.loadMs)} ms`,
          );
        }
        const peak = reports.map((r) => r.peakRss / MIB);
        const first = reports[0] as MemoryReport;
        return [
          row({
            id: "M1",
            what: `peak RSS opening a ${fmt(written.size / MIB)} MiB JSONL log for writing (${written.events} events)`,
            floor: "the file size",
            unit: "MiB",
            subject: peak,
            baseline: peak.map(() => written.size / MIB),
            target: { op: "<=", value: 1.5 },
            facts: {
              fileBytes: written.size,
              events: written.events,
              runner: RUNNING_FROM_DIST
                ? "node on dist/"
                : "node --import tsx (its loader thread adds ~40 MiB)",
              baselineRssMiB: Number(fmt(first.baselineRss / MIB)),
              loadMs: Math.round(first.loadMs),
              heapUsedMiB: Number(fmt(first.heapUsed / MIB)),
              peakAboveBaselineRatio: Number(
                fmt((first.peakRss - first.baselineRss) / written.size),
              ),
            },
          }),
        ];
      } finally {
        temp.remove();
      }
    },
  };
}
