// Property: over generated valid logs, fork accepts exactly the boundaries log.md accepts, and accepted children stay valid.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MemoryBackend,
  type SessionEvent,
  SessionForkError,
  SessionLog,
  type SessionStore,
} from "../src/index.js";
import { simpleTurn } from "./builders.js";
import { buildLog, logShapeArb } from "./log-arbitrary.js";
import { lastMarkerBefore, lastTurnNumber, rejectionOf, storeOver } from "./store-builders.js";

const validLogArb = logShapeArb.map(buildLog);

/** Forks `source` at every boundary and checks each outcome against the test's reading of log.md. */
async function checkEveryBoundary(
  store: SessionStore,
  events: readonly SessionEvent[],
  prefix: string,
): Promise<void> {
  for (let boundary = 0; boundary < events.length; boundary++) {
    const childId = `${prefix}-${boundary}`;
    const marker = lastMarkerBefore(events, boundary);
    if (marker?.type === "turn/start") {
      const error = await rejectionOf(store.fork("src", boundary, childId));
      expect(error).toBeInstanceOf(SessionForkError);
      expect((error as SessionForkError).code).toBe("OPEN_TURN");
      expect((error as SessionForkError).details).toEqual({ boundary, turn: marker.turn });
      expect(await store.get(childId)).toBeUndefined();
      continue;
    }
    const header = await store.fork("src", boundary, childId);
    expect(header.seedLength).toBe(boundary + 1);
    expect(header.parentSession).toBe("src");
    const child = await store.load(childId);
    const seedLength = child.seedLength;
    expect(seedLength).toBe(boundary + 1);
    expect(child.events).toHaveLength(seedLength);
    expect(child.events.slice(0, seedLength)).toEqual(events.slice(0, boundary + 1));
    expect(() => SessionLog.fromSeed(child.header, child.events)).not.toThrow();
    const next = lastTurnNumber(events.slice(0, boundary + 1)) + 1;
    await expect(child.append(simpleTurn(seedLength, next, { toolCallsPerStep: 1 }))).resolves.toBe(
      seedLength + 9,
    );
  }
}

describe("fork over generated valid logs", () => {
  it("generates valid logs, some ending inside a turn", () => {
    fc.assert(
      fc.property(validLogArb, (events) => {
        expect(() =>
          SessionLog.fromSeed({ version: 0, id: "generated", createdAt: 0 }, events),
        ).not.toThrow();
      }),
      { numRuns: 200 },
    );
    const samples = fc.sample(validLogArb, { numRuns: 200, seed: 1 });
    const openAtEnd = samples.filter(
      (e) => lastMarkerBefore(e, e.length - 1)?.type === "turn/start",
    );
    expect(openAtEnd.length).toBeGreaterThan(10);
    expect(samples.some((e) => e.length > 30)).toBe(true);
  });

  it("accepts exactly the boundaries outside a turn, for a live source and a stored one not loaded", async () => {
    await fc.assert(
      fc.asyncProperty(validLogArb, async (events) => {
        const backend = new MemoryBackend();
        const live = storeOver(backend);
        await live.create("src", { seed: events, meta: { cwd: "/work/src" } });
        await checkEveryBoundary(live, events, "live");
        const cold = storeOver(backend);
        await checkEveryBoundary(cold, events, "cold");
        expect(cold.liveIds().includes("src")).toBe(false);
        // The source is unchanged by every fork of it.
        expect((await backend.load("src"))?.events).toEqual(events);
      }),
      { numRuns: 60 },
    );
  });
});
