// SessionStore over MemoryBackend: header rules, lazy storage, the corpus as seeds, crash repair, list, delete, appends.

import { describe, expect, it } from "vitest";
import {
  MemoryBackend,
  type SessionEvent,
  type SessionHeader,
  type SessionHeaderLine,
  SessionStore,
  StorageError,
} from "../../src/index.js";
import { INTERRUPTED_RESULT_TEXT } from "../../src/log/repair.js";
import { serializeEvents } from "../../src/log/serialized-event.js";
import {
  balancedLog,
  contextMessage,
  simpleTurn,
  stepStart,
  TIME,
  todoWrite,
  toolCall,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";
import { manualClock, openTurnTail, rejectionOf, storeOver } from "../helpers/store-builders.js";

/** Asserts `error` is a StorageError with `code`, and returns its details. */
function storageDetails(error: unknown, code: string): Record<string, unknown> {
  expect(error).toBeInstanceOf(StorageError);
  expect((error as StorageError).code).toBe(code);
  return (error as StorageError).details as Record<string, unknown>;
}

/** Asserts `error` is INVALID_PARAMS naming `instancePath`. */
function expectInvalidParams(error: unknown, instancePath: string): void {
  const details = storageDetails(error, "INVALID_PARAMS") as {
    errors: { instancePath: string }[];
  };
  expect(details.errors.map((e) => e.instancePath)).toContain(instancePath);
}

/** Ten events: one balanced turn (7) and three standalone events after it. */
function tenEvents(): SessionEvent[] {
  return [...simpleTurn(0, 1), todoWrite(7), userMessage(8, "more"), contextMessage(9, "notes")];
}

describe("create: the header", () => {
  it("fills version, id and createdAt from the store's clock", async () => {
    const store = new SessionStore({ now: () => 1234 });
    const session = await store.create({ id: "s" });
    expect(session.header).toEqual({ version: 0, id: "s", createdAt: 1234 });
    expect(await session.readEvents()).toEqual([]);
    expect(session.nextSeq).toBe(0);
  });

  it("takes cwd, parentSession and createdAt from meta", async () => {
    const store = new SessionStore({ now: () => 1234 });
    const session = await store.create({
      id: "s",
      meta: { cwd: "/work/s", parentSession: "p", createdAt: 5 },
    });
    expect(session.header).toEqual({
      version: 0,
      id: "s",
      createdAt: 5,
      cwd: "/work/s",
      parentSession: "p",
    });
  });

  it("never computes seedLength from the seed: ten seed events and no seedLength give none", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: tenEvents() });
    expect(await session.readEvents()).toHaveLength(10);
    expect(session.header).not.toHaveProperty("seedLength");
    expect(session.seedLength).toBe(0);
    expect(await session.ownEvents()).toEqual(tenEvents());
    expect((await store.backend.load("s"))?.header).not.toHaveProperty("seedLength");
  });

  it("writes an explicit seedLength and slices the session's own events there", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: tenEvents(), meta: { seedLength: 7 } });
    expect(session.header.seedLength).toBe(7);
    expect(session.seedLength).toBe(7);
    expect(await session.ownEvents()).toEqual(tenEvents().slice(7));
    const full = await store.create({ id: "full", seed: tenEvents(), meta: { seedLength: 10 } });
    expect(await full.ownEvents()).toEqual([]);
  });

  it("writes no seedLength when it is 0", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: tenEvents(), meta: { seedLength: 0 } });
    expect(session.header).not.toHaveProperty("seedLength");
  });

  it("rejects a seedLength greater than the seed's length: INVALID_PARAMS, nothing stored", async () => {
    const store = new SessionStore();
    expectInvalidParams(
      await rejectionOf(store.create({ id: "s", seed: tenEvents(), meta: { seedLength: 11 } })),
      "/meta/seedLength",
    );
    expectInvalidParams(
      await rejectionOf(store.create({ id: "s", meta: { seedLength: 1 } })),
      "/meta/seedLength",
    );
    expect(await store.get("s")).toBeUndefined();
    expect(await store.backend.has("s")).toBe(false);
  });

  it.each([
    ["a relative path", "work/s"],
    ["a dot path", "./s"],
    ["an empty string", ""],
    ["the {{cwd}} placeholder", "{{cwd}}"],
  ])("rejects %s as cwd: INVALID_PARAMS", async (_what, cwd) => {
    const store = new SessionStore();
    const error = await rejectionOf(store.create({ id: "s", meta: { cwd } }));
    expect((error as StorageError).code).toBe("INVALID_PARAMS");
    expect(await store.get("s")).toBeUndefined();
  });

  it("reports a relative cwd at /meta/cwd", async () => {
    const store = new SessionStore();
    expectInvalidParams(
      await rejectionOf(store.create({ id: "s", meta: { cwd: "work/s" } })),
      "/meta/cwd",
    );
  });

  it.each([
    ["negative", -1],
    ["fractional", 1.5],
    ["beyond the safe integers", 2 ** 53],
    ["NaN", Number.NaN],
    ["infinite", Number.POSITIVE_INFINITY],
  ])("rejects a %s createdAt: INVALID_PARAMS", async (_what, createdAt) => {
    const store = new SessionStore();
    const error = await rejectionOf(store.create({ id: "s", meta: { createdAt } }));
    expect((error as StorageError).code).toBe("INVALID_PARAMS");
    expect(await store.get("s")).toBeUndefined();
  });

  it("rejects a clock that gives an invalid createdAt: INVALID_PARAMS", async () => {
    const store = new SessionStore({ now: () => -5 });
    storageDetails(await rejectionOf(store.create({ id: "s" })), "INVALID_PARAMS");
  });

  it("accepts createdAt 0 and the largest safe integer", async () => {
    const store = new SessionStore();
    expect((await store.create({ id: "a", meta: { createdAt: 0 } })).header.createdAt).toBe(0);
    const max = Number.MAX_SAFE_INTEGER;
    expect((await store.create({ id: "b", meta: { createdAt: max } })).header.createdAt).toBe(max);
  });

  it.each([
    ["empty", ""],
    ["257 UTF-16 units long", "x".repeat(257)],
    ["257 UTF-16 units of surrogate pairs and one more", `${"😀".repeat(128)}x`],
    ["holding NUL", "a\u0000b"],
    ["holding a newline", "a\nb"],
    ["holding U+001F", "a\u001fb"],
    ["holding DEL", "a\u007fb"],
  ])("rejects an id %s: INVALID_PARAMS", async (_what, id) => {
    const store = new SessionStore();
    expectInvalidParams(await rejectionOf(store.create({ id })), "/sessionId");
  });

  it.each([
    ["a parent path", "../x"],
    ["a slash", "a/b"],
    ["a non-ASCII letter", "é"],
    ["256 units", "x".repeat(256)],
    ["128 surrogate pairs (256 units)", "😀".repeat(128)],
    ["the corpus placeholder", "{{sessionId}}"],
  ])("accepts an id with %s, and stores it as given", async (_what, id) => {
    const backend = new MemoryBackend();
    const session = await storeOver(backend).create({ id, seed: [] });
    expect(session.id).toBe(id);
    expect((await storeOver(backend).load(id)).header.id).toBe(id);
  });

  it("rejects a taken id: SESSION_ALREADY_EXISTS, live, stored or stored by another store", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "lazy" });
    await store.create({ id: "seeded", seed: [] });
    await storeOver(backend).create({ id: "elsewhere", seed: tenEvents() });
    for (const id of ["lazy", "seeded", "elsewhere"]) {
      expect(
        storageDetails(await rejectionOf(store.create({ id })), "SESSION_ALREADY_EXISTS"),
      ).toEqual({
        sessionId: id,
      });
      expect(
        storageDetails(await rejectionOf(store.create({ id, seed: [] })), "SESSION_ALREADY_EXISTS"),
      ).toEqual({ sessionId: id });
    }
  });

  it("lets only one of two concurrent creates of one id succeed", async () => {
    const store = new SessionStore();
    const results = await Promise.allSettled([
      store.create({ id: "twice", seed: [] }),
      store.create({ id: "twice", seed: tenEvents() }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    storageDetails(failed?.reason, "SESSION_ALREADY_EXISTS");
  });

  it("rejects a seed that breaks an invariant, storing nothing and leaving the id free", async () => {
    const store = new SessionStore();
    const error = await rejectionOf(
      store.create({ id: "s", seed: [...simpleTurn(0, 1), stepStart(7, 1, 1)] }),
    );
    expect((error as { code: string }).code).toBe("INVALID_EVENT");
    expect((error as { details: unknown }).details).toMatchObject({ seq: 7, index: 7 });
    expect(await store.backend.has("s")).toBe(false);
    await expect(store.create({ id: "s", seed: [] })).resolves.toMatchObject({ id: "s" });
  });

  it("rejects a seed holding an unknown event type: FORMAT_UNSUPPORTED", async () => {
    const store = new SessionStore();
    const unknown = { type: "mystery/event", seq: 0, time: 0, data: {} } as unknown as SessionEvent;
    storageDetails(
      await rejectionOf(store.create({ id: "s", seed: [unknown] })),
      "FORMAT_UNSUPPORTED",
    );
    expect(await store.get("s")).toBeUndefined();
  });

  it("gives a fresh id when none is given", async () => {
    const store = new SessionStore();
    const a = await store.create();
    const b = await store.create();
    expect(a.id).not.toBe(b.id);
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("create: stored at once", () => {
  // Before docs/readers.md's rules, a session created without a seed was stored only at its first append: this
  // test failed there at `backend.has("fresh")` (false) and at the second store's `get` (undefined).
  it("stores a session created without a seed at once, header only, visible to another store", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    const session = await store.create({ id: "fresh", meta: { cwd: "/work/fresh" } });
    expect(await backend.has("fresh")).toBe(true);
    const listed = (await storeOver(backend).list()).sessions;
    expect(listed.map((s) => [s.header, s.eventCount])).toEqual([[session.header, 0]]);
    const other = await storeOver(backend).load("fresh");
    expect(other.header).toEqual(session.header);
    expect(await other.readEvents()).toEqual([]);
    expect(await store.get("fresh")).toBe(session);

    await expect(session.append(simpleTurn(0, 1))).resolves.toBe(7);
    expect(await (await storeOver(backend).load("fresh")).readEvents()).toEqual(simpleTurn(0, 1));
  });

  it("stores a session with a seed at once, even an empty seed", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "empty-seed", seed: [] });
    await store.create({ id: "seeded", seed: tenEvents(), meta: { createdAt: 1 } });
    const listed = (await store.list({ order: "created" })).sessions;
    expect(listed.map((s) => [s.header.id, s.eventCount])).toEqual([
      ["empty-seed", 0],
      ["seeded", 10],
    ]);
    expect(await (await storeOver(backend).load("empty-seed")).readEvents()).toEqual([]);
  });

  it("keeps a created session stored and empty when its first append is rejected", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    const session = await store.create({ id: "fresh" });
    const error = await rejectionOf(session.append([stepStart(0, 1, 1)]));
    expect((error as { code: string }).code).toBe("INVALID_EVENT");
    expect(await (await storeOver(backend).load("fresh")).readEvents()).toEqual([]);
    expect(session.nextSeq).toBe(0);
  });

  it("forks a session that has no events yet into a stored child", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "empty" });
    const child = await storeOver(backend).fork("empty", { childSessionId: "child" });
    expect(child).toMatchObject({ parentSession: "empty" });
    expect(child.seedLength).toBeUndefined();
    expect(await (await storeOver(backend).load("child")).readEvents()).toEqual([]);
  });
});

