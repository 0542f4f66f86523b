// Contract cases for forkPoint and fork: markers at a boundary, prefix copies, independent children.

import assert from "node:assert/strict";
import { show } from "../../errors.js";
import type { SessionEvent } from "../../generated.js";
import { serializeEvents } from "../../log/serialized-event.js";
import { SessionStore } from "../../store/session-store.js";
import { BASE_TIME, balancedLog, balancedTurn, header, openTurn, TURN_LENGTH } from "../events.js";
import { assertStored, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Two balanced turns (seqs 0…17) and the start of a third (18…21). */
const OPEN_LOG = [...balancedLog(2), ...openTurn(2 * TURN_LENGTH, 3)];

/** `count` more chunks of step 1 of turn `turn`, from `fromSeq` (an open turn growing). */
function moreChunks(fromSeq: number, turn: number, count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: "assistant/chunk" as const,
    seq: fromSeq + i,
    time: BASE_TIME + fromSeq + i,
    data: { turn, step: 1, chunk: { type: "text-delta" as const, index: 0, text: `more ${i}` } },
  }));
}

/** Registers the fork cases. */
export function forkCases(cases: CaseRegistry): void {
  // Seen failing on SQLite with a remembered open turn taken without its proof row: the log
  // created again has 22 events, forkPoint answered 29.
  cases.add(
    "forkPoint of an open turn follows it as it grows, and reads a log deleted and created again anew",
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      const h = header("grow");
      const log = [...OPEN_LOG, ...moreChunks(OPEN_LOG.length, 3, 2)];
      await writer.create(h, serializeEvents(log));
      const marker = { seq: 2 * TURN_LENGTH, type: "turn/start", turn: 3 };
      assert.deepStrictEqual(await reader.forkPoint("grow", undefined), {
        header: h,
        length: log.length,
        marker,
      });
      for (let round = 0; round < 3; round++) {
        const more = moreChunks(log.length, 3, round + 1);
        await writer.append("grow", log.length, serializeEvents(more));
        log.push(...more);
        assert.deepStrictEqual(
          await reader.forkPoint("grow", undefined),
          { header: h, length: log.length, marker },
          `expected forkPoint to count the ${more.length} events appended in round ${round + 1}`,
        );
      }
      // The same header and last turn/end, a shorter open turn: nothing of the earlier log is
      // taken for this one.
      assert.equal(await writer.delete("grow"), true);
      await writer.create(h, serializeEvents(OPEN_LOG));
      assert.deepStrictEqual(
        await reader.forkPoint("grow", undefined),
        { header: h, length: OPEN_LOG.length, marker },
        "expected forkPoint to read the log created again",
      );
    },
  );

  cases.add(
    "forkPoint of a grown open turn stops before a damaged event appended since it last looked",
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      const h = header("damaged");
      await writer.create(h, serializeEvents(OPEN_LOG));
      assert.equal((await reader.forkPoint("damaged", undefined))?.length, OPEN_LOG.length);
      const more = moreChunks(OPEN_LOG.length, 3, 3);
      await writer.append("damaged", OPEN_LOG.length, serializeEvents(more));
      await storage.tamper().garble("damaged", OPEN_LOG.length + 1);
      assert.deepStrictEqual(await reader.forkPoint("damaged", undefined), {
        header: h,
        length: OPEN_LOG.length + 1,
        marker: { seq: 2 * TURN_LENGTH, type: "turn/start", turn: 3 },
      });
    },
    cases.limits.noTamper,
  );

  cases.add(
    "forkPoint reports the header, the length, the last turn marker at or before the boundary and the turn/end closing an open one",
    async (storage) => {
      const backend = await storage.open();
      const h = header("point", { cwd: "/w" });
      await backend.create(h, serializeEvents(OPEN_LOG));
      const expected = [
        [undefined, { seq: 18, type: "turn/start", turn: 3 }, {}],
        [21, { seq: 18, type: "turn/start", turn: 3 }, {}],
        [18, { seq: 18, type: "turn/start", turn: 3 }, {}],
        [17, { seq: 17, type: "turn/end", turn: 2 }, {}],
        [12, { seq: 9, type: "turn/start", turn: 2 }, { closedAt: 17 }],
        [9, { seq: 9, type: "turn/start", turn: 2 }, { closedAt: 17 }],
        [8, { seq: 8, type: "turn/end", turn: 1 }, {}],
        [0, { seq: 0, type: "turn/start", turn: 1 }, { closedAt: 8 }],
      ] as const;
      for (const [boundary, marker, closed] of expected) {
        const point = await backend.forkPoint("point", boundary);
        assert.deepStrictEqual(
          point,
          { header: h, length: OPEN_LOG.length, marker, ...closed },
          `expected forkPoint("point", ${boundary}) to report the marker at seq ${marker.seq} and ${show(closed)}`,
        );
      }
      await backend.create(header("empty"), []);
      assert.deepStrictEqual(await backend.forkPoint("empty", undefined), {
        header: header("empty"),
        length: 0,
        marker: undefined,
      });
    },
  );

  cases.add(
    "a store over the backend refuses a boundary inside a turn (OPEN_TURN) naming the nearest valid boundaries",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("source"), serializeEvents(OPEN_LOG));
      // The store is not closed: the contract closes the backend after the case.
      const store = new SessionStore({ backend });
      const expected = [
        [12, { boundary: 12, turn: 2, before: 8, after: 17 }],
        [9, { boundary: 9, turn: 2, before: 8, after: 17 }],
        [5, { boundary: 5, turn: 1, after: 8 }],
        [0, { boundary: 0, turn: 1, after: 8 }],
        [20, { boundary: 20, turn: 3, before: 17 }],
        [undefined, { boundary: 21, turn: 3, before: 17 }],
      ] as const;
      for (const [boundary, details] of expected) {
        const error = await rejectsWithCode(
          store.fork("source", { boundary, childSessionId: "child" }),
          "OPEN_TURN",
          `a fork of "source" at ${boundary}`,
        );
        assert.deepStrictEqual(error.details, details);
      }
      assert.equal(await backend.has("child"), false);
    },
  );

  cases.add(
    "fork stores the new header with a copy of the source's events 0…boundary",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("source"), serializeEvents(OPEN_LOG));
      const child = header("child", {
        parentSession: "source",
        seedLength: TURN_LENGTH,
        cwd: "/c",
      });
      await backend.fork("source", TURN_LENGTH - 1, child);
      await assertStored(backend, "child", child, balancedLog(1));
      const whole = header("whole", { parentSession: "source" });
      await backend.fork("source", OPEN_LOG.length - 1, whole);
      await assertStored(await storage.open(), "whole", whole, OPEN_LOG);
      await assertStored(backend, "source", header("source"), OPEN_LOG);
    },
  );

  cases.add("fork at boundary -1 stores a header-only child", async (storage) => {
    const backend = await storage.open();
    await backend.create(header("source"), serializeEvents(balancedLog(1)));
    const child = header("bare", { parentSession: "source" });
    await backend.fork("source", -1, child);
    await assertStored(backend, "bare", child, []);
    await backend.create(header("empty"), []);
    await backend.fork("empty", -1, header("empty-child"));
    await assertStored(backend, "empty-child", header("empty-child"), []);
  });

  cases.add(
    "fork refuses a taken id (SESSION_ALREADY_EXISTS) and a missing source (SESSION_NOT_FOUND), storing nothing",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("source"), serializeEvents(balancedLog(2)));
      await backend.create(header("taken"), serializeEvents(balancedLog(1)));
      await rejectsWithCode(
        backend.fork("source", 2 * TURN_LENGTH - 1, header("taken")),
        "SESSION_ALREADY_EXISTS",
        "a fork onto a taken id",
      );
      await assertStored(backend, "taken", header("taken"), balancedLog(1));
      await rejectsWithCode(
        backend.fork("missing", -1, header("orphan")),
        "SESSION_NOT_FOUND",
        "a fork of a missing source",
      );
      assert.equal(
        await backend.has("orphan"),
        false,
        "expected the refused fork to store nothing",
      );
    },
  );

  cases.add(
    "a forked child keeps its copy when the source grows or is deleted, and grows on its own",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("source"), serializeEvents(balancedLog(1)));
      const child = header("child", { parentSession: "source", seedLength: TURN_LENGTH });
      await backend.fork("source", TURN_LENGTH - 1, child);
      await backend.append("source", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2)));
      await assertStored(backend, "child", child, balancedLog(1));
      await backend.append("child", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2)));
      await backend.append(
        "child",
        2 * TURN_LENGTH,
        serializeEvents(balancedTurn(2 * TURN_LENGTH, 3)),
      );
      await assertStored(backend, "source", header("source"), balancedLog(2));
      assert.equal(await backend.delete("source"), true);
      await assertStored(await storage.open(), "child", child, balancedLog(3));
    },
  );
}
