// Contract cases for search: which text matches, folding, phrases, AND, cwd, paging, and an index that follows every write.
import assert from "node:assert/strict";
import type { SessionEvent, SessionSearchResult } from "../../generated.js";
import { foldForSearch, searchTerms } from "../../log/search-text.js";
import type { SessionBackend } from "../../store/backend.js";
import { SessionStore } from "../../store/session-store.js";
import { BASE_TIME, balancedTurn, TURN_LENGTH } from "../events.js";
import { rejectsWithCode } from "../expect.js";
import type { CaseRegistry } from "../registry.js";

/** The texts of one {@link balancedTurn}, replaced. */
interface TurnTexts {
  readonly prompt?: string;
  readonly answer?: string;
  readonly toolArguments?: string;
  readonly output?: string;
}

/**
 * Each turn {@link sayingTurn} makes is stamped a second after the one before: sessions made in
 * turn are active in that order, and search (which goes in list order, by last activity) finds
 * the last made first.
 */
let lastStamp = BASE_TIME;

/** A balanced turn from seq 0 (user/message at 1, assistant/message at 4, tool/call at 5, tool/result at 6) with these texts. */
function sayingTurn(texts: TurnTexts): SessionEvent[] {
  lastStamp += 1000;
  const stamp = lastStamp;
  return balancedTurn(0, 1).map((event) => {
    const e = structuredClone(event) as unknown as {
      type: string;
      time: number;
      data: Record<string, unknown>;
    };
    e.time += stamp - BASE_TIME;
    if (e.type === "user/message" && texts.prompt !== undefined) {
      e.data.content = [{ type: "text", text: texts.prompt }];
    }
    if (e.type === "assistant/message" && texts.answer !== undefined) {
      e.data.content = [{ type: "text", text: texts.answer }];
    }
    if (e.type === "tool/call" && texts.toolArguments !== undefined) {
      e.data.arguments = texts.toolArguments;
    }
    if (e.type === "tool/result" && texts.output !== undefined) {
      e.data.content = [{ type: "text", text: texts.output }];
    }
    return e as unknown as SessionEvent;
  });
}

/** A store over `backend` whose sessions are created one millisecond apart, in call order. */
function storeOver(backend: SessionBackend): SessionStore {
  let now = BASE_TIME;
  return new SessionStore({ backend, now: () => now++ });
}

async function saying(
  store: SessionStore,
  id: string,
  texts: TurnTexts,
  cwd = "/work",
): Promise<void> {
  await store.create({ id, meta: { cwd }, seed: sayingTurn(texts) });
}

/** The ids of a result page. */
function ids(result: SessionSearchResult): string[] {
  return result.results.map((r) => r.sessionId);
}

/** Checks that every highlight of every excerpt covers text that folds to one of the query's terms. */
function assertHighlights(result: SessionSearchResult, query: string): void {
  const terms = searchTerms(query);
  for (const { excerpts } of result.results) {
    for (const { text, highlight } of excerpts) {
      assert.ok(highlight.length > 0, `expected a highlight in ${JSON.stringify(text)}`);
      for (const { start, end } of highlight) {
        const marked = foldForSearch(text.slice(start, end));
        assert.ok(
          terms.includes(marked),
          `expected ${JSON.stringify(marked)} to be a term of ${query}`,
        );
      }
    }
  }
}

