// loadFrom with a page limit, for the backends that page in SQL: pages add up to the whole read, torn tails and corruption judged per page.

import { describe, expect, it } from "vitest";
import { serializeEvents } from "../../src/log/serialized-event.js";
import type { SessionBackend, StoredSuffix } from "../../src/store/backend.js";
import { balancedLog, simpleTurn, TIME, turnStart, userMessage } from "../builders.js";

/** A backend over fresh storage, and two ways to damage a stored row in place. */
export interface PagedHarness {
  readonly backend: SessionBackend;
  /** Makes the row at `seq` unreadable. */
  garble(id: string, seq: number): Promise<void>;
  /** Leaves a partial row after the last one (a write cut short). */
  tearTail(id: string): Promise<void>;
}

const TURN = simpleTurn(0, 1).length;
const HEADER = (id: string) => ({ version: 0, id, createdAt: TIME }) as const;

/**
 * Reads `id` page by page from `fromSeq`, each page asking from the seq after the last, until a
 * page holds fewer than `limit` events.
 */
export async function readPages(
  backend: SessionBackend,
  id: string,
  fromSeq: number,
  limit: number,
): Promise<StoredSuffix[]> {
  const pages: StoredSuffix[] = [];
  for (let seq = fromSeq; ; ) {
    const page = await backend.loadFrom(id, seq, limit);
    if (page === undefined) throw new Error(`expected session ${id} to be stored`);
    pages.push(page);
    if (page.events.length < limit) return pages;
    seq = page.from + page.events.length;
  }
}

/**
 * The paging cases of `loadFrom(id, fromSeq, limit)`, each over a fresh harness.
 *
 * Seen failing, in both backends: with the LIMIT left out of eventLines and sessionFrom (every row
 * read), all four (a first page of the whole log; a torn tail told on a full page); with the
 * next-turn/end lookup left out, the third (a page ending at the bad row answered as a torn tail).
 */
export function runLoadFromPages(fresh: () => Promise<PagedHarness>): void {
  describe("loadFrom with a page limit", () => {
    it("reads a whole log page by page, for every page size, equal to the whole read", async () => {
      const { backend } = await fresh();
      const log = balancedLog(4);
      await backend.create(HEADER("p"), serializeEvents(log));
      for (const limit of [1, 2, 3, TURN, log.length - 1, log.length, log.length + 5]) {
        for (const start of [0, 5]) {
          const pages = await readPages(backend, "p", start, limit);
          expect(
            pages.flatMap((p) => p.events),
            `limit ${limit} from ${start}`,
          ).toEqual(log.slice(start));
          expect(pages.map((p) => p.from)).toEqual(pages.map((_, i) => start + i * limit));
          expect(pages.slice(0, -1).every((p) => p.events.length === limit)).toBe(true);
          expect(pages.every((p) => !p.tornTail)).toBe(true);
        }
      }
      // Without a limit, loadFrom reads every event as before.
      expect((await backend.loadFrom("p", 5))?.events).toEqual(log.slice(5));
      await expect(backend.loadFrom("p", 0, 0)).rejects.toMatchObject({ code: "INVALID_PARAMS" });
      await expect(backend.loadFrom("p", 0, 1.5)).rejects.toMatchObject({
        code: "INVALID_PARAMS",
      });
    });

    it("says no torn tail on a full page that ends exactly at the end; the next page, empty, tells", async () => {
      const { backend, tearTail } = await fresh();
      const log = balancedLog(2);
      const end = log.length;
      await backend.create(HEADER("e"), serializeEvents(log));
      const full = { header: HEADER("e"), events: log.slice(end - 3), tornTail: false };
      expect(await backend.loadFrom("e", end - 3, 3)).toEqual({ ...full, from: end - 3 });
      expect(await backend.loadFrom("e", end, 3)).toMatchObject({ events: [], tornTail: false });
      await tearTail("e");
      expect(await backend.loadFrom("e", end - 3, 3)).toEqual({ ...full, from: end - 3 });
      expect(await backend.loadFrom("e", end - 3, 4)).toMatchObject({
        events: log.slice(end - 3),
        tornTail: true,
      });
      expect(await backend.loadFrom("e", end, 3)).toMatchObject({
        events: [],
        tornTail: true,
        from: end,
      });
    });

    it("reports a bad row inside a page as CORRUPT_LOG when a turn/end follows it, even past the page", async () => {
      const { backend, garble } = await fresh();
      const log = balancedLog(3);
      await backend.create(HEADER("c"), serializeEvents(log));
      await garble("c", 2);
      // The page before the damage never reads it: that is the next page's to report.
      expect(await backend.loadFrom("c", 0, 2)).toMatchObject({
        events: log.slice(0, 2),
        tornTail: false,
      });
      // Pages that reach seq 2, ending at it or before the turn/end at seq TURN - 1.
      for (const [fromSeq, limit] of [
        [0, 3],
        [2, 1],
        [1, TURN - 3],
        [0, TURN + 2],
      ] as const) {
        await expect(
          backend.loadFrom("c", fromSeq, limit),
          `from ${fromSeq}, limit ${limit}`,
        ).rejects.toMatchObject({ code: "CORRUPT_LOG", details: { seq: 2 } });
      }
      await expect(backend.loadFrom("c", 0)).rejects.toMatchObject({ code: "CORRUPT_LOG" });
    });

    it("reports a torn tail only on the page that reaches it, whatever the page size", async () => {
      const { backend, garble } = await fresh();
      const log = [...simpleTurn(0, 1), turnStart(TURN, 2), userMessage(TURN + 1, "a")];
      const bad = log.length;
      await backend.create(HEADER("t"), serializeEvents([...log, userMessage(bad, "b")]));
      await garble("t", bad);
      for (const limit of [1, 2, 3, 4, bad, bad + 1]) {
        const pages = await readPages(backend, "t", 0, limit);
        expect(
          pages.flatMap((p) => p.events),
          `limit ${limit}`,
        ).toEqual(log);
        expect(pages.map((p) => p.tornTail)).toEqual(pages.map((_, i) => i === pages.length - 1));
      }
    });
  });
}
