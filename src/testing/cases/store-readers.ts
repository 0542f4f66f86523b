// Contract cases through a SessionStore over the backend: listing by creation, deletes beside forks and writers, readers beside a writer, watch.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import type { SessionStore } from "../../store/session-store.js";
import { balancedLog, openTurn, TURN_LENGTH } from "../events.js";
import { assertMatch, rejectsWithCode, within } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/**
 * Seven sessions l0…l6, each one balanced turn stamped `1000 + i`, created at `100 + i % 3`, in
 * /even or /odd by parity, l5 and l6 children of l0.
 */
async function createListed(store: SessionStore): Promise<void> {
  for (let i = 0; i < 7; i++) {
    await store.create({
      id: `l${i}`,
      seed: balancedLog(1, { time: 1000 + i }),
      meta: {
        createdAt: 100 + (i % 3),
        cwd: i % 2 === 0 ? "/even" : "/odd",
        ...(i >= 5 ? { parentSession: "l0" } : {}),
      },
    });
  }
}

/** A parent of two balanced turns and its child "kid", forked after the first. */
async function createForked(store: SessionStore): Promise<void> {
  const parent = await store.create({ id: "parent", seed: balancedLog(2) });
  const child = await store.fork(parent, { boundary: TURN_LENGTH - 1, childSessionId: "kid" });
  assertMatch(child, { parentSession: "parent", seedLength: TURN_LENGTH }, "the child's header");
}

