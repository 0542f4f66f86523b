// The benchmark harness: pairs measured alternately, ratios with median and range, temp folders, progress on stderr.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A target a row's figure is held to: at most (`<=`) or at least (`>=`) `value`. The figure is a
 * ratio, or, for an absolute row, the subject's own figure in the row's unit.
 */
export interface Target {
  readonly op: "<=" | ">=";
  readonly value: number;
}

/** Median, least and greatest of a list of numbers. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** One line of the results table: a subject measured against its floor, round by round. */
export interface BenchRow {
  /** The docs/performance.md id (B1…B9, M1…M3, W1, W2, S1, V1, P1…P3). */
  readonly id: string;
  /** What the subject is. */
  readonly what: string;
  /** What the floor is. */
  readonly floor: string;
  /** The unit of `subject` and `baseline` figures ("ms", "req/s", "MiB"). */
  readonly unit: string;
  /**
   * How the ratio is formed: subject / baseline ("time"), or the other way round ("speed"). An
   * "absolute" row (W1, W2: targets in ms or % of a core) holds the subject's own figure to the
   * target: its `ratios` and `ratio` are the subject's figures, and its floor, when it has one, is
   * context only.
   */
  readonly ratioOf: "subject/floor" | "floor/subject" | "absolute";
  /** Each round's figure for the subject. */
  readonly subject: readonly number[];
  /** Each round's figure for the floor (empty for an absolute row without one). */
  readonly baseline: readonly number[];
  /** Each round's ratio (an absolute row: the subject's figure). */
  readonly ratios: readonly number[];
  readonly ratio: Spread;
  readonly target: Target;
  /** Whether the median ratio (an absolute row: the median figure) meets the target. */
  readonly met: boolean;
  /** Sizes and other facts that make the figures quotable. */
  readonly facts: Readonly<Record<string, number | string>>;
}

/** What every benchmark gets: the size preset and a reporter. */
export interface BenchContext {
  readonly quick: boolean;
  /** How many alternating rounds a pair runs. */
  readonly rounds: number;
  /** Writes one progress line to stderr. */
  progress(message: string): void;
  /** Records a row that could not be measured here (say, no PostgreSQL server), with why. */
  skip(id: string, what: string, reason: string): void;
}

/** A row that was not measured, and why. */
export interface SkippedRow {
  readonly id: string;
  readonly what: string;
  readonly reason: string;
}

/** A benchmark: one docs/performance.md id, producing one or more rows. */
export interface Benchmark {
  readonly id: string;
  readonly title: string;
  run(ctx: BenchContext): Promise<BenchRow[]>;
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export function meets(value: number, target: Target): boolean {
  return target.op === "<=" ? value <= target.value : value >= target.value;
}

let collect: (() => void) | undefined;

/** Runs a full garbage collection when the runtime allows it, so one run's garbage is not billed to the next. */
export function collectGarbage(): void {
  if (collect === undefined) {
    setFlagsFromString("--expose-gc");
    collect = runInNewContext("gc") as () => void;
  }
  collect();
}

/** Times `work` in milliseconds. */
export async function timed(work: () => unknown): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** One measurement: does its own setup and cleanup and returns the figure of the measured part only. */
export type Measure = (round: number) => Promise<number>;

/**
 * How long the machine is left idle before each measurement: 200 ms, or SEEDLINE_BENCH_SETTLE_MS.
 * test/scripts/bench-quick.test.ts sets 0: it checks that every benchmark runs and what the
 * results file holds, never a figure, and the waits were half of its run (238 of them in --quick).
 */
const SETTLE_MS = settleMs(process.env.SEEDLINE_BENCH_SETTLE_MS);

function settleMs(value: string | undefined): number {
  if (value === undefined || value === "") return 200;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0) {
    throw new Error(`expected SEEDLINE_BENCH_SETTLE_MS to be a whole number of ms, got ${value}`);
  }
  return ms;
}

/**
 * Lets one measurement's aftermath die down before the next starts: flushes every file system
 * (`sync`: a deleted file's blocks, a journal commit), collects garbage, then waits
 * {@link SETTLE_MS}. The wait matters on a machine with few cores: V8 sweeps a freed heap on
 * background threads, which compete with the I/O thread pool. (Without it, a fork measured right
 * after the load-and-create contender freed its 100k events took 30–45 ms instead of 20: its
 * `stat` and `open` calls waited 5–11 ms for a pool thread.)
 */
