// B8: deriveReplayScript and deriveMessages over a large stored log, against one pass that touches each event once.
import { deriveMessages, deriveReplayScript, type SessionEvent } from "../../src/index.js";
import { SessionLog } from "../../src/log/session-log.js";
import { SEED, type Sizes } from "./fixtures.js";
import { alternate, type Benchmark, type BenchRow, fmt, row, timed } from "./harness.js";
import { syntheticLog } from "./synthetic-log.js";

/** Repetitions per measurement, so that one measurement is well above the timer's resolution. */
const REPEAT = 10;

/**
 * The floor: one pass over the log that reads each event's type and payload once, allocating
 * nothing — the least any derivation must do to look at every event.
 */
function onePass(events: readonly SessionEvent[]): number {
  let sum = 0;
  for (const event of events) {
    sum = (sum + event.seq + event.type.length + (event.data === undefined ? 0 : 1)) | 0;
  }
  return sum;
}

export function b8Derive(sizes: Sizes): Benchmark {
  return {
    id: "B8",
    title: "deriveReplayScript and deriveMessages over a large log",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.deriveEvents, "b8");
      // Events as a loaded session holds them: validated and frozen.
      const events = new SessionLog(log.header).admit(log.events, "copy");
      const cases: { name: string; derive: (events: readonly SessionEvent[]) => number }[] = [
        { name: "deriveReplayScript", derive: (e) => deriveReplayScript(e, "b8").length },
        { name: "deriveMessages", derive: (e) => deriveMessages(e).length },
      ];
      const rows: BenchRow[] = [];
      for (const { name, derive } of cases) {
        ctx.progress(`B8 ${name}: ${events.length} events`);
        let sink = 0;
        const subject = async (): Promise<number> =>
          (await timed(() => {
            for (let i = 0; i < REPEAT; i++) sink += derive(events);
          })) / REPEAT;
        const floor = async (): Promise<number> =>
          (await timed(() => {
            for (let i = 0; i < REPEAT; i++) sink += onePass(events);
          })) / REPEAT;
        const figures = await alternate(ctx.rounds + 2, subject, floor, (r, s, f) =>
          ctx.progress(`B8 ${name} round ${r + 1}: ${fmt(s)} ms, one pass ${fmt(f)} ms`),
        );
        rows.push(
          row({
            id: "B8",
            what: `${name} over ${events.length} events`,
            floor: "one pass reading each event's seq, type and data, allocating nothing",
            unit: "ms",
            ...figures,
            target: { op: "<=", value: 1.5 },
            facts: { events: events.length, repeat: REPEAT, sink },
          }),
        );
      }
      return rows;
    },
  };
}
