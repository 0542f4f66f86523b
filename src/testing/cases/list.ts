// Contract cases for list and delete: newest-first pages, cursors, filters, counts, removal.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import type { ListPage, ListQuery, SessionBackend } from "../../store/backend.js";
import { MAX_LIST_LIMIT } from "../../store/listing/list-limit.js";
import { catalogOf } from "../../store/listing/scan-catalog.js";
import { BASE_TIME, balancedLog, balancedTurn, header, TURN_LENGTH } from "../events.js";
import { assertSuffix, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/**
 * Seven sessions l0…l6: createdAt `BASE_TIME + i % 3`, cwd "/even" or "/odd", l5 and l6 children
 * of l0. Newest first (createdAt descending, then id descending): l5 l2 l4 l1 l6 l3 l0.
 */
async function createSeven(backend: SessionBackend): Promise<void> {
  for (let i = 0; i < 7; i++) {
    await backend.create(
      header(`l${i}`, {
        createdAt: BASE_TIME + (i % 3),
        cwd: i % 2 === 0 ? "/even" : "/odd",
        ...(i >= 5 ? { parentSession: "l0" } : {}),
      }),
      serializeEvents(balancedLog(1)),
    );
  }
}

/** Every id `list` gives for `query`, page by page, checking each page's size and cursor. */
async function pagedIds(backend: SessionBackend, query: Omit<ListQuery, "cursor">) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page: ListPage = await catalogOf(backend).list({
      ...query,
      ...(cursor === undefined ? {} : { cursor }),
    });
    assert.ok(
      page.sessions.length <= query.limit,
      `expected at most ${query.limit} sessions a page`,
    );
    ids.push(...page.sessions.map((s) => s.header.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return ids;
    assert.equal(page.sessions.length, query.limit, "expected a full page before a nextCursor");
  }
  assert.fail("expected list to stop giving a nextCursor within 20 pages");
}

/** Registers the list and delete cases. */
export function listCases(cases: CaseRegistry): void {
  cases.add("list of an empty store is an empty page without a cursor", async (storage) => {
    const backend = await storage.open();
    assert.deepStrictEqual(await catalogOf(backend).list({ limit: 5 }), { sessions: [] });
  });

  cases.add(
    "list pages newest first (createdAt, then id, descending) with the cursor it gives",
    async (storage) => {
      const backend = await storage.open();
      await createSeven(backend);
      const order = ["l5", "l2", "l4", "l1", "l6", "l3", "l0"];
      for (const limit of [1, 3, 7, 50]) {
        assert.deepStrictEqual(
          await pagedIds(backend, { limit }),
          order,
          `expected pages of ${limit}`,
        );
      }
      const other = await storage.open();
      assert.deepStrictEqual(
        await pagedIds(other, { limit: 2 }),
        order,
        "expected another instance to list the same",
      );
    },
  );

  cases.add(
    "list filters by cwd and by parentSession, paging within the filter",
    async (storage) => {
      const backend = await storage.open();
      await createSeven(backend);
      assert.deepStrictEqual(await pagedIds(backend, { limit: 2, cwd: "/odd" }), [
        "l5",
        "l1",
        "l3",
      ]);
      assert.deepStrictEqual(await pagedIds(backend, { limit: 1, parentSession: "l0" }), [
        "l5",
        "l6",
      ]);
      assert.deepStrictEqual(
        await pagedIds(backend, { limit: 5, cwd: "/even", parentSession: "l0" }),
        ["l6"],
      );
      assert.deepStrictEqual(await pagedIds(backend, { limit: 5, cwd: "/none" }), []);
    },
  );

  cases.add(
    "list reports eventCount and updatedAt (the time of the last event, else createdAt)",
    async (storage) => {
      const backend = await storage.open();
      const h = header("counted", { cwd: "/w" });
      await backend.create(h, []);
      const listed = async () =>
        (await catalogOf(backend).list({ limit: 1 })).sessions.map(({ title: _, ...s }) => s);
      assert.deepStrictEqual(await listed(), [
        { header: h, eventCount: 0, updatedAt: h.createdAt },
      ]);
      const events = balancedLog(2);
      await backend.append("counted", 0, serializeEvents(events.slice(0, TURN_LENGTH)));
      assert.deepStrictEqual(await listed(), [
        { header: h, eventCount: TURN_LENGTH, updatedAt: BASE_TIME + TURN_LENGTH - 1 },
      ]);
      await backend.append("counted", TURN_LENGTH, serializeEvents(balancedTurn(TURN_LENGTH, 2)));
      assert.deepStrictEqual(await listed(), [
        { header: h, eventCount: 2 * TURN_LENGTH, updatedAt: BASE_TIME + 2 * TURN_LENGTH - 1 },
      ]);
    },
  );

  cases.add(
    "list refuses a limit above MAX_LIST_LIMIT and a cursor it did not give (INVALID_PARAMS)",
    async (storage) => {
      const backend = await storage.open();
      await rejectsWithCode(
        catalogOf(backend).list({ limit: MAX_LIST_LIMIT + 1 }),
        "INVALID_PARAMS",
        `a list with limit ${MAX_LIST_LIMIT + 1}`,
      );
      await rejectsWithCode(
        catalogOf(backend).list({ limit: 1, cursor: "not a cursor" }),
        "INVALID_PARAMS",
        "a list with a made-up cursor",
      );
    },
  );

  cases.add(
    "delete removes a session and tells whether there was one; the id can be created again",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("gone"), serializeEvents(balancedLog(2)));
      await backend.create(header("kept"), serializeEvents(balancedLog(1)));
      assert.equal(
        await backend.delete("gone"),
        true,
        "expected delete of a stored session to be true",
      );
      assert.equal(await backend.delete("gone"), false, "expected a second delete to be false");
      assert.equal(
        await backend.delete("never"),
        false,
        "expected delete of a missing session to be false",
      );
      const reader = await storage.open();
      assert.equal(await reader.has("gone"), false);
      assert.equal(await reader.load("gone"), undefined);
      assert.deepStrictEqual(
        (await catalogOf(reader).list({ limit: 10 })).sessions.map((s) => s.header.id),
        ["kept"],
      );
      await backend.create(header("gone", { cwd: "/new" }), []);
      await assertSuffix(reader, "gone", 2 * TURN_LENGTH, 0, []);
    },
  );
}
