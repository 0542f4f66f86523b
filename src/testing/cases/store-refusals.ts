// Contract cases through a SessionStore over the backend: what it refuses to write or read (seq conflicts, gaps, lossy JSON, unknown types, foreign or damaged logs, lone surrogates), and torn tails.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import { balancedLog, balancedTurn, openTurn, TURN_LENGTH } from "../events.js";
import { assertMatch, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** An event of a type this format does not know. */
const UNKNOWN_TYPE = { type: "turn/pause", seq: TURN_LENGTH, time: 0, data: {} };

/** Registers the store cases for refused writes and reads. */
export function storeRefusalCases(cases: CaseRegistry): void {
  const tamperSkip = cases.limits.noTamper;

  cases.add(
    "a store over the backend rejects a batch whose first seq is not the stored next seq (SEQ_CONFLICT)",
    async (storage) => {
      const a = await storage.openStore();
      const s = await a.create({ id: "s5", seed: balancedLog(1) });
      const error = await rejectsWithCode(
        s.append(balancedTurn(TURN_LENGTH + 1, 2)),
        "SEQ_CONFLICT",
        "an append one seq past the end",
      );
      assertMatch(error.details, { expectedSeq: TURN_LENGTH }, "the SEQ_CONFLICT details");
    },
  );

  cases.add(
    "a store over the backend rejects a seq gap inside a batch and leaves the stored log unchanged",
    async (storage) => {
      const a = await storage.openStore();
      const s = await a.create({ id: "s6", seed: balancedLog(1) });
      const batch = balancedTurn(TURN_LENGTH, 2);
      const gapped = [
        ...batch.slice(0, 3),
        { ...batch[3], seq: TURN_LENGTH + 4 } as SessionEvent,
        ...batch.slice(4),
      ];
      const error = await rejectsWithCode(s.append(gapped), "INVALID_EVENT", "a gapped batch");
      assertMatch(error.details, { rule: "seq-contiguous", index: 3 }, "the INVALID_EVENT details");
      assert.equal(s.nextSeq, TURN_LENGTH, "expected the session's next seq unchanged");
      await storage.closeStore(a);
      assert.deepStrictEqual(
        await (await (await storage.openStore()).load("s6")).readEvents(),
        balancedLog(1),
      );
    },
  );

  cases.add(
    "a store over the backend rejects data that is not lossless JSON, naming the event type",
    async (storage) => {
      const a = await storage.openStore();
      const s = await a.create({ id: "s7" });
      const start = openTurn(0, 1)[0] as SessionEvent;
      const data: Record<string, unknown> = { ...start.data, x: Number.NaN };
      const bad = { ...start, data } as unknown as SessionEvent;
      const error = await rejectsWithCode(s.append([bad]), "INVALID_EVENT", "an append of NaN");
      assertMatch(error.details, { rule: "json-value", seq: 0 }, "the INVALID_EVENT details");
      assert.ok(
        String((error as { message?: unknown }).message).includes("turn/start"),
        "expected the message to name the event type",
      );
      assert.deepStrictEqual(
        (await a.list()).sessions.map((l) => l.eventCount),
        [0],
      );
    },
  );

  cases.add(
    "a store over the backend refuses a log at another session format version and leaves it untouched",
    async (storage) => {
      const tamper = storage.tamper();
      const a = await storage.openStore();
      await a.create({ id: "s9", seed: balancedLog(1) });
      await storage.closeStore(a);
      await tamper.setFormatVersion("s9", 1);
      const before = await tamper.fingerprint();
      const error = await rejectsWithCode(
        (await storage.openStore()).load("s9"),
        "FORMAT_UNSUPPORTED",
        "a load of version 1",
      );
      assertMatch(error.details, { found: 1, supported: 0 }, "the FORMAT_UNSUPPORTED details");
      assert.equal(
        await tamper.fingerprint(),
        before,
        "expected the refused read to change nothing",
      );
    },
    tamperSkip,
  );

  cases.add(
    "a store over the backend loads a torn tail as the intact prefix",
    async (storage) => {
      const a = await storage.openStore();
      await a.create({ id: "s10", seed: balancedLog(2) });
      await storage.closeStore(a);
      await storage.tamper().tearTail("s10");
      const loaded = await (await storage.openStore()).load("s10");
      assert.deepStrictEqual(await loaded.readEvents(), balancedLog(2));
    },
    tamperSkip,
  );

  cases.add(
    "a store over the backend reports a hole before the last turn/end as CORRUPT_LOG naming the location when its events are read",
    async (storage) => {
      const a = await storage.openStore();
      await a.create({ id: "s11", seed: balancedLog(2) });
      await storage.closeStore(a);
      await storage.tamper().garble("s11", 3);
      // A load reads what resuming needs (the settled part's messages, where the backend can):
      // the damaged row is found by the read of every event.
      const error = await rejectsWithCode(
        (await storage.openStore()).readEvents("s11"),
        "CORRUPT_LOG",
        "a read of a log with a hole",
      );
      assert.ok(
        String(error.details?.location).includes("s11"),
        `expected the location to name the session, got ${String(error.details?.location)}`,
      );
    },
    tamperSkip,
  );

  cases.add(
    "a store over the backend refuses an unknown event type on append (FORMAT_UNSUPPORTED)",
    async (storage) => {
      const a = await storage.openStore();
      const s = await a.create({ id: "s12", seed: balancedLog(1) });
      const error = await rejectsWithCode(
        s.append([UNKNOWN_TYPE as unknown as SessionEvent]),
        "FORMAT_UNSUPPORTED",
        "an append of an unknown type",
      );
      assertMatch(error.details, { found: "turn/pause" }, "the FORMAT_UNSUPPORTED details");
    },
  );

  cases.add(
    "a store over the backend refuses to read a stored unknown event type (FORMAT_UNSUPPORTED)",
    async (storage) => {
      const a = await storage.openStore();
      await a.create({ id: "s12", seed: balancedLog(1) });
      await storage.closeStore(a);
      await storage.tamper().setType("s12", TURN_LENGTH - 1, "turn/pause");
      await rejectsWithCode(
        (await storage.openStore()).load("s12"),
        "FORMAT_UNSUPPORTED",
        "a load of a log holding an unknown type",
      );
    },
    tamperSkip,
  );

  // Seen failing before ids and header text were checked for well-formed Unicode: on
  // PostgreSQL "s\udbff" was stored as "s\ufffd", and deleting one removed the other.
  cases.add(
    "a store over the backend refuses ids and header text with a lone surrogate (INVALID_PARAMS) and keeps them in event data",
    async (storage) => {
      const a = await storage.openStore();
      const other = await a.create({ id: "s\ufffd", seed: balancedLog(1) });
      for (const [what, attempt] of [
        ["create", () => a.create({ id: "s\udbff" })],
        ["load", () => a.load("s\udbff")],
        ["delete", () => a.delete("s\udbff")],
        ["fork to the id", () => a.fork("s\ufffd", { childSessionId: "child\ud800" })],
        [
          "fork with the cwd",
          () => a.fork("s\ufffd", { childSessionId: "child", cwd: "/w\udc00" }),
        ],
        ["create with the cwd", () => a.create({ id: "c", meta: { cwd: "/w\udc00" } })],
        [
          "importLog",
          () => a.importLog('{"type":"session","version":0,"id":"i\\udbff","createdAt":1}\n'),
        ],
      ] as const) {
        await rejectsWithCode(attempt(), "INVALID_PARAMS", `a ${what} with a lone surrogate`);
      }
      assert.deepStrictEqual(
        await (await (await storage.openStore()).load("s\ufffd")).readEvents(),
        await other.readEvents(),
      );
      assert.deepStrictEqual(
        (await a.list()).sessions.map((l) => l.header.id),
        ["s\ufffd"],
      );
      const [start, message] = openTurn(0, 1) as [SessionEvent, SessionEvent & { data: object }];
      const lone = {
        ...message,
        data: { ...message.data, content: [{ type: "text", text: "half a pair: \ud83d" }] },
      } as SessionEvent;
      await a.create({ id: "data", seed: [start, lone] });
      const read = await (await storage.openStore()).load("data");
      assert.deepStrictEqual((await read.readEvents())[1], lone);
    },
  );
}