describe("create: the recorded corpus as seeds", () => {
  const corpus = corpusLogs();

  /** The corpus header's meta; the four `{{cwd}}` placeholders become an absolute path, as new sessions require. */
  function metaOf(header: SessionHeaderLine) {
    return {
      cwd: header.cwd?.startsWith("/") ? header.cwd : "/corpus/placeholder",
      createdAt: header.createdAt,
      ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
      ...(header.seedLength === undefined ? {} : { seedLength: header.seedLength }),
    };
  }

  it.each(corpus.map((log) => [log.name, log] as const))(
    "reconstructs %s with its stored header, through a reload too",
    async (_name, log) => {
      const header = log.header as SessionHeaderLine;
      const events = log.events as SessionEvent[];
      const backend = new MemoryBackend();
      const session = await storeOver(backend).create({
        id: header.id,
        seed: events,
        meta: metaOf(header),
      });
      const { type: _line, ...expected } = { ...header, ...metaOf(header) };
      expect(session.header).toEqual(expected);
      expect(await session.readEvents()).toEqual(events);
      const reloaded = await storeOver(backend).load(header.id);
      expect(reloaded.header).toEqual(expected);
      expect(await reloaded.readEvents()).toEqual(events);
    },
  );

  it("keeps the fork child's stored seedLength 38, not its seed's length 88", async () => {
    const log = corpus.find((l) => l.name === "subagent-fork/session.1.jsonl");
    const header = log?.header as SessionHeaderLine;
    const events = log?.events as SessionEvent[];
    expect(events).toHaveLength(88);
    const backend = new MemoryBackend();
    const session = await storeOver(backend).create({
      id: header.id,
      seed: events,
      meta: metaOf(header),
    });
    expect(session.header.seedLength).toBe(38);
    expect(session.seedLength).toBe(38);
    expect(await session.ownEvents()).toEqual(events.slice(38));
    expect(session.header.parentSession).toBe("f2358dc0-75f8-4649-8440-ab94b8e10dc3");
    const reloaded = await storeOver(backend).load(header.id);
    expect(reloaded.header.seedLength).toBe(38);
    expect(await reloaded.ownEvents()).toHaveLength(50);
  });
});

