// Property: over generated valid logs, fork accepts exactly the boundaries docs/log.md accepts, and accepted children stay valid.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  JsonlBackend,
  MemoryBackend,
  type SessionBackend,
  type SessionEvent,
  SessionForkError,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { SessionLog } from "../../src/log/session-log.js";
import { simpleTurn } from "../helpers/builders.js";
import { buildLog, logShapeArb } from "../helpers/log-arbitrary.js";
import {
  lastMarkerBefore,
  lastTurnNumber,
  manualClock,
  rejectionOf,
  storeOver,
} from "../helpers/store-builders.js";

const validLogArb = logShapeArb.map(buildLog);

/** Forks `source` at every boundary and checks each outcome against the test's reading of docs/log.md. */
async function checkEveryBoundary(
  store: SessionStore,
  events: readonly SessionEvent[],
  prefix: string,
): Promise<void> {
  for (let boundary = 0; boundary < events.length; boundary++) {
    const childId = `${prefix}-${boundary}`;
    const marker = lastMarkerBefore(events, boundary);
    if (marker?.type === "turn/start") {
      const error = await rejectionOf(store.fork("src", { boundary, childSessionId: childId }));
      expect(error).toBeInstanceOf(SessionForkError);
      expect((error as SessionForkError).code).toBe("OPEN_TURN");
      // The nearest valid boundaries: the seq before the turn's start, and the turn/end closing it.
      const start = events.findLastIndex((e, seq) => seq <= boundary && e.type === "turn/start");
      const after = events.findIndex((e, seq) => seq > boundary && e.type === "turn/end");
      expect((error as SessionForkError).details).toEqual({
        boundary,
        turn: marker.turn,
        ...(start > 0 ? { before: start - 1 } : {}),
        ...(after >= 0 ? { after } : {}),
      });
      expect(await store.get(childId)).toBeUndefined();
      continue;
    }
    const header = await store.fork("src", { boundary, childSessionId: childId });
    expect(header.seedLength).toBe(boundary + 1);
    expect(header.parentSession).toBe("src");
    const child = await store.load(childId);
    const seedLength = child.seedLength;
    expect(seedLength).toBe(boundary + 1);
    expect(await child.readEvents()).toHaveLength(seedLength);
    expect((await child.readEvents()).slice(0, seedLength)).toEqual(events.slice(0, boundary + 1));
    const childEvents = await child.readEvents();
    expect(() => SessionLog.fromSeed(child.header, childEvents)).not.toThrow();
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
        await live.create({ id: "src", seed: events, meta: { cwd: "/work/src" } });
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

  // The durable backends fork a stored source without loading it: JSONL finds the boundary's byte
  // offset from its turn-marker index and the newlines after it, SQLite copies rows in the
  // database. Each source is forked by a fresh backend (which reads the file once) and again by
  // the backend that wrote it (which knows the file already).
  it.each([
    ["JSONL", (dir: string) => new JsonlBackend(dir, { durability: "process" })],
    [
      "SQLite",
      (dir: string) => SqliteBackend.open(join(dir, "store.db"), { durability: "process" }),
    ],
  ] as const)(
    "accepts exactly the boundaries outside a turn for a stored %s source, cold and warm",
    async (_name, open: (dir: string) => SessionBackend | Promise<SessionBackend>) => {
      await fc.assert(
        fc.asyncProperty(validLogArb, async (events) => {
          const dir = mkdtempSync(join(tmpdir(), "seedline-fork-property-"));
          try {
            const writer = await open(dir);
            const clock = manualClock();
            const owner = new SessionStore({ backend: writer, now: clock.now });
            await owner.create({ id: "src", seed: events, meta: { cwd: "/work/src" } });
            await owner.unload("src");
            const fresh = await open(dir);
            await checkEveryBoundary(
              new SessionStore({ backend: fresh, now: clock.now }),
              events,
              "cold",
            );
            await fresh.close();
            await checkEveryBoundary(
              new SessionStore({ backend: writer, now: clock.now }),
              events,
              "warm",
            );
            expect((await writer.load("src"))?.events).toEqual(events);
            if (writer instanceof JsonlBackend) {
              // A child's file is its own header line, then the source's event lines byte for byte.
              const source = readFileSync(join(dir, "sessions", "src.jsonl"), "utf8");
              const sourceLines = source.split("\n").slice(1);
              for (let boundary = 0; boundary < events.length; boundary++) {
                if (lastMarkerBefore(events, boundary)?.type === "turn/start") continue;
                const child = readFileSync(join(dir, "sessions", `cold-${boundary}.jsonl`), "utf8");
                const childLines = child.split("\n");
                // The appended turn (9 events) follows the copied prefix in the child.
                expect(childLines.slice(1, boundary + 2)).toEqual(
                  sourceLines.slice(0, boundary + 1),
                );
              }
            }
            await writer.close();
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }),
        { numRuns: 12 },
      );
    },
  );
});
