// The append benchmarks' third contender: the store's own work on the same batches without storage, so a row shows how much of the subject is checks and how much is the store.
import { type SessionEvent, type SessionHeader, validateSessionEvent } from "../../src/index.js";
import { jsonValueProblem } from "../../src/log/json-value.js";
import { SessionLog } from "../../src/log/session-log.js";
import {
  alternateWithChecks,
  type FiguresWithChecks,
  floorPlusChecks,
  fmt,
  type Measure,
  median,
  settle,
  timed,
} from "./harness.js";

/**
 * Appends the batches to an in-memory `SessionLog`: what a store does to a batch besides storing
 * it — the lossless-JSON check, the schema, the log's invariants, serializing each event once and
 * the surface, whose messages a store keeps as that text (within its budget, which one log of
 * this size stays under: nothing is packed). (Serializing is also in the floors, which stringify
 * the same data.)
 */
export function checksOnly(header: SessionHeader, batches: readonly SessionEvent[][]): Measure {
  return () =>
    timed(() => {
      const log = SessionLog.fromSeed(header, []);
      for (const batch of batches) log.commit(log.prepare(batch), { pack: false });
    });
}

/** The figures of a subject, its floor and the checks alone, measured in rotation. */
export interface AppendFigures extends FiguresWithChecks {
  /** The least of a few runs of the schema validation alone over every event, in ms. */
  readonly schemaMs: number;
  /** The least of a few runs of the lossless-JSON check alone over every event, in ms. */
  readonly losslessMs: number;
  /** The least of a few runs of `JSON.stringify` of every event alone (the floors do it too), in ms. */
  readonly serializeMs: number;
}

/** How many runs the schema and lossless checks alone get (their least is kept). */
const PART_RUNS = 5;

/**
 * The work no store that meets the other demands can leave out, each part alone over the
 * whole log: the generated schema validator and the walk that refuses what JSON would not keep
 * (undefined members, NaN, accessors, cycles…, which `JSON.stringify` cannot tell), which every
 * validating store runs over every event. The least of {@link PART_RUNS} runs each.
 */
async function requiredParts(
  batches: readonly SessionEvent[][],
): Promise<{ schemaMs: number; losslessMs: number; serializeMs: number }> {
  let schemaMs = Number.POSITIVE_INFINITY;
  let losslessMs = Number.POSITIVE_INFINITY;
  let serializeMs = Number.POSITIVE_INFINITY;
  for (let run = 0; run < PART_RUNS; run++) {
    await settle();
    serializeMs = Math.min(
      serializeMs,
      await timed(() => {
        let length = 0;
        for (const batch of batches) {
          for (const event of batch) length += JSON.stringify(event).length;
        }
        if (length === 0) throw new Error("expected events to serialize");
      }),
    );
    await settle();
    schemaMs = Math.min(
      schemaMs,
      await timed(() => {
        for (const batch of batches) {
          for (const event of batch) {
            if (!validateSessionEvent(event)) throw new Error("expected valid events");
          }
        }
      }),
    );
    await settle();
    losslessMs = Math.min(
      losslessMs,
      await timed(() => {
        for (const batch of batches) {
          for (const event of batch) {
            if (jsonValueProblem(event) !== undefined) throw new Error(`lossy event ${event.seq}`);
          }
        }
      }),
    );
  }
  return { schemaMs, losslessMs, serializeMs };
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
  batches: readonly SessionEvent[][],
  progress: (message: string) => void,
): Promise<AppendFigures> {
  const figures = await alternateWithChecks(rounds, label, subject, floor, checks, progress);
  const parts = await requiredParts(batches);
  progress(
    `${label}: schema validation alone ${fmt(parts.schemaMs)} ms, lossless check alone ${fmt(parts.losslessMs)} ms, JSON.stringify alone ${fmt(parts.serializeMs)} ms`,
  );
  return { ...figures, ...parts };
}

/**
 * The facts an append row carries about its checks: their median time, the median over rounds of
 * (floor + checks) / floor — the ratio of a store whose only cost over the floor were these checks
 * (an upper bound of it: the checks serialize the data, which the floor does too) — and that ratio
 * without the serializing (the checks' time less `JSON.stringify` alone): the least a store doing
 * this store's checks can reach over this floor, whatever its storage.
 */
export function checkFacts(figures: AppendFigures): Record<string, number> {
  const floor = median(figures.baseline);
  /** (floor + `ms`) / floor, to two decimals. */
  const over = (ms: number) => Math.round(((floor + ms) / floor) * 100) / 100;
  return {
    checksMs: Math.round(median(figures.checks)),
    floorPlusChecks: floorPlusChecks(figures),
    serializeMs: Math.round(figures.serializeMs),
    floorPlusChecksBeyondSerializing: floorPlusChecks(figures, figures.serializeMs),
    schemaMs: Math.round(figures.schemaMs),
    losslessMs: Math.round(figures.losslessMs),
    // The least any store that validates and checks losslessness can reach over this floor.
    floorPlusRequired: over(figures.schemaMs + figures.losslessMs),
  };
}