describe("openForWriting: crash repair", () => {
  /** One balanced turn (0…6), then turn 2 left open with an unanswered call (7…13). */
  function crashedEvents(): SessionEvent[] {
    return [...simpleTurn(0, 1), ...openTurnTail(7, 2, TIME + 99)];
  }
  const header: SessionHeader = { version: 0, id: "crashed", createdAt: 1, cwd: "/work/c" };

  // Before docs/readers.md's rules, `load` took the writer lock and repaired: this failed there with 17 events
  // read and the closers stored by a mere read.
  it("reads an interrupted log as stored, its turn open, and stores nothing", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    const session = await storeOver(backend).load("crashed");
    expect(await session.readEvents()).toEqual(crashedEvents());
    expect(session.openTurn).toBe(2);
    expect((await backend.load("crashed"))?.events).toEqual(crashedEvents());
  });

  it("closes the open turn at the first append, before the batch", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    const store = storeOver(backend);
    const stale = await rejectionOf(store.append("crashed", simpleTurn(14, 3)));
    expect(storageDetails(stale, "SEQ_CONFLICT")).toEqual({ expectedSeq: 17 });
    await expect(store.append("crashed", simpleTurn(17, 3))).resolves.toBe(24);
    expect(
      (await backend.load("crashed"))?.events.slice(14, 17).map((e) => (e as SessionEvent).type),
    ).toEqual(["tool/result", "step/end", "turn/end"]);
  });

  it("appends the closers of the open turn and stores them", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    const session = await storeOver(backend).openForWriting("crashed");
    expect((await session.readEvents()).slice(0, 14)).toEqual(crashedEvents());
    expect((await session.readEvents()).slice(14)).toEqual([
      {
        type: "tool/result",
        seq: 14,
        time: TIME + 99,
        data: {
          turn: 2,
          step: 1,
          callId: "open-2-b",
          content: [{ type: "text", text: INTERRUPTED_RESULT_TEXT }],
          isError: true,
          error: { name: "InterruptedError", code: "interrupted" },
        },
        sourceEventSeqs: [12],
        surfaceOp: "append",
      },
      { type: "step/end", seq: 15, time: TIME + 99, data: { turn: 2, step: 1 } },
      {
        type: "turn/end",
        seq: 16,
        time: TIME + 99,
        data: { turn: 2, reason: { kind: "interrupted" } },
      },
    ]);
    const result = (await session.readEvents())[14] as SessionEvent;
    expect(Object.keys(result)).toEqual([
      "type",
      "seq",
      "time",
      "data",
      "sourceEventSeqs",
      "surfaceOp",
    ]);
    expect(Object.keys(result.data)).toEqual([
      "turn",
      "step",
      "callId",
      "content",
      "isError",
      "error",
    ]);
    expect((await backend.load("crashed"))?.events).toEqual(await session.readEvents());
    expect(session.header).toEqual(header);
  });

  it("stores the repair once: a second load changes nothing", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    await storeOver(backend).openForWriting("crashed");
    const once = await backend.load("crashed");
    const again = await storeOver(backend).openForWriting("crashed");
    expect(await again.readEvents()).toHaveLength(17);
    expect(await backend.load("crashed")).toEqual(once);
  });

  it("continues a later append at the next seq", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    const store = storeOver(backend);
    const session = await store.openForWriting("crashed");
    expect(session.nextSeq).toBe(17);
    await expect(session.append(simpleTurn(17, 3))).resolves.toBe(24);
    expect(await (await storeOver(backend).openForWriting("crashed")).readEvents()).toHaveLength(
      24,
    );
    const stale = await rejectionOf(store.append("crashed", simpleTurn(14, 3)));
    expect(storageDetails(stale, "SEQ_CONFLICT")).toEqual({ expectedSeq: 24 });
  });

  it("closes a turn with no open step with turn/end alone", async () => {
    const backend = new MemoryBackend();
    await backend.create(
      header,
      serializeEvents([turnStart(0, 1), userMessage(1, "hi", { time: 7 })]),
    );
    const session = await storeOver(backend).openForWriting("crashed");
    expect((await session.readEvents()).slice(2)).toEqual([
      { type: "turn/end", seq: 2, time: 7, data: { turn: 1, reason: { kind: "interrupted" } } },
    ]);
  });

  it("answers every unanswered call of the open step, in call order", async () => {
    const backend = new MemoryBackend();
    await backend.create(
      header,
      serializeEvents([
        turnStart(0, 1),
        stepStart(1, 1, 1),
        toolCall(2, 1, 1, "x"),
        toolCall(3, 1, 1, "y"),
      ]),
    );
    const session = await storeOver(backend).openForWriting("crashed");
    expect((await session.readEvents()).slice(4).map((e) => [e.type, e.seq])).toEqual([
      ["tool/result", 4],
      ["tool/result", 5],
      ["step/end", 6],
      ["turn/end", 7],
    ]);
    expect(
      (await session.readEvents()).slice(4, 6).map((e) => (e.data as { callId: string }).callId),
    ).toEqual(["x", "y"]);
  });

  it("answers whether it repaired: a dead writer's turn once, then nothing", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(crashedEvents()));
    const opened = await storeOver(backend).open("crashed");
    expect(opened.repaired).toBe(true);
    expect(opened.session.nextSeq).toBe(17);
    expect(opened.session.openTurn).toBeUndefined();
    const store = storeOver(backend);
    expect((await store.open("crashed")).repaired).toBe(false);
    // Held already: nothing to repair.
    expect((await store.open("crashed")).repaired).toBe(false);
  });

  it("goes on with a turn it was writing when it unloaded the session", async () => {
    // Seen failing before the fix: the append after unload was SEQ_CONFLICT ("expected the batch
    // to start at seq 10 … got 9"), the turn closed as interrupted when the lock was taken again.
    const store = storeOver();
    await store.create({ id: "mine", seed: simpleTurn(0, 1) });
    const turn = simpleTurn(7, 2);
    expect(await store.append("mine", turn.slice(0, 2))).toBe(9);
    await store.unload("mine");
    expect((await store.load("mine")).openTurn).toBe(2);
    expect(await store.append("mine", turn.slice(2))).toBe(14);
    expect((await store.readEvents("mine")).slice(7)).toEqual(turn);
  });

  it("closes a turn it unloaded when another store wrote the log in between", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "shared", seed: simpleTurn(0, 1) });
    await store.append("shared", simpleTurn(7, 2).slice(0, 2));
    await store.unload("shared");
    // The other store closes turn 2 as a dead writer's, then leaves turn 3 open.
    const other = storeOver(backend);
    expect((await other.open("shared")).repaired).toBe(true);
    await other.append("shared", simpleTurn(10, 3).slice(0, 2));
    await other.close();
    const opened = await store.open("shared");
    expect(opened.repaired).toBe(true);
    const types = (await store.readEvents("shared")).slice(9).map((e) => e.type);
    expect(types).toEqual(["turn/end", "turn/start", "user/message", "turn/end"]);
  });

  it("leaves a balanced stored log as it is", async () => {
    const backend = new MemoryBackend();
    await backend.create(header, serializeEvents(balancedLog(2)));
    const before = await backend.load("crashed");
    const session = await storeOver(backend).openForWriting("crashed");
    expect(await session.readEvents()).toEqual(balancedLog(2));
    expect(await backend.load("crashed")).toEqual(before);
  });
});