/** Registers the store cases for listing, deleting, reading beside a writer, and watching. */
export function storeReaderCases(cases: CaseRegistry): void {
  const tamperSkip = cases.limits.noTamper;
  const writersSkip = cases.limits.oneWriter;

  cases.add(
    "a store over the backend lists newest created first on request (order: created) with an opaque cursor, and filters by cwd and parentSession",
    async (storage) => {
      const a = await storage.openStore();
      await createListed(a);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await a.list({
          order: "created",
          limit: 3,
          ...(cursor === undefined ? {} : { cursor }),
        });
        assert.ok(page.sessions.length <= 3, `expected at most 3, got ${page.sessions.length}`);
        seen.push(...page.sessions.map((s) => s.header.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.deepStrictEqual(seen, ["l5", "l2", "l4", "l1", "l6", "l3", "l0"]);
      const ids = async (query: Parameters<SessionStore["list"]>[0]) =>
        (await a.list(query)).sessions.map((s) => s.header.id);
      assert.deepStrictEqual(await ids({ order: "created", cwd: "/odd" }), ["l5", "l1", "l3"]);
      assert.deepStrictEqual(await ids({ order: "created", parentSession: "l0" }), ["l5", "l6"]);
      const first = (await a.list({ order: "created", limit: 1 })).sessions[0];
      assertMatch(
        first,
        { eventCount: TURN_LENGTH, updatedAt: new Date(1005).toISOString() },
        "the newest session's entry",
      );
    },
  );

  cases.add(
    "a store over the backend lists without reading a whole log: a damaged event leaves the entry's count and updatedAt",
    async (storage) => {
      const a = await storage.openStore();
      await createListed(a);
      await storage.closeStore(a);
      await storage.tamper().garble("l5", 3);
      const listed = (await (await storage.openStore()).list({ order: "created", limit: 1 }))
        .sessions[0];
      assertMatch(
        listed,
        {
          header: { id: "l5" },
          eventCount: TURN_LENGTH,
          updatedAt: new Date(1005).toISOString(),
        },
        "the damaged session's entry",
      );
    },
    tamperSkip,
  );

  cases.add(
    "a store over the backend deletes a session while its children keep their copies",
    async (storage) => {
      const a = await storage.openStore();
      await createForked(a);
      await a.delete("parent");
      assert.equal(await a.get("parent"), undefined, "expected the parent gone");
      await rejectsWithCode(a.delete("parent"), "SESSION_NOT_FOUND", "a second delete");
      assert.deepStrictEqual(await (await a.load("kid")).readEvents(), balancedLog(1));
    },
  );

  cases.add(
    "a store over the backend refuses to delete a session another writer holds (SESSION_BUSY)",
    async (storage) => {
      const a = await storage.openStore();
      await createForked(a);
      // A fork leaves the child's writer lock free; whoever writes it next takes it.
      await a.openForWriting("kid");
      const b = await storage.openStore();
      await rejectsWithCode(b.delete("kid"), "SESSION_BUSY", "a delete of a held session");
      assert.equal((await a.load("kid")).nextSeq, TURN_LENGTH);
    },
    writersSkip,
  );

  cases.add(
    "a store over the backend lets a reader see a log another writer holds as it stands, never repairing it, and never blocking the writer",
    async (storage) => {
      const a = await storage.openStore();
      const [start, message, step, chunk] = openTurn(0, 1) as SessionEvent[] as [
        SessionEvent,
        SessionEvent,
        SessionEvent,
        SessionEvent,
      ];
      const open = [start, message, step];
      const writer = await a.create({ id: "held", seed: open });
      const readerStore = await storage.openStore();
      const reader = await readerStore.load("held");
      assert.deepStrictEqual(await reader.readEvents(), open);
      assert.equal(reader.openTurn, 1, "expected the reader to see turn 1 open");
      await rejectsWithCode(reader.append([chunk]), "SESSION_BUSY", "a reader's append");
      assert.equal(await writer.append([chunk]), 4);
      // The reader's next read is current: it sees the writer's append without reloading.
      assert.equal((await readerStore.load("held")).nextSeq, 4);
    },
    writersSkip,
  );

  cases.add(
    "a store over the backend never takes the writer lock to read: another instance appends right after it reads, and every read sees every acknowledged append",
    async (storage) => {
      const a = await storage.openStore();
      await a.create({ id: "shared", seed: [] });
      await storage.closeStore(a);
      // Before docs/readers.md's rules a read took the writer lock and kept it (SESSION_BUSY for the writer).
      const reader = await storage.openStore();
      assert.equal((await reader.load("shared")).nextSeq, 0);
      const writer = await storage.openStore();
      const events = balancedLog(3, { steps: 2, chunksPerStep: 2, toolCallsPerStep: 1 });
      let at = 0;
      while (at < events.length) {
        const batch = events.slice(at, at + 3);
        at = await writer.append("shared", batch);
        const seen = await reader.load("shared");
        assert.equal(seen.nextSeq, at, `expected the reader to see the append up to ${at}`);
        assert.deepStrictEqual((await seen.readEvents()).at(-1), events[at - 1]);
      }
      assert.deepStrictEqual(await (await reader.load("shared")).readEvents(), events);
    },
  );

  cases.add(
    "a store over the backend watches: every event once and in order from any instance, caught up from a past seq, ending on delete",
    async (storage) => {
      const writer = await storage.openStore();
      const reader = await storage.openStore();
      const events = balancedLog(2, { steps: 2, chunksPerStep: 2, toolCallsPerStep: 1 });
      await writer.create({ id: "watched", seed: events.slice(0, 5) });
      const watch = reader.watch("watched", { fromSeq: 2 });
      assert.equal((await watch.ready).nextSeq, 2);
      const got: SessionEvent[] = [];
      let deleted = false;
      let caughtUp: () => void = () => {};
      const allSeen = new Promise<void>((resolve) => (caughtUp = resolve));
      const consumed = (async () => {
        for await (const batch of watch) {
          if (batch.deleted) deleted = true;
          got.push(...batch.events);
          if (batch.nextSeq === events.length) caughtUp();
        }
      })();
      for (let at = 5; at < events.length; at += 4) {
        await writer.append("watched", events.slice(at, at + 4));
      }
      // Events a watch has not read when its session is deleted are gone with it.
      await within(allSeen, "every appended event");
      await writer.delete("watched");
      await within(consumed, "the watch to end after the delete");
      assert.deepStrictEqual(got, events.slice(2));
      assert.equal(deleted, true, "expected the watch to tell of the delete");
    },
  );
}
