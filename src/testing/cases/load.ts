// Contract cases for load, loadFrom, loadSettled and has: missing sessions, suffixes, a shorter log, own copies.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import { serializeEvents } from "../../log/serialized-event.js";
import { balancedLog, header, openTurn, TURN_LENGTH } from "../events.js";
import { assertStored, assertSuffix } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/**
 * Balanced turns whose tool outputs are `sizes` long (of characters two bytes wide in UTF-8
 * every tenth, so that bytes and code units differ).
 */
function bigOutputLog(sizes: readonly number[]): SessionEvent[] {
  const events = balancedLog(sizes.length);
  return events.map((event, seq) => {
    if (event.type !== "tool/result") return event;
    const size = sizes[event.data.turn - 1] ?? 0;
    const text = "abcdefghi\u00e9".repeat(Math.ceil(size / 10)).slice(0, size);
    const data = { ...event.data, content: [{ type: "text" as const, text }] };
    return { ...event, seq, data };
  });
}

/** Registers the read cases. */
export function loadCases(cases: CaseRegistry): void {
  cases.add(
    "load, loadFrom and forkPoint answer undefined for a missing session; has answers false",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("other"), serializeEvents(balancedLog(1)));
      assert.equal(await backend.load("missing"), undefined);
      assert.equal(await backend.loadFrom("missing", 0), undefined);
      assert.equal(await backend.loadFrom("missing", 3), undefined);
      assert.equal(await backend.forkPoint("missing", undefined), undefined);
      assert.equal(await backend.has("missing"), false);
    },
  );

  cases.add(
    "loadFrom answers the events from the asked seq on, none at the end, from any instance",
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      const events = balancedLog(2);
      await writer.create(header("suffix"), serializeEvents(events.slice(0, TURN_LENGTH)));
      await assertSuffix(reader, "suffix", 0, 0, events.slice(0, TURN_LENGTH));
      await assertSuffix(reader, "suffix", TURN_LENGTH, TURN_LENGTH, []);
      await writer.append("suffix", TURN_LENGTH, serializeEvents(events.slice(TURN_LENGTH)));
      for (const fromSeq of [0, 4, TURN_LENGTH, 2 * TURN_LENGTH - 1, 2 * TURN_LENGTH]) {
        await assertSuffix(reader, "suffix", fromSeq, fromSeq, events.slice(fromSeq));
      }
    },
  );

  // A backend that reads its page whole and lets the caller cut it fails here at once: for
  // maxBytes 1 it answers every event of the page (24,374 bytes of them).
  cases.add(
    "loadFrom with maxBytes answers pages bounded by bytes: within the budget or one event, cut only before an event that would pass it, adding up to the whole log; a maxBytes that is not a positive integer is INVALID_PARAMS",
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      const events = bigOutputLog([3000, 40, 9000, 500, 7000]);
      await writer.create(header("bytes"), serializeEvents(events));
      const dataBytes = (e: SessionEvent) => Buffer.byteLength(JSON.stringify(e.data), "utf8");
      const lineBytes = (e: SessionEvent) => Buffer.byteLength(JSON.stringify(e), "utf8") + 1;
      const sum = (page: readonly SessionEvent[], size: (e: SessionEvent) => number) =>
        page.reduce((total, e) => total + size(e), 0);
      for (const maxBytes of [1, 2500, 6000, 12_000, 1 << 30]) {
        for (const limit of [undefined, 4]) {
          for (const start of [0, 2, 7]) {
            const read: unknown[] = [];
            for (let seq = start; seq < events.length; ) {
              const page = await reader.loadFrom("bytes", seq, limit, maxBytes);
              const call = `loadFrom("bytes", ${seq}, ${limit}, ${maxBytes})`;
              assert.ok(page !== undefined, `expected ${call} to find the session`);
              assert.equal(page.from, seq, `expected ${call} to answer from ${seq}`);
              const got = page.events as SessionEvent[];
              assert.ok(got.length >= 1, `expected ${call} to answer at least one event`);
              if (got.length > 1) {
                assert.ok(
                  sum(got, dataBytes) <= maxBytes,
                  `expected ${call} to hold at most ${maxBytes} bytes of events, got ${sum(got, dataBytes)}`,
                );
              }
              const next = events[seq + got.length];
              if (page.cut === true) {
                assert.ok(next !== undefined, `expected ${call} to be cut only before an event`);
                assert.ok(
                  sum(got, lineBytes) + lineBytes(next) > maxBytes,
                  `expected ${call} to be cut only before an event that would pass ${maxBytes}`,
                );
              } else if (limit === undefined || got.length < limit) {
                assert.equal(next, undefined, `expected ${call} uncut to reach the end`);
              }
              read.push(...got);
              seq += got.length;
            }
            assert.deepStrictEqual(read, events.slice(start), `pages of ${maxBytes} from ${start}`);
          }
        }
      }
      for (const maxBytes of [0, -1, 1.5]) {
        await assert.rejects(reader.loadFrom("bytes", 0, 10, maxBytes), { code: "INVALID_PARAMS" });
      }
    },
  );

  cases.add(
    "loadFrom answers the whole log with from 0 when the stored log is shorter than the asked seq",
    async (storage) => {
      const backend = await storage.open();
      const h = header("short");
      await backend.create(h, serializeEvents(balancedLog(2)));
      await assertSuffix(backend, "short", 2 * TURN_LENGTH + 1, 0, balancedLog(2));
      assert.equal(await backend.delete("short"), true);
      const again = header("short", { cwd: "/again" });
      await backend.create(again, serializeEvents(balancedLog(1)));
      await assertSuffix(backend, "short", 2 * TURN_LENGTH, 0, balancedLog(1));
      const suffix = await backend.loadFrom("short", 2 * TURN_LENGTH);
      assert.deepStrictEqual(suffix?.header, again, "expected loadFrom to answer the new header");
    },
  );

  cases.add(
    "keeps its own copies: events changed by the caller after create or after a load leave the stored log as it was",
    async (storage) => {
      const backend = await storage.open();
      const h = header("copies");
      const given = balancedLog(1);
      await backend.create(h, serializeEvents(given));
      (given[0] as { time: number }).time = 1;
      const first = await backend.load("copies");
      assert.ok(first !== undefined);
      (first.events[1] as { time: number }).time = 2;
      (first.header as { createdAt: number }).createdAt = 3;
      await assertStored(backend, "copies", h, balancedLog(1));
    },
  );
  cases.add(
    "loadSettled, where a backend has it, answers the message-producing events before the last turn/end; the last turn/end and page it may read along equal what loadFrom answers",
    async (storage) => {
      const backend = await storage.open();
      const loadSettled = backend.loadSettled?.bind(backend);
      // Optional: a backend without it is read with loadFrom, which the other cases check.
      if (loadSettled === undefined) return;
      const settled = balancedLog(2);
      const logs: Record<string, SessionEvent[]> = {
        settled,
        open: [...settled, ...openTurn(settled.length, 3)],
        unsettled: openTurn(0, 1),
        empty: [],
      };
      for (const [id, events] of Object.entries(logs)) {
        await backend.create(header(id), serializeEvents(events));
      }
      for (const [id, events] of Object.entries(logs)) {
        const end = events.findLastIndex((e) => e.type === "turn/end") + 1;
        const surface = events.slice(0, end).filter((e) => "surfaceOp" in e);
        for (const tailLimit of [undefined, 1, 2, 1000]) {
          const part = await loadSettled(id, tailLimit);
          assert.ok(part !== undefined, `expected loadSettled to find ${id}`);
          assert.deepStrictEqual(part.header, header(id), `${id}: the header`);
          assert.equal(part.settled, end, `${id}: the seq after the last turn/end`);
          assert.deepStrictEqual(part.events, surface, `${id}: the message-producing events`);
          if (part.tail === undefined) {
            assert.equal(part.end, undefined, `${id}: expected no end without a tail`);
            continue;
          }
          assert.ok(tailLimit !== undefined, `${id}: expected no tail without a tail limit`);
          assert.deepStrictEqual(part.end, end > 0 ? events[end - 1] : undefined, `${id}: end`);
          assert.deepStrictEqual(
            part.tail,
            await backend.loadFrom(id, end, tailLimit),
            `${id}: expected the tail of limit ${tailLimit} to equal loadFrom's page`,
          );
        }
      }
      assert.equal(await loadSettled("missing", 10), undefined);
    },
  );
}