describe("list", () => {
  /** Five stored sessions with distinct and tied createdAt values. */
  async function populated(): Promise<SessionStore> {
    const store = new SessionStore();
    await store.create({ id: "a", seed: [], meta: { createdAt: 10, cwd: "/one" } });
    await store.create({ id: "b", seed: tenEvents(), meta: { createdAt: 30, cwd: "/two" } });
    await store.create({ id: "c", seed: [], meta: { createdAt: 20, cwd: "/one" } });
    await store.create({ id: "d", seed: [], meta: { createdAt: 30, cwd: "/one" } });
    await store.create({ id: "e", seed: [], meta: { createdAt: 5 } });
    await store.create({ id: "f", meta: { createdAt: 99 } });
    return store;
  }

  it("lists stored sessions newest first in created order, ties by id descending", async () => {
    const store = await populated();
    const page = await store.list({ order: "created" });
    expect(page.sessions.map((s) => s.header.id)).toEqual(["f", "d", "b", "c", "a", "e"]);
    expect(page).not.toHaveProperty("nextCursor");
    const b = page.sessions.find((s) => s.header.id === "b");
    expect(b?.eventCount).toBe(10);
    expect(b?.updatedAt).toBe(new Date(TIME).toISOString());
  });

  it("lists by last activity by default, updatedAt an ISO string (createdAt without events)", async () => {
    const store = await populated();
    const page = await store.list();
    // b's events are at TIME, far later than every createdAt.
    expect(page.sessions.map((s) => s.header.id)).toEqual(["b", "f", "d", "c", "a", "e"]);
    expect(page.sessions.map((s) => s.updatedAt)).toEqual(
      [TIME, 99, 30, 20, 10, 5].map((t) => new Date(t).toISOString()),
    );
    expectInvalidParams(
      await store.list({ order: "newest" as "created" }).catch((e: unknown) => e),
      "/order",
    );
  });

  it("pages with a cursor until no cursor is returned", async () => {
    const store = await populated();
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({
        limit: 2,
        order: "created",
        ...(cursor === undefined ? {} : { cursor }),
      });
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      ids.push(...page.sessions.map((s) => s.header.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(ids).toEqual(["f", "d", "b", "c", "a", "e"]);
  });

  it("filters by cwd and by parentSession", async () => {
    const store = await populated();
    expect((await store.list({ cwd: "/one" })).sessions.map((s) => s.header.id)).toEqual([
      "d",
      "c",
      "a",
    ]);
    await store.fork("b", { boundary: 6, childSessionId: "b-child-1" });
    await store.fork("b", { boundary: 9, childSessionId: "b-child-2" });
    await store.fork("c", { childSessionId: "c-child" });
    const children = await store.list({ parentSession: "b" });
    expect(children.sessions.map((s) => s.header.id).sort()).toEqual(["b-child-1", "b-child-2"]);
    expect((await store.list({ parentSession: "b", cwd: "/two", limit: 1 })).sessions).toHaveLength(
      1,
    );
    expect((await store.list({ parentSession: "nobody" })).sessions).toEqual([]);
  });

  it("rejects a cursor it did not make: INVALID_PARAMS", async () => {
    const store = await populated();
    expectInvalidParams(await rejectionOf(store.list({ cursor: "not a cursor" })), "/cursor");
  });
});

describe("delete", () => {
  it("removes a session; its children keep their copies", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "parent", seed: balancedLog(2) });
    await store.fork("parent", { boundary: 6, childSessionId: "child" });
    await store.delete("parent");
    expect(await store.get("parent")).toBeUndefined();
    expect(await backend.has("parent")).toBe(false);
    expect((await store.list()).sessions.map((s) => s.header.id)).toEqual(["child"]);
    const child = await storeOver(backend).load("child");
    expect(await child.readEvents()).toEqual(balancedLog(2).slice(0, 7));
    expect(child.header.parentSession).toBe("parent");
  });

  it("rejects an unknown id: SESSION_NOT_FOUND", async () => {
    const store = new SessionStore();
    expect(storageDetails(await rejectionOf(store.delete("ghost")), "SESSION_NOT_FOUND")).toEqual({
      sessionId: "ghost",
    });
  });

  it("rejects a second delete of the same id: SESSION_NOT_FOUND", async () => {
    const store = new SessionStore();
    await store.create({ id: "once", seed: [] });
    await store.delete("once");
    storageDetails(await rejectionOf(store.delete("once")), "SESSION_NOT_FOUND");
  });

  it("deletes a stored session that no store has loaded", async () => {
    const backend = new MemoryBackend();
    await storeOver(backend).create({ id: "cold", seed: tenEvents() });
    await storeOver(backend).delete("cold");
    expect(await backend.has("cold")).toBe(false);
  });

  it("forgets a lazy session that was never stored, freeing its id", async () => {
    const store = new SessionStore();
    await store.create({ id: "lazy" });
    await store.delete("lazy");
    expect(await store.get("lazy")).toBeUndefined();
    await expect(store.create({ id: "lazy", seed: [] })).resolves.toMatchObject({ id: "lazy" });
  });

  it("makes the deleted Session stale for appends: SESSION_NOT_LIVE", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "gone", seed: [] });
    await store.delete("gone");
    const error = await rejectionOf(session.append(simpleTurn(0, 1)));
    expect((error as { code: string }).code).toBe("SESSION_NOT_LIVE");
    expect((error as { details: unknown }).details).toEqual({ sessionId: "gone" });
  });
});