/** Registers the search cases. */
export function searchCases(cases: CaseRegistry): void {
  cases.add(
    "search finds user, assistant and tool text, with the matching event's seq",
    async (storage) => {
      const store = storeOver(await storage.open());
      await saying(store, "s-user", { prompt: "please find the zebra" });
      await saying(store, "s-answer", { answer: "a zebra it is" });
      await saying(store, "s-args", { toolArguments: '{"cmd":"grep zebra"}' });
      await saying(store, "s-output", { output: "zebra.txt\nlion.txt" });
      await saying(store, "s-none", { prompt: "nothing here" });
      const result = await store.search({ query: "zebra" });
      assert.deepStrictEqual(ids(result), ["s-output", "s-args", "s-answer", "s-user"]);
      const seqs = Object.fromEntries(
        result.results.map((r) => [r.sessionId, r.excerpts.map((e) => e.seq)]),
      );
      assert.deepStrictEqual(seqs, {
        "s-output": [6],
        "s-args": [5],
        "s-answer": [4],
        "s-user": [1],
      });
      assert.equal(result.nextCursor, undefined);
      assert.equal(
        result.results.find((r) => r.sessionId === "s-user")?.title,
        "please find the zebra",
      );
      assertHighlights(result, "zebra");
      // The tool's name is searched too.
      assert.equal((await store.search({ query: "bash" })).results.length, 5);
    },
  );

  cases.add("search ignores case and accents, in the text and in the query", async (storage) => {
    const store = storeOver(await storage.open());
    await saying(store, "s1", { prompt: "Une Crème BRÛLÉE, s'il vous plaît" });
    for (const query of ["creme brulee", "CRÈME", "Brûlée", "CREME BRULEE"]) {
      const result = await store.search({ query });
      assert.deepStrictEqual(ids(result), ["s1"], query);
      assertHighlights(result, query);
    }
    const [excerpt] = (await store.search({ query: "brulee" })).results[0]?.excerpts ?? [];
    const span = excerpt?.highlight[0];
    assert.equal(span && excerpt.text.slice(span.start, span.end), "BRÛLÉE");
  });

  cases.add(
    "search matches a quoted phrase whole, and every term in one event",
    async (storage) => {
      const store = storeOver(await storage.open());
      await saying(store, "s1", { prompt: "red apple green pear", answer: "banana split" });
      assert.deepStrictEqual(ids(await store.search({ query: '"apple green"' })), ["s1"]);
      assert.deepStrictEqual(ids(await store.search({ query: '"green apple"' })), []);
      assert.deepStrictEqual(ids(await store.search({ query: "pear apple" })), ["s1"]);
      // Every term in one event: the prompt has "apple", the answer has "banana".
      assert.deepStrictEqual(ids(await store.search({ query: "apple banana" })), []);
      // Terms shorter than three characters match as substrings too.
      assert.deepStrictEqual(ids(await store.search({ query: "ba sp" })), ["s1"]);
    },
  );

  cases.add("search filters by cwd", async (storage) => {
    const store = storeOver(await storage.open());
    await saying(store, "s-a", { prompt: "walrus" }, "/a");
    await saying(store, "s-b", { prompt: "walrus" }, "/b");
    assert.deepStrictEqual(ids(await store.search({ query: "walrus", cwd: "/a" })), ["s-a"]);
    assert.deepStrictEqual(ids(await store.search({ query: "walrus" })), ["s-b", "s-a"]);
  });

  cases.add("search pages in list order with the cursor it gives", async (storage) => {
    const store = storeOver(await storage.open());
    for (let i = 0; i < 7; i++) {
      await saying(store, `p${i}`, { prompt: i % 3 === 1 ? "nothing" : `otter ${i}` });
    }
    const listed = (await store.list()).sessions.map((s) => s.header.id);
    const expected = listed.filter((id) => id !== "p1" && id !== "p4");
    const found: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await store.search({ query: "otter", limit: 2, ...(cursor ? { cursor } : {}) });
      assert.ok(page.results.length <= 2);
      found.push(...ids(page));
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    assert.deepStrictEqual(found, expected);
    await rejectsWithCode(
      store.search({ query: "otter", cursor: "not-a-cursor" }),
      "INVALID_PARAMS",
      "a cursor search never gave",
    );
    await rejectsWithCode(store.search({ query: '" "' }), "INVALID_PARAMS", "a query of no term");
    await rejectsWithCode(
      store.search({ query: "otter", limit: 101 }),
      "INVALID_PARAMS",
      "a limit above 100",
    );
  });

  cases.add(
    "search goes in list order, most recent activity first, not in creation order",
    async (storage) => {
      // Failed on every backend before: search went in creation order (s-late first).
      const store = storeOver(await storage.open());
      await saying(store, "s-early", { prompt: "heron early" });
      await saying(store, "s-late", { prompt: "heron late" });
      await saying(store, "s-other", { prompt: "nothing" });
      // The session made first is the last active: it comes first, as in list.
      const later = sayingTurn({ prompt: "heron again" }).map((e) => ({
        ...e,
        seq: e.seq + TURN_LENGTH,
        data: { ...(e.data as object), ...("turn" in e.data ? { turn: 2 } : {}) },
      }));
      await store.append("s-early", later as SessionEvent[]);
      const listed = (await store.list()).sessions.map((s) => s.header.id);
      assert.deepStrictEqual(listed, ["s-early", "s-other", "s-late"]);
      assert.deepStrictEqual(ids(await store.search({ query: "heron" })), ["s-early", "s-late"]);
      const first = await store.search({ query: "heron", limit: 1 });
      assert.deepStrictEqual(ids(first), ["s-early"]);
      assert.ok(first.nextCursor !== undefined);
      const second = await store.search({ query: "heron", limit: 1, cursor: first.nextCursor });
      assert.deepStrictEqual(ids(second), ["s-late"]);
      assert.equal(second.nextCursor, undefined);
    },
  );

  cases.add("search follows appends, forks and deletes", async (storage) => {
    const store = storeOver(await storage.open());
    await saying(store, "s1", { prompt: "narwhal" });
    await store.fork("s1", { boundary: 8, childSessionId: "child" });
    // Both last active at s1's seq 8: list order breaks the tie by id, descending.
    assert.deepStrictEqual(ids(await store.search({ query: "narwhal" })), ["s1", "child"]);
    const more = sayingTurn({ prompt: "a later beluga" }).map((e, i) => ({
      ...e,
      seq: 9 + i,
      data: { ...(e.data as object), ...("turn" in e.data ? { turn: 2 } : {}) },
    }));
    await store.append("s1", more);
    const beluga = await store.search({ query: "beluga" });
    assert.deepStrictEqual(ids(beluga), ["s1"]);
    assert.deepStrictEqual(
      beluga.results[0]?.excerpts.map((e) => e.seq),
      [10],
    );
    await store.delete("s1");
    assert.deepStrictEqual(ids(await store.search({ query: "narwhal" })), ["child"]);
    assert.deepStrictEqual(ids(await store.search({ query: "beluga" })), []);
  });

  cases.add("search finds what another instance stored, and after reopening", async (storage) => {
    const first = await storage.open();
    await saying(storeOver(first), "s1", { output: "platypus" });
    await storage.close(first);
    const second = storeOver(await storage.open());
    assert.deepStrictEqual(ids(await second.search({ query: "platypus" })), ["s1"]);
  });

  cases.add(
    "search shows at most three excerpts a session, each cut short around its match",
    async (storage) => {
      const store = storeOver(await storage.open());
      const long = `${"lorem ipsum ".repeat(40)}ibis ${"dolor sit ".repeat(40)}`;
      await saying(store, "s1", {
        prompt: long,
        answer: "ibis",
        toolArguments: '{"q":"ibis"}',
        output: "ibis",
      });
      const [hit] = (await store.search({ query: "ibis" })).results;
      assert.deepStrictEqual(
        hit?.excerpts.map((e) => e.seq),
        [1, 4, 5],
      );
      const first = hit?.excerpts[0];
      assert.ok(first !== undefined && first.text.length <= 200, "expected a short excerpt");
      assert.ok(first.text.startsWith("…") && first.text.endsWith("…"));
      assertHighlights(await store.search({ query: "ibis" }), "ibis");
    },
  );
}
