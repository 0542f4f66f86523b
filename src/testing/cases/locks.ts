// Contract cases for the writer lock and close: one writer per session across instances, release, re-take.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import { balancedLog, header } from "../events.js";
import { assertStored, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** Registers the lock and close cases. */
export function lockCases(cases: CaseRegistry): void {
  const writersSkip = cases.limits.oneWriter;

  cases.add(
    "lock keeps a second instance out (SESSION_BUSY) until released, and holds only its own session",
    async (storage) => {
      const a = await storage.open();
      const b = await storage.open();
      await a.create(header("held"), []);
      await a.create(header("free"), []);
      const release = await a.lock("held");
      await rejectsWithCode(b.lock("held"), "SESSION_BUSY", "a lock held by another instance");
      const other = await b.lock("free");
      await release();
      const taken = await b.lock("held");
      await rejectsWithCode(
        a.lock("held"),
        "SESSION_BUSY",
        "a lock taken over by another instance",
      );
      await taken();
      await other();
    },
    writersSkip,
  );

  cases.add(
    "lock taken again by its holder gives another release; once released it can be taken again",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("again"), []);
      const first = await backend.lock("again");
      const second = await backend.lock("again");
      await second();
      await first();
      await first();
      const third = await backend.lock("again");
      if (backend.lockLost !== undefined) {
        assert.equal(backend.lockLost("again"), false, "expected lockLost false for a lock held");
      }
      await third();
    },
  );

  cases.add(
    "close releases the instance's locks: another instance takes them",
    async (storage) => {
      const a = await storage.open();
      await a.create(header("closing"), []);
      await a.lock("closing");
      await storage.close(a);
      const b = await storage.open();
      const release = await b.lock("closing");
      await release();
    },
    writersSkip,
  );

  cases.add(
    "what an instance wrote before close is there for the next instance",
    async (storage) => {
      const a = await storage.open();
      const h = header("durable", { cwd: "/w" });
      await a.create(h, serializeEvents(balancedLog(2)));
      await a.create(header("other"), []);
      assert.equal(await a.delete("other"), true);
      await storage.close(a);
      const b = await storage.open();
      await assertStored(b, "durable", h, balancedLog(2));
      assert.equal(await b.has("other"), false);
    },
  );
}
