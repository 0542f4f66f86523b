// What a JSONL backend keeps in memory per session: freed when the store unloads a session it writes, bounded for sessions it only reads.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type SessionHeader, SessionStore } from "../../../src/index.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { JsonlBackend, type JsonlBackendOptions } from "../../../src/store/jsonl/jsonl-backend.js";
import { RETAINED_STATES } from "../../../src/store/jsonl/state-cache.js";
import { simpleTurn, TIME, userMessage } from "../../helpers/builders.js";

const roots: string[] = [];
const backends: JsonlBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-jsonl-retained-"));
  roots.push(dir);
  return dir;
}

function open(root: string, options: JsonlBackendOptions = {}): JsonlBackend {
  const backend = new JsonlBackend(root, { durability: "process", ...options });
  backends.push(backend);
  return backend;
}

function header(id: string): SessionHeader {
  return { version: 0, id, createdAt: TIME };
}

const SESSIONS = 2000;

// These count the states kept, of two-turn logs: how many bytes they keep (a state grows with its
// log's turns) is bounded by the memory budget, tested in jsonl-memory-budget.test.ts.
describe("per-session memory of the JSONL backend", () => {
  // Before the fix the backend kept a file state (with its turn-marker index) for every session
  // it had written or read: with a `retainedSessions` getter counting those added to the old
  // code, this test failed with 2000 retained after the writes (and 2000 after the reads).
  it(`keeps nothing of ${SESSIONS} written sessions once unloaded, and at most ${RETAINED_STATES} of those read`, async () => {
    const root = tempDir();
    const writerBackend = open(root);
    const writer = new SessionStore({ backend: writerBackend });
    const turn = simpleTurn(0, 1);
    for (let i = 0; i < SESSIONS; i++) {
      const id = `s-${i}`;
      const session = await writer.create({ id });
      await writer.append(session, turn);
      await writer.append(id, simpleTurn(turn.length, 2));
      await writer.unload(id);
    }
    expect(writer.liveIds()).toEqual([]);
    expect(writerBackend.retainedSessions).toBe(0);

    const readerBackend = open(root);
    const reader = new SessionStore({ backend: readerBackend });
    for (let i = 0; i < SESSIONS; i++) {
      const id = `s-${i}`;
      expect((await (await reader.load(id)).readEvents()).length).toBe(2 * turn.length);
      expect((await readerBackend.forkPoint(id, 0))?.length).toBe(2 * turn.length);
      await reader.unload(id);
    }
    expect(readerBackend.retainedSessions).toBeLessThanOrEqual(RETAINED_STATES);
    // Reading a session again after its state was dropped reads it from its file.
    expect((await (await reader.load("s-0")).readEvents()).length).toBe(2 * turn.length);
    expect(readerBackend.retainedSessions).toBeLessThanOrEqual(RETAINED_STATES);
  }, 120_000);

  // Against the old code (no limit) this failed where it expects 2 states kept: 3 were.
  it("reads, appends to and forks a session whose state was dropped, recovering it from the file", async () => {
    const root = tempDir();
    const backend = open(root, { retainedStates: 2 });
    const first = simpleTurn(0, 1);
    await backend.create(header("a"), serializeEvents(first));
    const writer = open(root);
    const reader = await backend.loadFrom("a", 0);
    expect(reader?.events).toEqual(first);
    // Another instance appends while "a"'s state is pushed out by two other sessions.
    const second = simpleTurn(first.length, 2);
    await writer.append("a", first.length, serializeEvents(second));
    await backend.create(header("b"), []);
    await backend.create(header("c"), []);
    expect(backend.retainedSessions).toBe(2);
    expect(await backend.loadFrom("a", first.length)).toEqual({
      header: header("a"),
      events: second,
      tornTail: false,
      from: first.length,
    });
    await backend.create(header("d"), []);
    await backend.create(header("e"), []);
    const length = first.length + second.length;
    await expect(
      backend.append("a", first.length, serializeEvents([userMessage(first.length, "x")])),
    ).rejects.toMatchObject({ code: "SEQ_CONFLICT", details: { expectedSeq: length } });
    await backend.create(header("f"), []);
    await backend.create(header("g"), []);
    const third = [userMessage(length, "after the drop")];
    await backend.append("a", length, serializeEvents(third));
    expect((await backend.load("a"))?.events).toEqual([...first, ...second, ...third]);
    await backend.create(header("h"), []);
    await backend.create(header("i"), []);
    expect(await backend.forkPoint("a", first.length)).toEqual({
      header: header("a"),
      length: length + 1,
      marker: { seq: first.length, type: "turn/start", turn: 2 },
      closedAt: length - 1,
    });
    await backend.fork("a", first.length - 1, { ...header("child"), parentSession: "a" });
    expect((await backend.load("child"))?.events).toEqual(first);
    expect(backend.retainedSessions).toBeLessThanOrEqual(2);
  });
});
