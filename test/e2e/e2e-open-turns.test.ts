// The real built server and an open turn: a tool that outlasts --idle-ms, session/open after a killed writer, and a second process in between.
import { afterAll, describe, expect, it } from "vitest";
import type { RecordOp, SeedlineClient, SessionEvent } from "../../src/index.js";
import { encodeSessionId } from "../../src/store/ids/id-encoding.js";
import { LockFiles } from "../../src/store/locks/lock-files.js";
import { simpleTurn } from "../helpers/builders.js";
import { expectCode, spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";
import { WAIT_MS } from "../helpers/waits.js";

const temp = tempDir("seedline-open-turns-");
afterAll(() => temp.remove());

/** The idle time the servers of these tests run with: far shorter than a tool's run. */
const IDLE_MS = "300";

/** Stores whose writer locks live in lock files a test can probe. */
const STORES = {
  jsonl: (name: string) => ({
    url: `jsonl:${temp.dir}/${name}`,
    locks: `${temp.dir}/${name}/sessions`,
  }),
  sqlite: (name: string) => ({
    url: `sqlite:${temp.dir}/${name}.db`,
    locks: `${temp.dir}/${name}.db.locks`,
  }),
} as const;

/** A turn that asked for one tool call and waits for its result: turn 1, step 1, call c1. */
const TOOL_CALL_ASKED: [RecordOp, ...RecordOp[]] = [
  { op: "turn_start", prompt: "build the project" },
  { op: "step_start" },
  {
    op: "chunks",
    chunks: [
      { type: "tool-call-delta", index: 0, id: "c1", name: "build", argumentsDelta: "{}" },
      { type: "finish", reason: { kind: "tool-calls" } },
    ],
  },
];

/** The tool's result, then the step and the turn end. */
const TOOL_RETURNED: [RecordOp, ...RecordOp[]] = [
  { op: "tool_result", callId: "c1", content: "built" },
  { op: "step_end" },
  { op: "turn_end" },
];

/**
 * Waits until no process holds `id`'s writer lock: takes it in this process and lets go at once,
 * writing nothing. A poll for the server's idle sweep, never a timing check.
 */
async function lockFreed(locksDir: string, id: string): Promise<void> {
  const locks = new LockFiles(locksDir);
  const deadline = Date.now() + WAIT_MS;
  try {
    for (;;) {
      try {
        await (await locks.acquire(encodeSessionId(id), id))();
        return;
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SESSION_BUSY") throw error;
        if (Date.now() > deadline) throw new Error(`expected the lock of ${id} to be let go`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  } finally {
    locks.releaseAllSync();
  }
}

/** Every event of a session, read page by page. */
async function allEvents(client: SeedlineClient, sessionId: string): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for (let fromSeq = 0; ; ) {
    const page = await client.sessionRead({ sessionId, fromSeq });
    events.push(...page.events);
    if (page.done) return events;
    fromSeq = page.nextSeq;
  }
}

/** The events crash repair wrote: synthetic interrupted results and interrupted turn ends. */
function interrupted(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter(
    (e) =>
      (e.type === "tool/result" && e.data.error?.code === "interrupted") ||
      (e.type === "turn/end" && e.data.reason.kind === "interrupted"),
  );
}

for (const kind of ["jsonl", "sqlite"] as const) {
  describe(`a turn left open on the built server (${kind} store)`, () => {
    it("goes on after the session was unloaded for idleness while a tool ran", async () => {
      // Fails without the fix: the idle sweep unloaded the session and the next record reopened
      // it as a dead writer's — the turn was closed as interrupted, and the tool's result was
      // RECORD_REFUSED ("expected an open turn (turn_start first), found none").
      const store = STORES[kind](`idle-${kind}`);
      const { client } = spawnedClient(store.url, "ndjson", ["--idle-ms", IDLE_MS]);
      await client.sessionCreate({ sessionId: "agent", cwd: "/w" });
      const asked = await client.sessionRecord({ sessionId: "agent", ops: TOOL_CALL_ASKED });
      expect(asked.pendingToolCalls).toEqual([{ callId: "c1", name: "build", arguments: "{}" }]);
      // The tool runs longer than the idle time: the server unloads the session meanwhile.
      await lockFreed(store.locks, "agent");
      const done = await client.sessionRecord({ sessionId: "agent", ops: TOOL_RETURNED });
      expect(done).toMatchObject({ nextSeq: asked.nextSeq + 3, finished: false });
      expect(done.pendingToolCalls).toEqual([]);
      const events = await allEvents(client, "agent");
      expect(interrupted(events)).toEqual([]);
      expect(events.slice(-3).map((e) => e.type)).toEqual(["tool/result", "step/end", "turn/end"]);
      // An appending client goes on the same way: a turn of its own, unloaded in the middle.
      const turn = simpleTurn(done.nextSeq, 2);
      await client.sessionAppend({ sessionId: "agent", events: turn.slice(0, 3) });
      await lockFreed(store.locks, "agent");
      expect(await client.sessionAppend({ sessionId: "agent", events: turn.slice(3) })).toEqual({
        nextSeq: done.nextSeq + turn.length,
      });
      expect(interrupted(await allEvents(client, "agent"))).toEqual([]);
      await client.close();
    });

    it("still closes the turn when another process wrote the log while it was unloaded", async () => {
      // Taking the lock back trusts a turn as its own only while the log ends where it let go:
      // without that check the second process's open turn 2 below stayed open (no closers).
      const store = STORES[kind](`other-${kind}`);
      const { client } = spawnedClient(store.url, "ndjson", ["--idle-ms", IDLE_MS]);
      await client.sessionCreate({ sessionId: "agent", cwd: "/w" });
      const asked = await client.sessionRecord({ sessionId: "agent", ops: TOOL_CALL_ASKED });
      await lockFreed(store.locks, "agent");
      // A second server takes the session for writing meanwhile: to it, the writer died. It
      // starts a turn of its own and goes away with it open.
      const other = spawnedClient(store.url, "ndjson").client;
      const opened = await other.sessionOpen({ sessionId: "agent" });
      expect(opened).toEqual({ nextSeq: asked.nextSeq + 3, repaired: true });
      await other.sessionRecord({
        sessionId: "agent",
        ops: [{ op: "turn_start", prompt: "mine" }],
      });
      await other.close();
      // The first server's tool result comes too late: its turn was closed by the other process,
      // and the turn that process left open is closed now, as a dead writer's.
      await expectCode(
        client.sessionRecord({ sessionId: "agent", ops: TOOL_RETURNED }),
        "RECORD_REFUSED",
      );
      const events = await allEvents(client, "agent");
      expect(events.slice(asked.nextSeq).map((e) => e.type)).toEqual([
        "tool/result",
        "step/end",
        "turn/end",
        "turn/start",
        "user/message",
        "turn/end",
      ]);
      expect(interrupted(events)).toHaveLength(3);
      expect(await client.sessionRead({ sessionId: "agent" })).not.toHaveProperty("openTurn");
      await client.close();
    });
  });
}

describe("session/open on the built server", () => {
  it("repairs a killed writer's turn and answers where to append next", async () => {
    // Fails without the method: the built server answered session/open with METHOD_NOT_FOUND
    // (-32601) and the client had no sessionOpen; a client's only way in was an append, whose
    // first batch met SEQ_CONFLICT (the repair's closers unseen).
    const store = STORES.sqlite("killed");
    const writer = spawnedClient(store.url, "ndjson").client;
    await writer.sessionCreate({ sessionId: "agent", cwd: "/w" });
    const asked = await writer.sessionRecord({ sessionId: "agent", ops: TOOL_CALL_ASKED });
    await writer.sessionCreate({ sessionId: "second", cwd: "/w" });
    await writer.sessionRecord({ sessionId: "second", ops: TOOL_CALL_ASKED });
    writer.process?.kill("SIGKILL");
    expect((await writer.exited)?.signal).toBe("SIGKILL");

    const { client } = spawnedClient(store.url, "ndjson");
    const opened = await client.sessionOpen({ sessionId: "agent" });
    // The synthetic tool result, step/end and turn/end were stored.
    expect(opened).toEqual({ nextSeq: asked.nextSeq + 3, repaired: true });
    expect(interrupted(await allEvents(client, "agent"))).toHaveLength(2);
    const next = simpleTurn(opened.nextSeq, 2);
    expect(await client.sessionAppend({ sessionId: "agent", events: next })).toEqual({
      nextSeq: opened.nextSeq + next.length,
    });
    // Opened again, by the writer that holds it: nothing to repair.
    expect(await client.sessionOpen({ sessionId: "agent" })).toEqual({
      nextSeq: opened.nextSeq + next.length,
      repaired: false,
    });
    await expectCode(client.sessionOpen({ sessionId: "nobody" }), "SESSION_NOT_FOUND");
    // An empty append opens a session the same way: the repair is stored, no event of its own.
    expect(await client.sessionAppend({ sessionId: "second", events: [] })).toEqual({
      nextSeq: asked.nextSeq + 3,
    });
    expect(interrupted(await allEvents(client, "second"))).toHaveLength(2);
    expect(await client.sessionOpen({ sessionId: "second" })).toEqual({
      nextSeq: asked.nextSeq + 3,
      repaired: false,
    });
    await client.close();
  });

  it("answers a turn the server itself has open, and SESSION_BUSY while another process writes", async () => {
    const store = STORES.jsonl("own");
    const { client } = spawnedClient(store.url, "ndjson");
    await client.sessionCreate({ sessionId: "agent", cwd: "/w" });
    const asked = await client.sessionRecord({ sessionId: "agent", ops: TOOL_CALL_ASKED });
    expect(await client.sessionOpen({ sessionId: "agent" })).toEqual({
      nextSeq: asked.nextSeq,
      openTurn: 1,
      repaired: false,
    });
    const other = spawnedClient(store.url, "ndjson").client;
    await expectCode(other.sessionOpen({ sessionId: "agent" }), "SESSION_BUSY");
    await Promise.all([client.close(), other.close()]);
  });
});
