// Contract cases for loadFrom with a page limit: pages add up to the whole read, torn tails and damage judged per page.

import assert from "node:assert/strict";
import { serializeEvents } from "../../log/serialized-event.js";
import type { SessionBackend, StoredSuffix } from "../../store/backend.js";
import { balancedLog, header, openTurn, TURN_LENGTH } from "../events.js";
import { assertMatch, rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/**
 * Reads `id` page by page from `fromSeq`, each page asked from the seq after the last, until a
 * page holds fewer than `limit` events; checks that each page starts where it was asked to and
 * holds at most `limit` events.
 */
async function readPages(
  backend: SessionBackend,
  id: string,
  fromSeq: number,
  limit: number,
): Promise<StoredSuffix[]> {
  const pages: StoredSuffix[] = [];
  for (let seq = fromSeq; ; ) {
    const page = await backend.loadFrom(id, seq, limit);
    const call = `loadFrom(${JSON.stringify(id)}, ${seq}, ${limit})`;
    assert.ok(page !== undefined, `expected ${call} to find the session`);
    assert.equal(page.from, seq, `expected ${call} to answer from ${seq}`);
    assert.ok(page.events.length <= limit, `expected ${call} to answer at most ${limit}`);
    pages.push(page);
    if (page.events.length < limit) return pages;
    seq += limit;
  }
}

/**
 * Registers the paging cases of `loadFrom(id, fromSeq, limit)`.
 *
 * Seen failing on SQLite and PostgreSQL: with the LIMIT left out of eventLines and sessionFrom
 * (every row read), all four (a first page of the whole log; a torn tail told on a full page);
 * with the next-turn/end lookup left out, the third (a page ending at the bad row answered as a
 * torn tail). Seen failing on JSONL before that backend paged: every page was the whole suffix
 * (the first case's page sizes all wrong).
 */
export function loadPageCases(cases: CaseRegistry): void {
  const tamperSkip = cases.limits.noTamper;

  cases.add(
    "loadFrom with a limit answers pages: at most limit events, fewer only at the end, adding up to the whole log; a limit that is not a positive integer is INVALID_PARAMS",
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      const events = balancedLog(4);
      const n = events.length;
      await writer.create(header("pages"), serializeEvents(events));
      for (const limit of [1, 2, 3, TURN_LENGTH, n - 1, n, n + 2, n + 5]) {
        for (const start of [0, 2, 5]) {
          const pages = await readPages(reader, "pages", start, limit);
          const what = `pages of ${limit} from ${start}`;
          assert.deepStrictEqual(
            pages.flatMap((p) => p.events),
            events.slice(start),
            what,
          );
          assert.ok(
            pages.every((p) => !p.tornTail),
            `expected ${what} to tell no torn tail`,
          );
        }
      }
      // Without a limit, loadFrom reads every event from the asked seq.
      assert.deepStrictEqual((await reader.loadFrom("pages", 5))?.events, events.slice(5));
      for (const limit of [0, -1, 1.5]) {
        await assert.rejects(reader.loadFrom("pages", 0, limit), { code: "INVALID_PARAMS" });
      }
    },
  );

  cases.add(
    "loadFrom with a limit says no torn tail on a full page that ends exactly at the end; the next page, empty, tells",
    async (storage) => {
      const backend = await storage.open();
      const log = balancedLog(2);
      const end = log.length;
      const h = header("e");
      await backend.create(h, serializeEvents(log));
      const full = { header: h, events: log.slice(end - 3), tornTail: false, from: end - 3 };
      assert.deepStrictEqual(await backend.loadFrom("e", end - 3, 3), full);
      assertMatch(
        await backend.loadFrom("e", end, 3),
        { events: [], tornTail: false },
        "the page after the end",
      );
      await storage.tamper().tearTail("e");
      assert.deepStrictEqual(
        await backend.loadFrom("e", end - 3, 3),
        full,
        "expected a full page ending at the last intact event to tell no torn tail",
      );
      assertMatch(
        await backend.loadFrom("e", end - 3, 4),
        { events: log.slice(end - 3), tornTail: true },
        "a page reaching the torn record",
      );
      assertMatch(
        await backend.loadFrom("e", end, 3),
        { events: [], tornTail: true, from: end },
        "the page after the end, with a torn tail",
      );
    },
    tamperSkip,
  );

  cases.add(
    "loadFrom with a limit reports a bad event inside a page as CORRUPT_LOG when a turn/end follows it, even past the page",
    async (storage) => {
      const backend = await storage.open();
      const log = balancedLog(3);
      await backend.create(header("c"), serializeEvents(log));
      await storage.tamper().garble("c", 2);
      // The page before the damage never reads it: that is the next page's to report.
      assertMatch(
        await backend.loadFrom("c", 0, 2),
        { events: log.slice(0, 2), tornTail: false },
        "the page before the damage",
      );
      // Pages that reach seq 2, ending at it or before the turn/end at seq TURN_LENGTH - 1.
      for (const [fromSeq, limit] of [
        [0, 3],
        [2, 1],
        [1, TURN_LENGTH - 3],
        [0, TURN_LENGTH + 2],
      ] as const) {
        const error = await rejectsWithCode(
          backend.loadFrom("c", fromSeq, limit),
          "CORRUPT_LOG",
          `loadFrom("c", ${fromSeq}, ${limit})`,
        );
        assertMatch(
          error.details,
          { seq: 2 },
          `the details of loadFrom("c", ${fromSeq}, ${limit})`,
        );
      }
      await rejectsWithCode(backend.loadFrom("c", 0), "CORRUPT_LOG", `loadFrom("c", 0)`);
    },
    tamperSkip,
  );

  cases.add(
    "loadFrom with a limit reports a torn tail only on the page that reaches it, whatever the page size",
    async (storage) => {
      const backend = await storage.open();
      // A balanced turn and the start of a second; the event after them (seq `bad`) is damaged.
      const stored = [...balancedLog(1), ...openTurn(TURN_LENGTH, 2)];
      const log = stored.slice(0, -1);
      const bad = log.length;
      await backend.create(header("t"), serializeEvents(stored));
      await storage.tamper().garble("t", bad);
      for (const limit of [1, 2, 3, 4, bad, bad + 1]) {
        const pages = await readPages(backend, "t", 0, limit);
        assert.deepStrictEqual(
          pages.flatMap((p) => p.events),
          log,
          `pages of ${limit}`,
        );
        assert.deepStrictEqual(
          pages.map((p) => p.tornTail),
          pages.map((_, i) => i === pages.length - 1),
          `expected only the last page of ${limit} to tell the torn tail`,
        );
      }
    },
    tamperSkip,
  );
}