describe("append", () => {
  /** Batch `i` of 20: turn i+1, seven events, built for its seq. */
  const batches = Array.from({ length: 20 }, (_, i) => simpleTurn(i * 7, i + 1));

  it("runs concurrent appends to one session in call order", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    const session = await store.create({ id: "busy" });
    const pending = batches.map((batch) => session.append(batch));
    await expect(Promise.all(pending)).resolves.toEqual(batches.map((_, i) => (i + 1) * 7));
    expect(await session.readEvents()).toEqual(batches.flat());
    expect(await (await storeOver(backend).load("busy")).readEvents()).toEqual(batches.flat());
  });

  it("runs concurrent appends by id in call order", async () => {
    const store = new SessionStore();
    await store.create({ id: "busy", seed: [] });
    const pending = batches.map((batch) => store.append("busy", batch));
    await expect(Promise.all(pending)).resolves.toEqual(batches.map((_, i) => (i + 1) * 7));
    expect(await (await store.load("busy")).readEvents()).toEqual(batches.flat());
  });

  it("rejects an append with a stale seq: SEQ_CONFLICT with the expected seq", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: balancedLog(1) });
    const behind = await rejectionOf(session.append([userMessage(3, "late")]));
    expect(storageDetails(behind, "SEQ_CONFLICT")).toEqual({ expectedSeq: 7 });
    const ahead = await rejectionOf(session.append([userMessage(9, "early")]));
    expect(storageDetails(ahead, "SEQ_CONFLICT")).toEqual({ expectedSeq: 7 });
    expect(session.nextSeq).toBe(7);
  });

  it("rejects the loser of two concurrent appends built for the same seq: SEQ_CONFLICT", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: [] });
    const results = await Promise.allSettled([
      session.append(simpleTurn(0, 1)),
      session.append(simpleTurn(0, 1, { prompt: "other" })),
    ]);
    expect(results[0]).toEqual({ status: "fulfilled", value: 7 });
    expect(results[1]?.status).toBe("rejected");
    const reason = (results[1] as PromiseRejectedResult).reason;
    expect(storageDetails(reason, "SEQ_CONFLICT")).toEqual({ expectedSeq: 7 });
  });

  it("acknowledges a retry of stored events and changes nothing", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    const session = await store.create({ id: "s", seed: [] });
    await session.append(simpleTurn(0, 1));
    await expect(session.append(simpleTurn(0, 1))).resolves.toBe(7);
    expect(await session.readEvents()).toHaveLength(7);
    expect((await backend.load("s"))?.events).toHaveLength(7);
  });

  it("rejects an append to an unknown id: SESSION_NOT_FOUND", async () => {
    const store = new SessionStore();
    storageDetails(await rejectionOf(store.append("ghost", simpleTurn(0, 1))), "SESSION_NOT_FOUND");
  });

  it("appends by id to a stored session that no store has loaded", async () => {
    const backend = new MemoryBackend();
    await storeOver(backend).create({ id: "cold", seed: balancedLog(1) });
    const store = storeOver(backend);
    await expect(store.append("cold", simpleTurn(7, 2))).resolves.toBe(14);
    expect((await backend.load("cold"))?.events).toEqual(balancedLog(2));
  });
});