export async function settle(): Promise<void> {
  spawnSync("sync", { stdio: "ignore" });
  collectGarbage();
  await new Promise((done) => setTimeout(done, SETTLE_MS));
}

/**
 * Measures several contenders in rotation, `rounds` times: each round starts with the next one,
 * so that none always runs first on a warmer (or noisier) machine. Before each measurement the
 * machine is settled ({@link settle}). Returns each contender's figures, round by round.
 */
export async function rotate(
  rounds: number,
  measures: readonly Measure[],
  onRound?: (round: number, figures: readonly number[]) => void,
): Promise<number[][]> {
  const figures = measures.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const current: number[] = new Array(measures.length);
    for (let k = 0; k < measures.length; k++) {
      const which = (round + k) % measures.length;
      await settle();
      current[which] = await (measures[which] as Measure)(round);
    }
    for (const [which, value] of current.entries()) figures[which]?.push(value);
    onRound?.(round, current);
  }
  return figures;
}

/** {@link rotate} for a subject and its floor: they alternate which goes first. */
export async function alternate(
  rounds: number,
  subject: Measure,
  floor: Measure,
  onRound?: (round: number, subject: number, floor: number) => void,
): Promise<{ subject: number[]; baseline: number[] }> {
  const [s = [], f = []] = await rotate(rounds, [subject, floor], (round, figures) =>
    onRound?.(round, figures[0] as number, figures[1] as number),
  );
  return { subject: s, baseline: f };
}

/** A subject's figures, its floor's and those of its checks alone, round by round. */
export interface FiguresWithChecks {
  readonly subject: number[];
  readonly baseline: number[];
  readonly checks: number[];
}

/**
 * {@link rotate} for a subject, its floor and a third contender, the subject's checks alone,
 * reporting each round through `progress` under `label`.
 */
export async function alternateWithChecks(
  rounds: number,
  label: string,
  subject: Measure,
  floor: Measure,
  checks: Measure,
  progress: (message: string) => void,
): Promise<FiguresWithChecks> {
  const [s = [], f = [], c = []] = await rotate(rounds, [subject, floor, checks], (r, figures) =>
    progress(
      `${label} round ${r + 1}: store ${fmt(figures[0] as number)} ms, raw ${fmt(figures[1] as number)} ms, checks alone ${fmt(figures[2] as number)} ms`,
    ),
  );
  return { subject: s, baseline: f, checks: c };
}

/**
 * The median over rounds of (floor + checks − `less`) / floor, to two decimals: the ratio of a
 * subject whose only cost over the floor were its checks (less `less` ms of them).
 */
export function floorPlusChecks(figures: FiguresWithChecks, less = 0): number {
  const ratios = figures.checks.map((c, i) => {
    const f = figures.baseline[i] as number;
    return (f + c - less) / f;
  });
  return Math.round(median(ratios) * 100) / 100;
}

/**
 * Builds a row from the rounds' figures. With `ratioOf: "absolute"` the subject's figures are held
 * to the target as they are, and `baseline` (a floor for context, or empty) is not divided by.
 */
export function row(fields: {
  id: string;
  what: string;
  floor: string;
  unit: string;
  ratioOf?: BenchRow["ratioOf"];
  subject: readonly number[];
  baseline: readonly number[];
  target: Target;
  facts?: Record<string, number | string>;
}): BenchRow {
  const ratioOf = fields.ratioOf ?? "subject/floor";
  const ratios = fields.subject.map((s, i) => {
    if (ratioOf === "absolute") return s;
    const b = fields.baseline[i] as number;
    return ratioOf === "subject/floor" ? s / b : b / s;
  });
  const ratio = spread(ratios);
  return {
    id: fields.id,
    what: fields.what,
    floor: fields.floor,
    unit: fields.unit,
    ratioOf,
    subject: fields.subject,
    baseline: fields.baseline,
    ratios,
    ratio,
    target: fields.target,
    met: meets(ratio.median, fields.target),
    facts: fields.facts ?? {},
  };
}

/** A fresh temporary folder, removed by the returned function. */
export function tempDir(label: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `seedline-bench-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A number for the table: three significant figures, no exponent. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}
