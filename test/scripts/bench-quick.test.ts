// Keeps the benchmark code working: runs `npm run bench -- --quick` once and checks its results file, never its timings.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const IDS = [
  "B1",
  "B2",
  "B3",
  "B4",
  "B5",
  "B6",
  "B7",
  "B8",
  "B9",
  "M1",
  "M2",
  "M3",
  "P1",
  "P2",
  "P3",
  "S1",
  "W1",
  "W2",
  // V1 drives the distribution's Chromium; without it the row is skipped with its reason.
  ...(existsSync(process.env.SEEDLINE_CHROMIUM ?? "/usr/bin/chromium") ? ["V1"] : []),
  // I1 imports the real transcripts beside the repository; without them it is skipped.
  ...(existsSync(
    join(import.meta.dirname, "..", "..", "..", "shared", "fixtures-real", "claude-code"),
  )
    ? ["I1"]
    : []),
].sort();

interface Row {
  id: string;
  what: string;
  floor: string;
  unit: string;
  ratioOf: string;
  subject: number[];
  baseline: number[];
  ratios: number[];
  ratio: { median: number; min: number; max: number };
  target: { op: string; value: number };
  met: boolean;
  facts: Record<string, number | string>;
}

interface Results {
  version: number;
  quick: boolean;
  runtime: string;
  sizes: Record<string, number>;
  rows: Row[];
  failures: { id: string; error: string }[];
}

describe("npm run bench -- --quick", () => {
  const dir = mkdtempSync(join(tmpdir(), "seedline-bench-quick-"));
  const out = join(dir, "bench-results.json");
  let results: Results;
  let stdout = "";

  beforeAll(async () => {
    const run = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", join(ROOT, "scripts", "bench", "main.ts"), "--quick", "--out", out],
      // No idle pause before each measurement (the figures are never checked): half the run.
      {
        cwd: ROOT,
        env: { ...process.env, SEEDLINE_BENCH_SETTLE_MS: "0" },
        maxBuffer: 16 << 20,
        timeout: 360_000,
      },
    );
    stdout = run.stdout;
    results = JSON.parse(readFileSync(out, "utf8")) as Results;
  }, 380_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes a results file of the quick sizes with no failed benchmark", () => {
    expect(results.version).toBe(1);
    expect(results.quick).toBe(true);
    expect(typeof results.runtime).toBe("string");
    expect(results.sizes.rounds).toBeGreaterThan(0);
    expect(results.failures).toEqual([]);
  });

  it("has a row for every benchmark of docs/performance.md", () => {
    expect([...new Set(results.rows.map((r) => r.id))].sort()).toEqual(IDS);
  });

  it("gives every row a finite ratio for each round, with its median, range and target", () => {
    for (const row of results.rows) {
      const rounds = row.subject.length;
      expect(rounds, row.what).toBeGreaterThan(0);
      expect(row.ratios).toHaveLength(rounds);
      if (row.ratioOf === "absolute") {
        // W1, W2: the subject's own figure (a latency, a CPU share: 0 is a figure), floor optional.
        expect(row.ratios).toEqual(row.subject);
        expect([0, rounds]).toContain(row.baseline.length);
        for (const value of [...row.subject, ...row.baseline]) {
          expect(Number.isFinite(value) && value >= 0, `${row.id} ${row.what}: ${value}`).toBe(
            true,
          );
        }
      } else {
        expect(["subject/floor", "floor/subject"]).toContain(row.ratioOf);
        expect(row.baseline).toHaveLength(rounds);
        for (const value of [...row.subject, ...row.baseline, ...row.ratios]) {
          expect(Number.isFinite(value) && value > 0, `${row.id} ${row.what}: ${value}`).toBe(true);
        }
      }
      expect(Number.isFinite(row.ratio.median)).toBe(true);
      expect(row.ratio.min).toBeLessThanOrEqual(row.ratio.median);
      expect(row.ratio.median).toBeLessThanOrEqual(row.ratio.max);
      expect(["<=", ">="]).toContain(row.target.op);
      expect(row.target.value).toBeGreaterThan(0);
      expect(typeof row.met).toBe("boolean");
      expect(row.floor.length).toBeGreaterThan(0);
    }
  });

  it("measures the load and resume rows' checks alone, and prints floor + checks for each", () => {
    const reads = results.rows.filter((r) => r.id === "B3" || r.id === "B9");
    // sqlite and jsonl always; postgres when its server answers.
    expect(reads.length).toBeGreaterThanOrEqual(4);
    for (const row of reads) {
      const { backend, readChecksMs, floorPlusReadChecks } = row.facts;
      expect(readChecksMs, row.what).toBeGreaterThan(0);
      expect(floorPlusReadChecks, row.what).toBeGreaterThan(1);
      expect(stdout).toContain(
        `${row.id} ${backend}: the reader's checks alone on events parsed beforehand`,
      );
    }
  });

  it("prints the table with one line per row", () => {
    for (const row of results.rows) expect(stdout).toContain(row.what);
  });
});
