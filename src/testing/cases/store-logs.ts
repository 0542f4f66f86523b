// Contract cases through a SessionStore over the backend: round trips, repair on reopening, creates seen at once, export and import, repeated appends.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import { BASE_TIME, balancedLog, balancedTurn, header, openTurn, TURN_LENGTH } from "../events.js";
import { assertMatch, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Registers the store cases for what a log holds after create, append, repair, export and import. */
export function storeLogCases(cases: CaseRegistry): void {
  cases.add(
    "a store over the backend round-trips the header and the events of a create + append exactly",
    async (storage) => {
      const a = await storage.openStore();
      const events = balancedLog(2, { steps: 2, chunksPerStep: 3, toolCallsPerStep: 1 });
      const session = await a.create({ id: "s1", meta: { cwd: "/work", createdAt: 42 } });
      await session.append(events.slice(0, 10));
      await session.append(events.slice(10));
      await storage.closeStore(a);
      const reloaded = await (await storage.openStore()).load("s1");
      assert.deepStrictEqual(reloaded.header, {
        version: 0,
        id: "s1",
        createdAt: 42,
        cwd: "/work",
      });
      assert.deepStrictEqual(await reloaded.readEvents(), events);
    },
  );

  cases.add(
    "a store over the backend reads a log that ends inside a turn as stored; the writer closes it; a later append continues; a reload shows the same closed log",
    async (storage) => {
      const a = await storage.openStore();
      const n = TURN_LENGTH;
      const open = [...balancedLog(1), ...openTurn(n, 2)];
      await a.create({ id: "s2", seed: open });
      await storage.closeStore(a);
      const b = await storage.openStore();
      const read = await b.load("s2");
      assert.deepStrictEqual(await read.readEvents(), open);
      assert.equal(read.openTurn, 2, "expected the reader to see turn 2 open");
      const repaired = await b.openForWriting("s2");
      const closed = await repaired.readEvents();
      assert.deepStrictEqual(
        closed.slice(n + 4).map((e) => e.type),
        ["step/end", "turn/end"],
        "expected the writer to append the closers",
      );
      assertMatch(
        closed.at(-1),
        { seq: n + 5, data: { turn: 2, reason: { kind: "interrupted" } } },
        "the closing turn/end",
      );
      assert.equal(await repaired.append(balancedTurn(n + 6, 3)), 2 * n + 6);
      const written = await repaired.readEvents();
      await storage.closeStore(b);
      const again = await (await storage.openStore()).load("s2");
      assert.deepStrictEqual(await again.readEvents(), written);
      assert.equal(again.nextSeq, 2 * n + 6);
    },
  );

  cases.add(
    "a store over the backend answers an unanswered tool/call with the synthetic interrupted result before the closers",
    async (storage) => {
      const a = await storage.openStore();
      // turn/start, user/message, step/start, then the turn's tool/call at seq 3.
      const call = balancedTurn(0, 1).find((e) => e.type === "tool/call") as SessionEvent;
      const seed = [...openTurn(0, 1).slice(0, 3), { ...call, seq: 3, time: BASE_TIME + 3 }];
      await a.create({ id: "s3", seed });
      await storage.closeStore(a);
      const repaired = await (await storage.openStore()).openForWriting("s3");
      const events = await repaired.readEvents();
      assert.deepStrictEqual(
        events.slice(4).map((e) => e.type),
        ["tool/result", "step/end", "turn/end"],
        "expected the result, then the closers",
      );
      assertMatch(
        events[4],
        {
          data: {
            callId: "call-1",
            isError: true,
            error: { name: "InterruptedError", code: "interrupted" },
          },
          sourceEventSeqs: [3],
          surfaceOp: "append",
        },
        "the synthetic tool/result",
      );
    },
  );

  cases.add(
    "a store over the backend stores every created session at once: header only without a seed, listed and readable by another instance before any event",
    async (storage) => {
      const a = await storage.openStore();
      const other = await storage.openStore();
      const ids = async () => (await other.list()).sessions.map((s) => s.header.id).sort();
      const fresh = await a.create({ id: "fresh", meta: { cwd: "/work" } });
      assert.deepStrictEqual(await ids(), ["fresh"]);
      assert.equal((await other.list()).sessions[0]?.eventCount, 0);
      assert.deepStrictEqual((await other.load("fresh")).header, fresh.header);
      await other.fork("fresh", { childSessionId: "fresh-child" });
      assert.equal((await a.load("fresh-child")).header.parentSession, "fresh");
      await a.create({ id: "seeded", seed: [] });
      await a.create({ id: "seeded2", seed: balancedLog(1) });
      await a.fork("seeded2", { childSessionId: "forked" });
      await a.importLog('{"type":"session","version":0,"id":"imported","createdAt":7}\n');
      assert.deepStrictEqual(await ids(), [
        "forked",
        "fresh",
        "fresh-child",
        "imported",
        "seeded",
        "seeded2",
      ]);
      await fresh.append(balancedLog(1));
      assert.deepStrictEqual(await (await other.load("fresh")).readEvents(), balancedLog(1));
    },
  );

  cases.add(
    "a store over the backend round-trips seedLength and parentSession through the header",
    async (storage) => {
      const a = await storage.openStore();
      await a.create({
        id: "child",
        seed: balancedLog(2),
        meta: { parentSession: "parent", seedLength: TURN_LENGTH, createdAt: 5 },
      });
      await storage.closeStore(a);
      const reloaded = (await (await storage.openStore()).load("child")).header;
      assert.deepStrictEqual(reloaded, {
        version: 0,
        id: "child",
        createdAt: 5,
        parentSession: "parent",
        seedLength: TURN_LENGTH,
      });
    },
  );

  cases.add(
    "a store over the backend exports a session as JSONL text, and importing that text recreates it exactly",
    async (storage) => {
      const a = await storage.openStore();
      const events = balancedLog(2);
      await a.create({
        id: "s14",
        seed: events,
        meta: { cwd: "/w", parentSession: "p", seedLength: 3, createdAt: 9 },
      });
      const text = await a.exportLog("s14");
      const lines = text.split("\n");
      assert.equal(
        lines[0],
        '{"type":"session","version":0,"id":"s14","createdAt":9,"cwd":"/w","parentSession":"p","seedLength":3}',
      );
      assert.deepStrictEqual(
        lines.slice(1, -1),
        events.map((e) => JSON.stringify(e)),
      );
      await a.delete("s14");
      const imported = await a.importLog(text);
      assert.deepStrictEqual(
        imported,
        header("s14", { createdAt: 9, cwd: "/w", parentSession: "p", seedLength: 3 }),
      );
      assert.equal(await a.exportLog("s14"), text, "expected the import to export the same text");
      await a.importLog(text, { sessionId: "copy" });
      assert.deepStrictEqual((await a.exportLog("copy")).split("\n").slice(1), lines.slice(1));
    },
  );

  cases.add(
    "a store over the backend acknowledges a repeated append of identical events and refuses a different event at an old seq",
    async (storage) => {
      const a = await storage.openStore();
      const s = await a.create({ id: "s15" });
      const turn = balancedTurn(0, 1);
      assert.equal(await s.append(turn), TURN_LENGTH);
      assert.equal(await s.append(turn), TURN_LENGTH, "expected a repeat to be acknowledged");
      assert.equal(await s.append(turn.slice(3)), TURN_LENGTH);
      const last = TURN_LENGTH - 1;
      const changed: SessionEvent[] = [
        ...turn.slice(0, last),
        { ...turn[last], time: 1 } as SessionEvent,
      ];
      const error = await rejectsWithCode(
        s.append(changed),
        "SEQ_CONFLICT",
        "an append that changes a stored event",
      );
      assertMatch(error.details, { expectedSeq: TURN_LENGTH }, "the SEQ_CONFLICT details");
      await storage.closeStore(a);
      assert.deepStrictEqual(
        await (await (await storage.openStore()).load("s15")).readEvents(),
        turn,
      );
    },
  );
}
