// Contract cases for text SQL stores unlike JSON (U+0000, lone surrogates, U+10FFFF): stored, titled and found alike on every backend.
import assert from "node:assert/strict";
import type { SessionEvent, SessionSearchResult } from "../../generated.js";
import type { SessionBackend } from "../../store/backend.js";
import { catalogOf } from "../../store/listing/scan-catalog.js";
import { SessionStore } from "../../store/session-store.js";
import { BASE_TIME, balancedTurn, header, TURN_LENGTH } from "../events.js";
import { rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** A balanced turn from `fromSeq` (turn `turn`) whose prompt, answer and tool output hold `texts`. */
function turnSaying(
  fromSeq: number,
  turn: number,
  texts: { prompt: string; answer: string; output: string },
): SessionEvent[] {
  return balancedTurn(fromSeq, turn).map((event) => {
    const e = structuredClone(event) as unknown as { type: string; data: Record<string, unknown> };
    const text = (value: string) => [{ type: "text", text: value }];
    if (e.type === "user/message") e.data.content = text(texts.prompt);
    if (e.type === "assistant/message") e.data.content = text(texts.answer);
    if (e.type === "tool/result") e.data.content = text(texts.output);
    return e as unknown as SessionEvent;
  });
}

/** The texts of a session holding none of the others' words. */
const PLAIN = { prompt: "plain prompt", answer: "plain answer", output: "plain output" };

/** The ids of a result page. */
function ids(result: SessionSearchResult): string[] {
  return result.results.map((r) => r.sessionId);
}

/** The marked texts of a result page's excerpts, by session. */
function marked(result: SessionSearchResult): Record<string, string[]> {
  return Object.fromEntries(
    result.results.map((r) => [
      r.sessionId,
      r.excerpts.flatMap((e) => e.highlight.map((h) => e.text.slice(h.start, h.end))),
    ]),
  );
}

/** Registers the cases for text the SQL backends store unlike JSON. */
export function textParityCases(cases: CaseRegistry): void {
  cases.add(
    "text holding U+0000 is stored, titled and found alike, before and after reopening",
    async (storage) => {
      // Failed before U+0000 folded to a space: PostgreSQL refused the create (invalid byte
      // sequence for encoding "UTF8": 0x00, the derived title), SQLite every query holding it
      // (FTS5: unterminated string), JSONL and memory kept U+0000 in the title.
      const store = new SessionStore({ backend: await storage.open(), now: () => BASE_TIME });
      // The first prompt holds U+0000: the title derived from it is stored with the session.
      const first = turnSaying(0, 1, {
        prompt: "null\u0000byte prompt",
        answer: "an answer",
        output: "out\u0000put",
      });
      await store.create({ id: "s-nul", seed: first });
      await store.create({ id: "s-plain", seed: turnSaying(0, 1, PLAIN) });
      const expectFound = async (search: SessionStore) => {
        const nul = await search.search({ query: "null\u0000byte" });
        assert.deepStrictEqual(ids(nul), ["s-nul"]);
        assert.deepStrictEqual(
          nul.results[0]?.excerpts.map((e) => e.seq),
          [1],
        );
        assert.deepStrictEqual(marked(nul), { "s-nul": ["null\u0000byte"] });
        assert.equal(nul.results[0]?.title, "null byte prompt");
        // U+0000 matches as white space does: a space in the query finds it too.
        assert.deepStrictEqual(ids(await search.search({ query: '"null byte"' })), ["s-nul"]);
        assert.deepStrictEqual(ids(await search.search({ query: "out\u0000put" })), ["s-nul"]);
        assert.deepStrictEqual(ids(await search.search({ query: "plain" })), ["s-plain"]);
        assert.equal(await search.title("s-nul"), "null byte prompt");
        // The events come back as they went in, U+0000 and all.
        const page = await search.read("s-nul", { fromSeq: 0 });
        assert.deepStrictEqual(page.events.slice(0, TURN_LENGTH), first);
      };
      await expectFound(store);
      // Appended after a search: the next search makes the texts of what waits, U+0000 and all.
      await store.append(
        "s-nul",
        turnSaying(TURN_LENGTH, 2, {
          prompt: "second\u0000prompt",
          answer: "\u0000",
          output: "\u0000\u0000",
        }),
      );
      assert.deepStrictEqual(ids(await store.search({ query: "second\u0000prompt" })), ["s-nul"]);
      await expectFound(store);
      // A query of U+0000 alone has no term, as a query of spaces alone.
      await rejectsWithCode(
        store.search({ query: "\u0000" }),
        "INVALID_PARAMS",
        "a query of U+0000 alone",
      );
      const reopened = new SessionStore({ backend: await storage.open() });
      await expectFound(reopened);
      assert.deepStrictEqual(ids(await reopened.search({ query: "second\u0000prompt" })), [
        "s-nul",
      ]);
    },
  );

  cases.add(
    "setTitle refuses a lone surrogate (INVALID_PARAMS), as ids refuse one, and keeps a pair",
    async (storage) => {
      // Failed before: every backend stored the title (SQLite and PostgreSQL as U+FFFD).
      const store = new SessionStore({ backend: await storage.open() });
      await store.create({ id: "titled" });
      for (const title of ["lone \uD800", "\uDC00 lone", "swapped \uDC00\uD800"]) {
        await rejectsWithCode(
          store.setTitle("titled", title),
          "INVALID_PARAMS",
          `a title of ${JSON.stringify(title)}`,
        );
      }
      assert.equal(await store.title("titled"), undefined);
      await store.setTitle("titled", "paired \uD83D\uDE80");
      const again = new SessionStore({ backend: await storage.open() });
      assert.equal(await again.title("titled"), "paired 🚀");
    },
  );

  cases.add(
    "idsWithPrefix finds an id with U+10FFFF after the prefix like any other, and resolveId calls the prefix ambiguous",
    async (storage) => {
      // Failed on PostgreSQL before: its range ended at the prefix followed by U+10FFFF, so
      // idsWithPrefix("abcd") found abcd-1 alone, and resolveId named it.
      const backend: SessionBackend = await storage.open();
      for (const id of ["abcd\u{10FFFF}x", "abcd-1", "abce", "\u{10FFFF}\u{10FFFF}z", "zz"]) {
        await backend.create(header(id), []);
      }
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("abcd", 10), {
        ids: ["abcd-1", "abcd\u{10FFFF}x"],
        count: 2,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("abcd\u{10FFFF}", 10), {
        ids: ["abcd\u{10FFFF}x"],
        count: 1,
      });
      assert.deepStrictEqual(await catalogOf(backend).idsWithPrefix("\u{10FFFF}\u{10FFFF}", 10), {
        ids: ["\u{10FFFF}\u{10FFFF}z"],
        count: 1,
      });
      const store = new SessionStore({ backend });
      await rejectsWithCode(store.resolveId("abcd"), "AMBIGUOUS_ID", "the prefix abcd");
      assert.equal(await store.resolveId("abcd\u{10FFFF}"), "abcd\u{10FFFF}x");
    },
  );

  cases.add(
    "a cwd holding U+0000 is refused alike (INVALID_PARAMS) to create, fork, import, list and search",
    async (storage) => {
      // Failed before on PostgreSQL alone: create, fork and the list and search filters answered
      // a raw pg error (22021, invalid byte sequence for encoding "UTF8": 0x00, mapped to
      // INTERNAL) while SQLite, JSONL and memory stored or matched the cwd.
      const store = new SessionStore({ backend: await storage.open(), now: () => BASE_TIME });
      const cwd = "/work/nul\u0000dir";
      await rejectsWithCode(
        store.create({ id: "c-nul", meta: { cwd } }),
        "INVALID_PARAMS",
        "a create whose cwd holds U+0000",
      );
      await store.create({ id: "c-ok", meta: { cwd: "/work/ok" } });
      await rejectsWithCode(
        store.fork("c-ok", { childSessionId: "c-child", cwd }),
        "INVALID_PARAMS",
        "a fork whose cwd holds U+0000",
      );
      const header = JSON.stringify({
        type: "session",
        version: 0,
        id: "c-imported",
        createdAt: 1,
        cwd,
      });
      await rejectsWithCode(
        store.importLog(`${header}\n`),
        "INVALID_PARAMS",
        "an imported header whose cwd holds U+0000",
      );
      await rejectsWithCode(store.list({ cwd }), "INVALID_PARAMS", "a list filter holding U+0000");
      await rejectsWithCode(
        store.search({ query: "anything", cwd }),
        "INVALID_PARAMS",
        "a search filter holding U+0000",
      );
      const listed = await store.list({});
      assert.deepStrictEqual(
        listed.sessions.map((s) => s.header.id),
        ["c-ok"],
      );
    },
  );
}
