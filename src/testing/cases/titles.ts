// Contract cases for titles, activity order and id prefixes.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import { parseHeaderLine } from "../../log/jsonl-codec.js";
import { serializeEvents } from "../../log/serialized-event.js";
import type { ListOrder, SessionBackend } from "../../store/backend.js";
import { catalogOf } from "../../store/listing/scan-catalog.js";
import { BASE_TIME, balancedLog, balancedTurn, header, TURN_LENGTH } from "../events.js";
import { rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";
import type { ContractCorpusLog } from "../types.js";

/**
 * A prompt with runs of white space, a ZWJ emoji sequence (one grapheme, two columns) and CJK
 * (two columns each), and the title it gives: one line, cut to 80 columns with the ellipsis —
 * "Fix the bug 🚀👩‍👩‍👧 " takes 17 columns, so 31 CJK characters (62) fit before the "…".
 */
export const WIDE_PROMPT = `Fix   the\n\tbug 🚀👩‍👩‍👧 ${"漢".repeat(50)}`;
export const WIDE_TITLE = `Fix the bug 🚀👩‍👩‍👧 ${"漢".repeat(31)}…`;

/** A user/message event at `seq` whose one text block is `text` (time `BASE_TIME + seq`). */
export function userMessage(seq: number, text: string): SessionEvent {
  return {
    type: "user/message",
    seq,
    time: BASE_TIME + seq,
    data: { content: [{ type: "text", text }], source: { kind: "user" } },
    surfaceOp: "append",
  };
}

/** `events` with every time moved by `by` milliseconds. */
function shifted(events: readonly SessionEvent[], by: number): SessionEvent[] {
  return events.map((e) => ({ ...e, time: e.time + by }));
}

/** The ids of one whole listing in `order`, page by page (`limit` a page). */
async function listedIds(
  backend: SessionBackend,
  order: ListOrder,
  limit: number,
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = await catalogOf(backend).list({
      limit,
      order,
      ...(cursor === undefined ? {} : { cursor }),
    });
    ids.push(...page.sessions.map((s) => s.header.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return ids;
  }
  assert.fail("expected list to stop giving a nextCursor within 50 pages");
}

/** The corpus log's header and events with its first user message's text replaced by `text`. */
function retitled(log: ContractCorpusLog, text: string) {
  const [head = "", ...rest] = log.text.trimEnd().split("\n");
  let replaced = false;
  const events = rest.map((line) => {
    const event = JSON.parse(line) as SessionEvent;
    if (replaced || event.type !== "user/message") return event;
    replaced = true;
    return { ...event, data: { ...event.data, content: [{ type: "text" as const, text }] } };
  });
  return replaced ? { header: parseHeaderLine(head, log.name), events } : undefined;
}

/** Registers the title, activity-order and id-prefix cases. */
export function titleCases(cases: CaseRegistry, corpus: readonly ContractCorpusLog[]): void {
  cases.add(
    "a session is titled by its first user message: one line, cut to 80 columns by grapheme and width",
    async (storage) => {
      const backend = await storage.open();
      const events = [userMessage(0, WIDE_PROMPT), userMessage(1, "second prompt")];
      await backend.create(header("wide"), serializeEvents(events));
      assert.deepStrictEqual(await catalogOf(backend).titles("wide"), { derived: WIDE_TITLE });
      const listed = (await catalogOf(backend).list({ limit: 1 })).sessions[0];
      assert.equal(listed?.title, WIDE_TITLE);
      // A recorded session whose prompt is wide: the title comes from its first user message.
      const log = corpus.map((l) => retitled(l, WIDE_PROMPT)).find((l) => l !== undefined);
      if (log === undefined) return;
      await backend.create({ ...log.header, id: "corpus-wide" }, serializeEvents(log.events));
      assert.deepStrictEqual(await catalogOf(backend).titles("corpus-wide"), {
        derived: WIDE_TITLE,
      });
      const other = await storage.open();
      assert.deepStrictEqual(await catalogOf(other).titles("corpus-wide"), { derived: WIDE_TITLE });
    },
  );

  cases.add(
    "the derived title comes with the append that stores the first user message, and stays",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("later"), []);
      assert.deepStrictEqual(await catalogOf(backend).titles("later"), {});
      await backend.append(
        "later",
        0,
        serializeEvents(
          balancedLog(1)
            .filter((e) => e.type !== "user/message")
            .map((e, seq) => ({ ...e, seq })),
        ),
      );
      const length = TURN_LENGTH - 1;
      assert.deepStrictEqual(await catalogOf(backend).titles("later"), {});
      await backend.append(
        "later",
        length,
        serializeEvents([userMessage(length, "  first\nprompt ")]),
      );
      await backend.append(
        "later",
        length + 1,
        serializeEvents([userMessage(length + 1, "second prompt")]),
      );
      assert.deepStrictEqual(await catalogOf(backend).titles("later"), { derived: "first prompt" });
      assert.equal(
        (await catalogOf(backend).list({ limit: 1 })).sessions[0]?.title,
        "first prompt",
      );
    },
  );

  cases.add(
    "an explicit title wins, is seen by another instance, and clearing it brings back the derived one",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("named"), serializeEvents([userMessage(0, "derived one")]));
      await catalogOf(backend).setTitle("named", "Explicit 🚀 title");
      const other = await storage.open();
      assert.deepStrictEqual(await catalogOf(other).titles("named"), {
        explicit: "Explicit 🚀 title",
        derived: "derived one",
      });
      assert.equal(
        (await catalogOf(other).list({ limit: 1 })).sessions[0]?.title,
        "Explicit 🚀 title",
      );
      await catalogOf(other).setTitle("named", null);
      assert.deepStrictEqual(await catalogOf(backend).titles("named"), { derived: "derived one" });
      assert.equal((await catalogOf(backend).list({ limit: 1 })).sessions[0]?.title, "derived one");
      // Setting a title leaves the log as it was.
      assert.deepStrictEqual((await backend.load("named"))?.events, [
        userMessage(0, "derived one"),
      ]);
    },
  );

  cases.add(
    "setTitle of a missing session is SESSION_NOT_FOUND; titles of one is undefined; a deleted session's title goes with it",
    async (storage) => {
      const backend = await storage.open();
      await rejectsWithCode(
        catalogOf(backend).setTitle("absent", "x"),
        "SESSION_NOT_FOUND",
        "setTitle",
      );
      assert.equal(await catalogOf(backend).titles("absent"), undefined);
      await backend.create(header("gone"), []);
      await catalogOf(backend).setTitle("gone", "old title");
      await backend.delete("gone");
      await backend.create(header("gone", { createdAt: BASE_TIME + 5 }), []);
      assert.deepStrictEqual(await catalogOf(backend).titles("gone"), {});
    },
  );

  cases.add(
    "a forked child is titled by the first user message of its inherited prefix",
    async (storage) => {
      const backend = await storage.open();
      await backend.create(header("source"), serializeEvents(balancedLog(2)));
      await catalogOf(backend).setTitle("source", "only the source's");
      await backend.fork("source", TURN_LENGTH - 1, header("child", { parentSession: "source" }));
      const derived = (await catalogOf(backend).titles("source"))?.derived;
      assert.ok(derived !== undefined, "expected the source to have a derived title");
      assert.deepStrictEqual(await catalogOf(backend).titles("child"), { derived });
      await backend.fork("source", -1, header("empty-child", { parentSession: "source" }));
      assert.deepStrictEqual(await catalogOf(backend).titles("empty-child"), {});
    },
  );

  cases.add(
    "activity order lists the most recent activity first; an append to an older session moves it up",
    async (storage) => {
      const backend = await storage.open();
      // a: created first, active at +100; b: created second, active at +200; c: no events (+2).
      await backend.create(header("a"), serializeEvents(shifted(balancedLog(1), 100)));
      await backend.create(
        header("b", { createdAt: BASE_TIME + 1 }),
        serializeEvents(shifted(balancedLog(1), 200)),
      );
      await backend.create(header("c", { createdAt: BASE_TIME + 2 }), []);
      assert.deepStrictEqual(await listedIds(backend, "activity", 10), ["b", "a", "c"]);
      assert.deepStrictEqual(await listedIds(backend, "created", 10), ["c", "b", "a"]);
      const page = await catalogOf(backend).list({ limit: 10, order: "activity" });
      assert.deepStrictEqual(
        page.sessions.map((s) => s.updatedAt),
        [BASE_TIME + 200 + TURN_LENGTH - 1, BASE_TIME + 100 + TURN_LENGTH - 1, BASE_TIME + 2],
      );
      await backend.append(
        "a",
        TURN_LENGTH,
        serializeEvents(shifted(balancedTurn(TURN_LENGTH, 2), 300)),
      );
      const other = await storage.open();
      assert.deepStrictEqual(await listedIds(other, "activity", 10), ["a", "b", "c"]);
      assert.deepStrictEqual(await listedIds(other, "created", 10), ["c", "b", "a"]);
    },
  );

  cases.add(
    "activity order pages with its own cursor: no duplicates, no omissions, filters kept; the other order's cursor is INVALID_PARAMS",
    async (storage) => {
      const backend = await storage.open();
      // Ties on activity (pairs of sessions active at the same time) are broken by id.
      for (let i = 0; i < 9; i++) {
        const events = shifted(balancedLog(1), 1000 * Math.floor(i / 2));
        await backend.create(
          header(`p${i}`, { createdAt: BASE_TIME + 9 - i, cwd: i % 3 === 0 ? "/three" : "/w" }),
          serializeEvents(events),
        );
      }
      const expected = ["p8", "p7", "p6", "p5", "p4", "p3", "p2", "p1", "p0"];
      for (const limit of [1, 2, 4, 9, 20]) {
        assert.deepStrictEqual(await listedIds(backend, "activity", limit), expected);
      }
      const inCwd = await catalogOf(backend).list({ limit: 2, order: "activity", cwd: "/three" });
      assert.deepStrictEqual(
        inCwd.sessions.map((s) => s.header.id),
        ["p6", "p3"],
      );
      const created = await catalogOf(backend).list({ limit: 2, order: "created" });
      assert.ok(created.nextCursor !== undefined);
      await rejectsWithCode(
        catalogOf(backend).list({ limit: 2, order: "activity", cursor: created.nextCursor }),
        "INVALID_PARAMS",
        "list in activity order with a created-order cursor",
      );
      const active = await catalogOf(backend).list({ limit: 2, order: "activity" });
      assert.ok(active.nextCursor !== undefined);
      await rejectsWithCode(
        catalogOf(backend).list({ limit: 2, order: "created", cursor: active.nextCursor }),
        "INVALID_PARAMS",
        "list in created order with an activity-order cursor",
      );
    },
  );

  cases.add(
    "idsWithPrefix answers the ids that start with a prefix in byte order, at most limit, with the count of all",
    async (storage) => {
      const backend = await storage.open();
      for (const id of ["abcd-2", "abcd-1", "abce", "ab", "é-1", "é-2", "Abcd"]) {
        await backend.create(header(id), []);
      }
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("abcd", 10), {
        ids: ["abcd-1", "abcd-2"],
        count: 2,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("ab", 2), {
        ids: ["ab", "abcd-1"],
        count: 4,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("abce", 10), {
        ids: ["abce"],
        count: 1,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("é", 10), {
        ids: ["é-1", "é-2"],
        count: 2,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("zz", 10), {
        ids: [],
        count: 0,
      });
    },
  );
}
