// Contract cases for create and append: header-only and seeded creates, taken ids, seq conflicts.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import { catalogOf } from "../../store/listing/scan-catalog.js";
import { balancedLog, balancedTurn, header, TURN_LENGTH } from "../events.js";
import { assertStored, assertSuffix, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Registers the create and append cases. */
export function createAppendCases(cases: CaseRegistry): void {
  cases.add(
    "create stores a header-only session that has, load, loadFrom and list see at once",
    async (storage) => {
      const backend = await storage.open();
      const h = header("fresh", { cwd: "/work" });
      await backend.create(h, []);
      assert.equal(await backend.has("fresh"), true, "expected has to see the new session");
      await assertStored(backend, "fresh", h, []);
      await assertSuffix(backend, "fresh", 0, 0, []);
      const page = await catalogOf(backend).list({ limit: 10 });
      assert.deepStrictEqual(page.sessions, [{ header: h, eventCount: 0, updatedAt: h.createdAt }]);
    },
  );

  cases.add(
    "create stores a seeded session whole, header members included, for another instance",
    async (storage) => {
      const writer = await storage.open();
      const h = header("seeded", { cwd: "/w", parentSession: "parent", seedLength: TURN_LENGTH });
      const events = balancedLog(2);
      await writer.create(h, serializeEvents(events));
      await assertStored(await storage.open(), "seeded", h, events);
    },
  );

  cases.add(
    "create refuses a taken id (SESSION_ALREADY_EXISTS) and keeps the stored session",
    async (storage) => {
      const backend = await storage.open();
      const h = header("taken");
      await backend.create(h, serializeEvents(balancedLog(1)));
      await rejectsWithCode(
        backend.create({ ...h, cwd: "/other" }, serializeEvents(balancedLog(2))),
        "SESSION_ALREADY_EXISTS",
        "a create of a taken id",
      );
      await rejectsWithCode(
        backend.create(h, []),
        "SESSION_ALREADY_EXISTS",
        "a header-only create of a taken id",
      );
      await assertStored(backend, "taken", h, balancedLog(1));
    },
  );

  cases.add("append adds batches at the stored end, from any instance", async (storage) => {
    const a = await storage.open();
    const b = await storage.open();
    const h = header("grow");
    const events = balancedLog(3);
    await a.create(h, []);
    await a.append("grow", 0, serializeEvents(events.slice(0, 4)));
    await a.append("grow", 4, serializeEvents(events.slice(4, TURN_LENGTH)));
    await b.append(
      "grow",
      TURN_LENGTH,
      serializeEvents(events.slice(TURN_LENGTH, 2 * TURN_LENGTH)),
    );
    await a.append("grow", 2 * TURN_LENGTH, serializeEvents(events.slice(2 * TURN_LENGTH)));
    await assertStored(b, "grow", h, events);
    await assertStored(a, "grow", h, events);
  });

  cases.add(
    "append refuses a batch that does not start at the stored end (SEQ_CONFLICT, expectedSeq) and stores none of it",
    async (storage) => {
      const backend = await storage.open();
      const h = header("conflict");
      await backend.create(h, serializeEvents(balancedLog(1)));
      const next = balancedTurn(TURN_LENGTH, 2);
      for (const fromSeq of [TURN_LENGTH + 1, TURN_LENGTH - 1, 0]) {
        const batch = balancedTurn(fromSeq, 2);
        const error = await rejectsWithCode(
          backend.append("conflict", fromSeq, serializeEvents(batch)),
          "SEQ_CONFLICT",
          `an append from seq ${fromSeq} to a log of ${TURN_LENGTH} events`,
        );
        assert.equal(
          error.details?.expectedSeq,
          TURN_LENGTH,
          "expected SEQ_CONFLICT to name the stored end",
        );
      }
      await assertStored(backend, "conflict", h, balancedLog(1));
      await backend.append("conflict", TURN_LENGTH, serializeEvents(next));
      await assertStored(backend, "conflict", h, balancedLog(2));
    },
  );

  cases.add(
    "append to a missing session is SESSION_NOT_FOUND and creates nothing",
    async (storage) => {
      const backend = await storage.open();
      await rejectsWithCode(
        backend.append("missing", 0, serializeEvents(balancedLog(1))),
        "SESSION_NOT_FOUND",
        "an append to a missing session",
      );
      assert.equal(
        await backend.has("missing"),
        false,
        "expected the failed append to create nothing",
      );
      assert.equal(await backend.load("missing"), undefined);
    },
  );
}
