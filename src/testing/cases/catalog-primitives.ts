// Contract cases for the primitives a catalog is derived from: ids, explicit titles read and written, and a ScanCatalog over them.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import type { ListOrder, SessionBackend, SessionCatalog } from "../../store/backend.js";
import { catalogOf, ScanCatalog } from "../../store/listing/scan-catalog.js";
import { BASE_TIME, balancedLog, header, TURN_LENGTH } from "../events.js";
import { rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";
import { userMessage } from "./titles.js";

/** `ids()` sorted, for comparison (its order is the backend's). */
async function sortedIds(backend: SessionBackend): Promise<string[]> {
  return (await backend.ids()).sort();
}

/** Every answer of a catalog over the sessions of {@link fill}: both orders paged, titles, prefixes. */
async function answers(catalog: SessionCatalog, ids: readonly string[]): Promise<unknown> {
  const listed = async (order: ListOrder, extra: { cwd?: string; parentSession?: string }) => {
    const pages: unknown[] = [];
    let cursor: string | undefined;
    for (let count = 0; count < 20; count++) {
      const page = await catalog.list({
        limit: 2,
        order,
        ...extra,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages.push(page);
      cursor = page.nextCursor;
      if (cursor === undefined) return pages;
    }
    assert.fail("expected list to stop giving a nextCursor within 20 pages");
  };
  return {
    created: await listed("created", {}),
    activity: await listed("activity", {}),
    inCwd: await listed("activity", { cwd: "/w" }),
    children: await listed("created", { parentSession: "s-src" }),
    titles: await Promise.all(ids.map((id) => catalog.titles(id))),
    prefixes: [
      await catalog.idsWithPrefix("s-", 3),
      await catalog.idsWithPrefix("s-c", 10),
      await catalog.idsWithPrefix("none", 10),
    ],
  };
}

/**
 * Sessions with and without events, cwd and parent, derived, explicit and cleared titles, a fork;
 * returns their ids.
 */
async function fill(backend: SessionBackend): Promise<string[]> {
  await backend.create(header("s-src", { cwd: "/w" }), serializeEvents(balancedLog(2)));
  await backend.create(header("s-empty", { createdAt: BASE_TIME + 1 }), []);
  await backend.create(
    header("s-named", { createdAt: BASE_TIME + 2, cwd: "/w" }),
    serializeEvents([userMessage(0, "derived one")]),
  );
  await backend.create(
    header("s-cleared", { createdAt: BASE_TIME + 3 }),
    serializeEvents([userMessage(0, "kept derived")]),
  );
  await backend.fork(
    "s-src",
    TURN_LENGTH - 1,
    header("s-child", { createdAt: BASE_TIME + 4, parentSession: "s-src" }),
  );
  // A first prompt that gives no title (blank), then one that would: the session has no derived
  // title, whether its events came at create or later (seen failing on SQLite and PostgreSQL, whose
  // append took the second prompt's title: "later prompt" against none).
  await backend.create(header("s-blank", { createdAt: BASE_TIME + 5 }), []);
  await backend.append("s-blank", 0, serializeEvents([userMessage(0, "   ")]));
  await backend.append("s-blank", 1, serializeEvents([userMessage(1, "later prompt")]));
  await backend.writeTitle("s-named", "Named by hand");
  await backend.writeTitle("s-cleared", "soon cleared");
  await backend.writeTitle("s-cleared", null);
  return ["s-src", "s-empty", "s-named", "s-cleared", "s-child", "s-blank", "absent"];
}

/** Registers the cases of `ids`, `readTitle`, `writeTitle` and a ScanCatalog over them. */
export function catalogPrimitiveCases(cases: CaseRegistry): void {
  cases.add(
    "ids answers every stored session (created, forked), not a deleted one, to every instance",
    async (storage) => {
      const backend = await storage.open();
      assert.deepStrictEqual(await backend.ids(), []);
      await backend.create(header("b"), serializeEvents(balancedLog(1)));
      await backend.create(header("a"), []);
      await backend.fork("b", TURN_LENGTH - 1, header("b-child", { parentSession: "b" }));
      await backend.create(header("gone"), []);
      await backend.delete("gone");
      assert.deepStrictEqual(await sortedIds(backend), ["a", "b", "b-child"]);
      const other = await storage.open();
      assert.deepStrictEqual(await sortedIds(other), ["a", "b", "b-child"]);
    },
  );

  cases.add(
    "readTitle answers what writeTitle stored, to another instance and to the catalog; null clears it; SESSION_NOT_FOUND for a missing session",
    async (storage) => {
      const backend = await storage.open();
      await rejectsWithCode(backend.writeTitle("absent", "x"), "SESSION_NOT_FOUND", "writeTitle");
      assert.equal(await backend.readTitle("absent"), undefined);
      await backend.create(header("t"), serializeEvents([userMessage(0, "derived one")]));
      assert.equal(await backend.readTitle("t"), undefined);
      await backend.writeTitle("t", "Explicit 🚀 title");
      const other = await storage.open();
      assert.equal(await other.readTitle("t"), "Explicit 🚀 title");
      assert.deepStrictEqual(await catalogOf(other).titles("t"), {
        explicit: "Explicit 🚀 title",
        derived: "derived one",
      });
      await catalogOf(other).setTitle("t", "set through the catalog");
      assert.equal(await backend.readTitle("t"), "set through the catalog");
      await other.writeTitle("t", null);
      assert.equal(await backend.readTitle("t"), undefined);
      // A session made again under a deleted one's id starts without a title.
      await backend.writeTitle("t", "old title");
      await backend.delete("t");
      await backend.create(header("t", { createdAt: BASE_TIME + 5 }), []);
      assert.equal(await backend.readTitle("t"), undefined);
    },
  );

  cases.add(
    "a ScanCatalog over the primitives lists, titles and matches id prefixes as the catalog the store uses",
    async (storage) => {
      const backend = await storage.open();
      const ids = await fill(backend);
      const other = await storage.open();
      assert.deepStrictEqual(
        await answers(new ScanCatalog(other), ids),
        await answers(catalogOf(backend), ids),
      );
    },
  );
}