describe("everything that touches storage is asynchronous", () => {
  it("returns a Promise from create, get, load, append, fork, list, unload and delete", async () => {
    const store = new SessionStore({ now: manualClock().now });
    const created = store.create({ id: "s" });
    expect(created).toBeInstanceOf(Promise);
    const session = await created;
    const appended = session.append(simpleTurn(0, 1));
    expect(appended).toBeInstanceOf(Promise);
    await expect(appended).resolves.toBe(7);
    const byId = store.append("s", simpleTurn(7, 2));
    expect(byId).toBeInstanceOf(Promise);
    await expect(byId).resolves.toBe(14);
    for (const call of [
      () => store.get("s"),
      () => store.load("s"),
      () => store.fork("s", { boundary: 13, childSessionId: "child" }),
      () => store.list(),
      () => store.unload("child"),
      () => store.delete("child"),
    ]) {
      const result = call();
      expect(result).toBeInstanceOf(Promise);
      await result;
    }
  });

  it("reports bad input as a rejected Promise, never a synchronous throw", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "stale", seed: [] });
    await store.unload("stale");
    const calls: [() => Promise<unknown>, string][] = [
      [() => store.create({ id: "" }), "INVALID_PARAMS"],
      [() => store.create({ id: "s", meta: { cwd: "rel" } }), "INVALID_PARAMS"],
      [() => store.get("a\u0000"), "INVALID_PARAMS"],
      [() => store.load("ghost"), "SESSION_NOT_FOUND"],
      [() => store.append("ghost", []), "SESSION_NOT_FOUND"],
      [() => stale.append([]), "SESSION_NOT_LIVE"],
      [() => store.fork("ghost"), "SESSION_NOT_FOUND"],
      [() => store.fork("stale", { boundary: -1 }), "INVALID_BOUNDARY"],
      [() => store.fork("stale", { boundary: 0, childSessionId: "" }), "INVALID_PARAMS"],
      [() => store.delete("ghost"), "SESSION_NOT_FOUND"],
      [() => store.list({ cursor: "!" }), "INVALID_PARAMS"],
    ];
    for (const [call, code] of calls) {
      let result: Promise<unknown> | undefined;
      expect(() => {
        result = call();
      }).not.toThrow();
      expect(result).toBeInstanceOf(Promise);
      expect(((await rejectionOf(result as Promise<unknown>)) as { code: string }).code).toBe(code);
    }
  });
});

