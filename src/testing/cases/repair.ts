// Contract cases for repair and torn tails: closers appended, intact events cut, a torn record dropped.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import { balancedLog, balancedTurn, closers, header, openTurn, TURN_LENGTH } from "../events.js";
import { assertStored, assertSuffix, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** A balanced turn (seqs 0…8) and the start of a second (9…12). */
const OPEN_LOG = [...balancedLog(1), ...openTurn(TURN_LENGTH, 2)];
/** What closes the open turn of {@link OPEN_LOG} (seqs 13, 14). */
const CLOSERS = closers(TURN_LENGTH, 2);

/** Registers the repair and torn-tail cases. */
export function repairCases(cases: CaseRegistry): void {
  const tamperSkip = cases.limits.noTamper;

  cases.add(
    "repair appends the closers after the kept events; appends continue after them",
    async (storage) => {
      const backend = await storage.open();
      const h = header("open");
      await backend.create(h, serializeEvents(OPEN_LOG));
      await backend.repair("open", OPEN_LOG.length, serializeEvents(CLOSERS));
      const closed = [...OPEN_LOG, ...CLOSERS];
      await assertStored(await storage.open(), "open", h, closed);
      await assertSuffix(backend, "open", OPEN_LOG.length, OPEN_LOG.length, CLOSERS);
      await backend.append("open", closed.length, serializeEvents(balancedTurn(closed.length, 3)));
      await assertStored(backend, "open", h, [...closed, ...balancedTurn(closed.length, 3)]);
    },
  );

  cases.add(
    "repair cuts the intact events after keep; the log takes appends from there",
    async (storage) => {
      const backend = await storage.open();
      const h = header("cut");
      await backend.create(h, serializeEvents(OPEN_LOG));
      await backend.repair("cut", TURN_LENGTH, []);
      await assertStored(backend, "cut", h, balancedLog(1));
      await rejectsWithCode(
        backend.append("cut", OPEN_LOG.length, serializeEvents(balancedTurn(OPEN_LOG.length, 3))),
        "SEQ_CONFLICT",
        "an append at the old end after a cut",
      );
      await backend.append("cut", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2)));
      await assertStored(await storage.open(), "cut", h, balancedLog(2));
    },
  );

  cases.add(
    "a torn tail reads as the intact events with tornTail set, in load and loadFrom",
    async (storage) => {
      const backend = await storage.open();
      const h = header("torn");
      await backend.create(h, serializeEvents(OPEN_LOG));
      await storage.tamper().tearTail("torn");
      const reader = await storage.open();
      await assertStored(reader, "torn", h, OPEN_LOG, true);
      const suffix = await reader.loadFrom("torn", TURN_LENGTH);
      assert.deepStrictEqual(suffix, {
        header: h,
        events: OPEN_LOG.slice(TURN_LENGTH),
        tornTail: true,
        from: TURN_LENGTH,
      });
    },
    tamperSkip,
  );

  // Seen failing on SQLite and PostgreSQL before their fix: forkPoint took the length from the last
  // row's seq (14 for 13 intact events) and read the torn row as the last turn marker (CORRUPT_LOG).
  cases.add(
    "forkPoint of a log with a torn tail counts intact events only and finds the marker among them",
    async (storage) => {
      const backend = await storage.open();
      const h = header("torn");
      await backend.create(h, serializeEvents(OPEN_LOG));
      await storage.tamper().tearTail("torn");
      const reader = await storage.open();
      const marker = { seq: TURN_LENGTH, type: "turn/start", turn: 2 };
      for (const boundary of [OPEN_LOG.length - 1, undefined]) {
        assert.deepStrictEqual(
          await reader.forkPoint("torn", boundary),
          { header: h, length: OPEN_LOG.length, marker },
          `expected forkPoint("torn", ${boundary}) to pass over the torn record`,
        );
      }
    },
    tamperSkip,
  );

  cases.add(
    "repair drops a torn tail and appends the closers; the log reads whole and takes appends",
    async (storage) => {
      const backend = await storage.open();
      const h = header("torn");
      await backend.create(h, serializeEvents(OPEN_LOG));
      await storage.tamper().tearTail("torn");
      const writer = await storage.open();
      await writer.repair("torn", OPEN_LOG.length, serializeEvents(CLOSERS));
      const closed = [...OPEN_LOG, ...CLOSERS];
      await assertStored(writer, "torn", h, closed);
      await writer.append("torn", closed.length, serializeEvents(balancedTurn(closed.length, 3)));
      await assertStored(await storage.open(), "torn", h, [
        ...closed,
        ...balancedTurn(closed.length, 3),
      ]);
    },
    tamperSkip,
  );

  cases.add(
    "fork of a log with a torn tail copies intact events only",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("torn"), serializeEvents(OPEN_LOG));
      await storage.tamper().tearTail("torn");
      const reader = await storage.open();
      await reader.fork("torn", OPEN_LOG.length - 1, header("copy"));
      await assertStored(reader, "copy", header("copy"), OPEN_LOG);
    },
    tamperSkip,
  );
}
