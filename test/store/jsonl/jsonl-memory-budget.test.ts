// The JSONL backend's memory budget: what a store keeps of sessions it no longer holds stays within it, however many it loads.

import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { type SessionEvent, SessionStore } from "../../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../../src/log/jsonl-codec.js";
import { JsonlBackend, type JsonlBackendOptions } from "../../../src/store/jsonl/jsonl-backend.js";
import { logFileName } from "../../../src/store/jsonl/layout.js";
import { DEFAULT_CACHE_BYTES } from "../../../src/store/jsonl/memory-budget.js";
import { TIME, turnEnd, turnStart, userMessage } from "../../helpers/builders.js";

// A full collection before each heap reading, so that what is counted is what is still reachable.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const MIB = 1024 * 1024;
const roots: string[] = [];
const stores: SessionStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** The heap still reachable now. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Turns of three events (two of them turn markers, which is what a file state keeps per turn). */
function turns(count: number, from = 0, firstTurn = 1): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let turn = firstTurn; turn < firstTurn + count; turn++) {
    const seq = from + events.length;
    events.push(
      turnStart(seq, turn),
      userMessage(seq + 1, `prompt ${turn}`),
      turnEnd(seq + 2, turn),
    );
  }
  return events;
}

/**
 * A store over a folder of `sessions` logs of `turnCount` turns each (`s-0`, `s-1`, …), written as
 * files directly: the logs are the same but for their headers, and writing them costs no store.
 */
function storeOf(
  sessions: number,
  turnCount: number,
  options: JsonlBackendOptions = {},
): { store: SessionStore; backend: JsonlBackend; events: SessionEvent[] } {
  const root = mkdtempSync(join(tmpdir(), "seedline-jsonl-budget-"));
  roots.push(root);
  const dir = join(root, "sessions");
  mkdirSync(dir);
  const events = turns(turnCount);
  const body = events.map(formatEventLine).join("");
  for (let i = 0; i < sessions; i++) {
    const id = `s-${i}`;
    const fd = openSync(join(dir, logFileName(id)), "wx");
    try {
      writeSync(fd, formatHeaderLine({ version: 0, id, createdAt: TIME + i }));
      writeSync(fd, body);
    } finally {
      closeSync(fd);
    }
  }
  const backend = new JsonlBackend(root, { durability: "process", ...options });
  const store = new SessionStore({ backend });
  stores.push(store);
  return { store, backend, events };
}

/** Loads and unloads sessions `from` to `to - 1`, checking each holds `length` events. */
async function loadAndUnload(store: SessionStore, from: number, to: number, length: number) {
  for (let i = from; i < to; i++) {
    const session = await store.load(`s-${i}`);
    expect(session.nextSeq).toBe(length);
    await store.unload(`s-${i}`);
  }
  expect(store.liveIds()).toEqual([]);
}

describe("the JSONL backend's memory budget", () => {
  // Why test/jsonl-retained-state.test.ts did not see this: it counts the states kept (at most
  // 1,024) of two-turn sessions, a few hundred bytes each. A state keeps every turn marker of its
  // log, so the count bounded nothing: 1,024 states of 2,000-turn logs are about 240 MiB.
  // Fails without the fix: the heap grew by 18.6 MiB from 75 to 150 sessions, and 150 unloaded
  // sessions left 38.1 MiB on the heap (with it: 0.03 MiB and 17.0 MiB; the default budget's
  // share for file states is 16 MiB).
  it("keeps less than its default budget of 150 unloaded 2,000-turn sessions, no more than of 75", async () => {
    const sessions = 150;
    const { store, events } = storeOf(sessions, 2000);
    const before = heapUsed();
    await loadAndUnload(store, 0, sessions / 2, events.length);
    const half = heapUsed();
    await loadAndUnload(store, sessions / 2, sessions, events.length);
    const all = heapUsed();
    // Loading twice the sessions keeps no more: the budget was full after the first half.
    expect((all - half) / MIB).toBeLessThan(4);
    expect((all - before) / MIB).toBeLessThan(DEFAULT_CACHE_BYTES / 2 / MIB + 6);
  }, 120_000);

  // Fails without the fix (the option did not exist; the states kept were bounded by count only):
  // the heap grew by 3.9 MiB from 100 to 200 sessions (with it: 0.0 MiB).
  it("keeps what a small budget allows, however many sessions are loaded and unloaded", async () => {
    const cacheBytes = 2 * MIB;
    const sessions = 200;
    const { store, backend, events } = storeOf(sessions, 300, { cacheBytes });
    await loadAndUnload(store, 0, sessions / 2, events.length);
    const half = heapUsed();
    const halfCached = backend.cachedBytes;
    await loadAndUnload(store, sessions / 2, sessions, events.length);
    const all = heapUsed();
    expect((all - half) / MIB).toBeLessThan(1.5);
    expect(halfCached).toBeLessThanOrEqual(cacheBytes);
    expect(backend.cachedBytes).toBeLessThanOrEqual(cacheBytes);
    expect(backend.cachedBytes).toBeGreaterThan(cacheBytes / 4);
  }, 120_000);

  // Without the fix the option did not exist and nothing was dropped: `cachedBytes` was undefined.
  it("lists, loads, appends to and forks sessions whose cached state was dropped, reading them again", async () => {
    // Room for two states, a fifth of the listing's last events and most of the titles.
    const cacheBytes = 64 * 1024;
    const sessions = 150;
    const turnCount = 100;
    const { store, backend, events } = storeOf(sessions, turnCount, { cacheBytes });
    const listed = await store.list({ limit: sessions, order: "activity" });
    expect(listed.sessions.map((s) => s.header.id).sort()).toEqual(
      Array.from({ length: sessions }, (_, i) => `s-${i}`).sort(),
    );
    expect(listed.sessions.every((s) => s.title === "prompt 1")).toBe(true);
    await loadAndUnload(store, 0, sessions, events.length);
    expect(backend.cachedBytes).toBeLessThanOrEqual(cacheBytes);
    expect(backend.retainedSessions).toBe(2);
    // s-0 was read first: its state went long ago.
    expect(await store.readEvents("s-0")).toEqual(events);
    const more = turns(1, events.length, turnCount + 1);
    expect(await store.append("s-0", more)).toBe(events.length + more.length);
    await store.unload("s-0");
    await loadAndUnload(store, 1, sessions, events.length);
    const reread = await store.load("s-0");
    expect(reread.nextSeq).toBe(events.length + more.length);
    expect(await store.readEvents("s-0", { fromSeq: events.length })).toEqual(more);
    const child = await store.fork("s-0", { boundary: events.length - 1, childSessionId: "child" });
    expect(await store.readEvents(child.id)).toEqual(events);
    const again = await store.list({ limit: sessions + 1, order: "activity" });
    expect(again.sessions.length).toBe(sessions + 1);
    expect(again.sessions.find((s) => s.header.id === "s-0")?.eventCount).toBe(
      events.length + more.length,
    );
    expect(again.sessions.every((s) => s.title === "prompt 1")).toBe(true);
    expect(backend.cachedBytes).toBeLessThanOrEqual(cacheBytes);
  }, 60_000);

  it("refuses a budget that is not a positive integer", () => {
    for (const cacheBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new JsonlBackend(tmpdir(), { cacheBytes })).toThrow(
        expect.objectContaining({ code: "INVALID_PARAMS" }),
      );
    }
  });
});