describe("titles and id prefixes", () => {
  it("titles a session by its first prompt until an explicit title is set, and again once cleared", async () => {
    const store = new SessionStore();
    await store.create({ id: "t", seed: tenEvents() });
    const derived = await store.title("t");
    expect(derived).toEqual(expect.any(String));
    await store.setTitle("t", "Mine");
    expect(await store.title("t")).toBe("Mine");
    expect((await store.list()).sessions[0]?.title).toBe("Mine");
    await store.setTitle("t", null);
    expect(await store.title("t")).toBe(derived);
  });

  it("refuses a title that is empty, too long or holds a control character (INVALID_PARAMS at /title)", async () => {
    const store = new SessionStore();
    await store.create({ id: "t", seed: [] });
    for (const bad of ["", "x".repeat(257), "line\nbreak"]) {
      expectInvalidParams(await store.setTitle("t", bad).catch((e: unknown) => e), "/title");
    }
    await store.setTitle("t", "🚀".repeat(256));
    expect(await store.title("t")).toBe("🚀".repeat(256));
    storageDetails(await store.setTitle("nope", "x").catch((e: unknown) => e), "SESSION_NOT_FOUND");
    storageDetails(await store.title("nope").catch((e: unknown) => e), "SESSION_NOT_FOUND");
  });

  it("resolves an exact id, or a unique prefix of 4 or more characters", async () => {
    const store = new SessionStore();
    for (const id of ["abcd1234", "abcd5678", "abc", "efgh0000"])
      await store.create({ id, seed: [] });
    expect(await store.resolveId("abc")).toBe("abc");
    expect(await store.resolveId("efgh")).toBe("efgh0000");
    expect(await store.resolveId("abcd1")).toBe("abcd1234");
    storageDetails(await store.resolveId("efg").catch((e: unknown) => e), "SESSION_NOT_FOUND");
    storageDetails(await store.resolveId("zzzz").catch((e: unknown) => e), "SESSION_NOT_FOUND");
    const details = storageDetails(
      await store.resolveId("abcd").catch((e: unknown) => e),
      "AMBIGUOUS_ID",
    );
    expect(details).toEqual({ prefix: "abcd", candidates: ["abcd1234", "abcd5678"], count: 2 });
  });

  it("names at most 10 candidates of an ambiguous prefix, with the count of all", async () => {
    const store = new SessionStore();
    for (let i = 0; i < 12; i++)
      await store.create({ id: `same-${String(i).padStart(2, "0")}`, seed: [] });
    const details = storageDetails(
      await store.resolveId("same").catch((e: unknown) => e),
      "AMBIGUOUS_ID",
    ) as { candidates: string[]; count: number };
    expect(details.candidates).toHaveLength(10);
    expect(details.count).toBe(12);
  });
});

describe("unload: the open turns a store remembers", () => {
  it("forgets the turn it let go of longest ago past 10,000, which is closed when written again", async () => {
    const store = storeOver();
    const open = simpleTurn(0, 1).slice(0, 2);
    for (let i = 0; i <= 10_000; i++) {
      await store.create({ id: `s${i}`, seed: open });
      await store.unload(`s${i}`);
    }
    expect((await store.open("s0")).repaired).toBe(true);
    expect((await store.open("s1")).repaired).toBe(false);
    expect((await store.open("s10000")).repaired).toBe(false);
  });
});
