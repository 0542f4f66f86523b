// The append benchmarks' third contender: the store's own work on the same batches without storage, so a row shows how much of the subject is checks and how much is the store.
import { type SessionEvent, type SessionHeader, SessionLog } from "../../src/index.js";
import { fmt, type Measure, median, rotate, timed } from "./harness.js";

/**
 * Appends the batches to an in-memory `SessionLog`: what a store does to a batch besides storing
 * it — the copy and the lossless-JSON check, the schema, the log's invariants, serializing each
 * event once, the surface and the packing of its older messages. (Serializing is also in the
 * floors, which stringify the same data.)
 */
export function checksOnly(header: SessionHeader, batches: readonly SessionEvent[][]): Measure {
  return () =>
    timed(() => {
      const log = SessionLog.fromSeed(header, []);
      for (const batch of batches) log.append(batch);
    });
}

/** The figures of a subject, its floor and the checks alone, measured in rotation. */
export interface AppendFigures {
  readonly subject: number[];
  readonly baseline: number[];
  readonly checks: number[];
}

/**
 * Measures an append row's subject and floor with {@link checksOnly} as a third contender, in
 * rotation, reporting each round through `progress`.
 */
export async function withChecks(
  rounds: number,
  label: string,
  subject: Measure,
  floor: Measure,
  checks: Measure,
  progress: (message: string) => void,
): Promise<AppendFigures> {
  const [s = [], f = [], c = []] = await rotate(rounds, [subject, floor, checks], (r, figures) =>
    progress(
      `${label} round ${r + 1}: store ${fmt(figures[0] as number)} ms, raw ${fmt(figures[1] as number)} ms, checks alone ${fmt(figures[2] as number)} ms`,
    ),
  );
  return { subject: s, baseline: f, checks: c };
}

/**
 * The facts an append row carries about its checks: their median time, and the median over
 * rounds of (floor + checks) / floor — the ratio of a store whose only cost over the floor were
 * these checks (an upper bound of it: the checks serialize the data, which the floor does too).
 */
export function checkFacts(figures: AppendFigures): Record<string, number> {
  const bound = figures.checks.map((c, i) => {
    const f = figures.baseline[i] as number;
    return (f + c) / f;
  });
  return {
    checksMs: Math.round(median(figures.checks)),
    floorPlusChecks: Math.round(median(bound) * 100) / 100,
  };
}
