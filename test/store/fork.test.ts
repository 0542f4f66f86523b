// SessionStore.fork: the checks and their order, the inclusive boundary, the child's header, copies, unloaded sources.

import { describe, expect, it } from "vitest";
import {
  deriveMessages,
  InvalidEventError,
  lastCompletedTurnBoundary,
  MemoryBackend,
  type SessionEvent,
  SessionForkError,
  type SessionHeader,
  SessionStore,
  StorageError,
} from "../../src/index.js";
import { serializeEvents } from "../../src/log/serialized-event.js";
import {
  balancedLog,
  simpleTurn,
  todoWrite,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { manualClock, openTurnTail, rejectionOf, storeOver } from "../helpers/store-builders.js";

/** Asserts `error` is a SessionForkError with `code` and exactly `details`. */
function expectForkError(error: unknown, code: string, details: Record<string, unknown>): void {
  expect(error).toBeInstanceOf(SessionForkError);
  expect((error as SessionForkError).code).toBe(code);
  expect((error as SessionForkError).details).toEqual(details);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Two balanced turns (seqs 0…13), then standalone events after the closed turn:
 * 14 todo/write, 15 user/message.
 */
function closedLog(): SessionEvent[] {
  const events = balancedLog(2);
  events.push(todoWrite(events.length), userMessage(events.length + 1, "later"));
  return events;
}

/** {@link closedLog} followed by turn 3 left open (seqs 16…22). */
function openLog(): SessionEvent[] {
  const events = closedLog();
  return [...events, ...openTurnTail(events.length, 3)];
}

const OPEN_START = closedLog().length;

/** How a test reaches the source: a live Session, its id, or a stored session no store has loaded. */
type SourceKind = "live session" | "live id" | "stored, not loaded";

/** A store and a handle on a source seeded with `events`, reached as `kind` says. */
async function sourceOf(
  kind: SourceKind,
  events: readonly SessionEvent[],
  id = "src",
): Promise<{ store: SessionStore; source: Parameters<SessionStore["fork"]>[0] }> {
  const backend = new MemoryBackend();
  const writer = storeOver(backend);
  const session = await writer.create({ id, seed: events, meta: { cwd: "/work/src" } });
  if (kind === "live session") return { store: writer, source: session };
  if (kind === "live id") return { store: writer, source: id };
  const reader = storeOver(backend);
  return { store: reader, source: id };
}

const KINDS: SourceKind[] = ["live session", "live id", "stored, not loaded"];

describe("fork errors", () => {
  it("rejects a child id that names a live or stored session: SESSION_ALREADY_EXISTS", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: closedLog() });
    await store.create({ id: "unstored" });
    await store.create({ id: "stored", seed: [] });
    for (const taken of ["unstored", "stored", "src"]) {
      expectForkError(
        await rejectionOf(store.fork("src", { boundary: 0, childSessionId: taken })),
        "SESSION_ALREADY_EXISTS",
        {
          sessionId: taken,
        },
      );
    }
  });

  it("rejects a child id stored by another store over the same backend", async () => {
    const backend = new MemoryBackend();
    await storeOver(backend).create({ id: "taken", seed: [] });
    const store = storeOver(backend);
    await store.create({ id: "src", seed: closedLog() });
    expectForkError(
      await rejectionOf(store.fork("src", { boundary: 0, childSessionId: "taken" })),
      "SESSION_ALREADY_EXISTS",
      {
        sessionId: "taken",
      },
    );
  });

  // The store takes no writer lock of the child: a child another process stores after the
  // store's own check is refused by the backend's atomic fork, and reported as the check reports
  // it. Seen failing before the store translated it: a StorageError, not a SessionForkError.
  it("rejects a child id stored by another store after its check: SESSION_ALREADY_EXISTS", async () => {
    const backend = new MemoryBackend();
    const other = storeOver(backend);
    const racing = new Proxy(backend, {
      get(target, member) {
        const value: unknown = Reflect.get(target, member, target);
        if (member !== "forkPoint") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        // Between the store's check of the child id and its fork: the other store creates it.
        return async (id: string, boundary: number | undefined) => {
          await other.create({ id: "late", seed: [] });
          return target.forkPoint(id, boundary);
        };
      },
    });
    const store = storeOver(racing);
    await store.create({ id: "src", seed: closedLog() });
    expectForkError(
      await rejectionOf(store.fork("src", { boundary: 6, childSessionId: "late" })),
      "SESSION_ALREADY_EXISTS",
      { sessionId: "late" },
    );
    expect((await other.load("late")).header.parentSession).toBeUndefined();
  });

  it("rejects a source that names no session: SESSION_NOT_FOUND", async () => {
    const store = new SessionStore();
    expectForkError(
      await rejectionOf(store.fork("missing", { boundary: 0, childSessionId: "child" })),
      "SESSION_NOT_FOUND",
      {
        sessionId: "missing",
      },
    );
    expectForkError(await rejectionOf(store.fork("missing")), "SESSION_NOT_FOUND", {
      sessionId: "missing",
    });
  });

  it("rejects a Session object after store.unload: SESSION_NOT_LIVE", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: closedLog() });
    await store.unload("src");
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: 0, childSessionId: "child" })),
      "SESSION_NOT_LIVE",
      {
        sessionId: "src",
      },
    );
    expect(await store.get("child")).toBeUndefined();
    // The id itself still forks: the stored session is loaded or read as needed.
    await expect(
      store.fork("src", { boundary: 6, childSessionId: "child" }),
    ).resolves.toMatchObject({ id: "child" });
  });

  it("rejects a Session object after store.delete and a new session with its id: SESSION_NOT_LIVE", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: closedLog() });
    await store.delete("src");
    const fresh = await store.create({ id: "src", seed: closedLog() });
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: 0, childSessionId: "child" })),
      "SESSION_NOT_LIVE",
      {
        sessionId: "src",
      },
    );
    await expect(
      store.fork(fresh, { boundary: 6, childSessionId: "child" }),
    ).resolves.toMatchObject({ parentSession: "src" });
  });

  it("rejects a Session object of another store: SESSION_NOT_LIVE", async () => {
    const backend = new MemoryBackend();
    const other = await storeOver(backend).create({ id: "src", seed: closedLog() });
    const store = storeOver(backend);
    expectForkError(
      await rejectionOf(store.fork(other, { boundary: 0, childSessionId: "child" })),
      "SESSION_NOT_LIVE",
      {
        sessionId: "src",
      },
    );
  });

  describe.each(KINDS)("INVALID_BOUNDARY from a %s", (kind) => {
    const events = closedLog();
    const lastSeq = events.length - 1;
    const cases: [string, number, Record<string, unknown>][] = [
      ["a negative boundary", -1, { boundary: -1, lastSeq }],
      ["a fractional boundary", 2.5, { boundary: 2.5, lastSeq }],
      ["a boundary past the end", events.length, { boundary: events.length, lastSeq }],
      ["a boundary far past the end", 1e6, { boundary: 1e6, lastSeq }],
      ["an unsafe integer", 2 ** 53, { boundary: 2 ** 53, lastSeq }],
    ];
    it.each(cases)("rejects %s", async (_what, boundary, details) => {
      const { store, source } = await sourceOf(kind, events);
      expectForkError(
        await rejectionOf(store.fork(source, { boundary, childSessionId: "child" })),
        "INVALID_BOUNDARY",
        details,
      );
      expect(await store.get("child")).toBeUndefined();
    });

    it("rejects NaN and Infinity", async () => {
      const { store, source } = await sourceOf(kind, events);
      for (const boundary of [Number.NaN, Number.POSITIVE_INFINITY]) {
        const error = await rejectionOf(store.fork(source, { boundary, childSessionId: "child" }));
        expect(error).toBeInstanceOf(SessionForkError);
        expect((error as SessionForkError).code).toBe("INVALID_BOUNDARY");
        expect((error as SessionForkError<"INVALID_BOUNDARY">).details.lastSeq).toBe(lastSeq);
      }
    });

    it("rejects any explicit boundary on an empty source, with no lastSeq", async () => {
      const { store, source } = await sourceOf(kind, [], "empty");
      expectForkError(
        await rejectionOf(store.fork(source, { boundary: 0, childSessionId: "child" })),
        "INVALID_BOUNDARY",
        {
          boundary: 0,
        },
      );
    });
  });

  it("rejects an explicit boundary on an empty source that was never stored", async () => {
    const store = new SessionStore();
    const empty = await store.create({ id: "empty" });
    expectForkError(
      await rejectionOf(store.fork(empty, { boundary: 0, childSessionId: "child" })),
      "INVALID_BOUNDARY",
      {
        boundary: 0,
      },
    );
  });

  describe.each(KINDS)("OPEN_TURN from a %s", (kind) => {
    const events = openLog();
    it.each([
      ["the turn/start itself", OPEN_START],
      ["the prompt inside the open turn", OPEN_START + 1],
      ["an unanswered tool call", OPEN_START + 5],
      ["the last event", events.length - 1],
    ])("rejects a boundary at %s, creating no child", async (_what, boundary) => {
      const { store, source } = await sourceOf(kind, events);
      // The nearest valid boundary before is the standalone user/message at 15; turn 3 never ends.
      expectForkError(
        await rejectionOf(store.fork(source, { boundary, childSessionId: "child" })),
        "OPEN_TURN",
        {
          boundary,
          turn: 3,
          before: OPEN_START - 1,
        },
      );
      expect(await store.get("child")).toBeUndefined();
      expect((await store.list()).sessions.map((s) => s.header.id)).not.toContain("child");
    });

    it("rejects the default boundary when the source ends inside a turn (no silent clipping)", async () => {
      const { store, source } = await sourceOf(kind, events);
      expectForkError(
        await rejectionOf(store.fork(source, { childSessionId: "child" })),
        "OPEN_TURN",
        {
          boundary: events.length - 1,
          turn: 3,
          before: OPEN_START - 1,
        },
      );
      expect(await store.get("child")).toBeUndefined();
    });

    it("rejects a boundary inside an earlier turn, naming the ends of turns 1 and 2", async () => {
      const { store, source } = await sourceOf(kind, events);
      const error = await rejectionOf(store.fork(source, { boundary: 9, childSessionId: "child" }));
      expectForkError(error, "OPEN_TURN", { boundary: 9, turn: 2, before: 6, after: 13 });
      expect((error as SessionForkError).message).toContain("seq 6");
      expect((error as SessionForkError).message).toContain("seq 13");
    });
  });
});

describe("fork parameters and races", () => {
  it("rejects a bad child id or a relative cwd as INVALID_PARAMS, creating nothing", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: closedLog() });
    for (const call of [
      () => store.fork("src", { boundary: 6, childSessionId: "" }),
      () => store.fork("src", { boundary: 6, childSessionId: "a\u0000b" }),
      () => store.fork("src", { boundary: 6, childSessionId: "child", cwd: "relative" }),
    ]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).code).toBe("INVALID_PARAMS");
    }
    expect((await store.list()).sessions.map((s) => s.header.id)).toEqual(["src"]);
  });

  it("lets only one of a create and a fork naming the same new id succeed", async () => {
    for (const order of ["create first", "fork first"]) {
      const store = new SessionStore();
      await store.create({ id: "src", seed: closedLog() });
      const create = () => store.create({ id: "same" });
      const fork = () => store.fork("src", { boundary: 6, childSessionId: "same" });
      const results = await Promise.allSettled(
        order === "create first" ? [create(), fork()] : [fork(), create()],
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      expect((failed?.reason as { code?: string } | undefined)?.code).toBe(
        "SESSION_ALREADY_EXISTS",
      );
    }
  });

  it("lets only one of two concurrent forks to the same child id succeed", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: closedLog() });
    const results = await Promise.allSettled([
      store.fork("src", { boundary: 6, childSessionId: "same" }),
      store.fork("src", { boundary: 13, childSessionId: "same" }),
    ]);
    expect(results[0]?.status).toBe("fulfilled");
    expectForkError((results[1] as PromiseRejectedResult).reason, "SESSION_ALREADY_EXISTS", {
      sessionId: "same",
    });
    expect(await (await store.load("same")).readEvents()).toHaveLength(7);
  });
});

describe("fork check order", () => {
  it("reports SESSION_ALREADY_EXISTS before SESSION_NOT_FOUND", async () => {
    const store = new SessionStore();
    await store.create({ id: "taken", seed: [] });
    expectForkError(
      await rejectionOf(store.fork("missing", { boundary: -1, childSessionId: "taken" })),
      "SESSION_ALREADY_EXISTS",
      {
        sessionId: "taken",
      },
    );
  });

  it("reports SESSION_ALREADY_EXISTS before SESSION_NOT_LIVE, INVALID_BOUNDARY and OPEN_TURN", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: openLog() });
    await store.create({ id: "taken", seed: [] });
    await store.unload("src");
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: 1e6, childSessionId: "taken" })),
      "SESSION_ALREADY_EXISTS",
      {
        sessionId: "taken",
      },
    );
  });

  it("reports SESSION_NOT_FOUND before SESSION_NOT_LIVE (a stale Session whose id is gone)", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: openLog() });
    await store.delete("src");
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: -1, childSessionId: "child" })),
      "SESSION_NOT_FOUND",
      {
        sessionId: "src",
      },
    );
  });

  it("reports SESSION_NOT_LIVE before INVALID_BOUNDARY", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: openLog() });
    await store.unload("src");
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: -1, childSessionId: "child" })),
      "SESSION_NOT_LIVE",
      {
        sessionId: "src",
      },
    );
  });

  it("reports SESSION_NOT_LIVE before OPEN_TURN", async () => {
    const store = new SessionStore();
    const stale = await store.create({ id: "src", seed: openLog() });
    await store.unload("src");
    expectForkError(
      await rejectionOf(store.fork(stale, { boundary: OPEN_START, childSessionId: "child" })),
      "SESSION_NOT_LIVE",
      {
        sessionId: "src",
      },
    );
  });

  it.each(KINDS)(
    "reports INVALID_BOUNDARY before OPEN_TURN on a source ending inside a turn (%s)",
    async (kind) => {
      const events = openLog();
      const { store, source } = await sourceOf(kind, events);
      expectForkError(
        await rejectionOf(store.fork(source, { boundary: events.length, childSessionId: "child" })),
        "INVALID_BOUNDARY",
        { boundary: events.length, lastSeq: events.length - 1 },
      );
      expectForkError(
        await rejectionOf(
          store.fork(source, { boundary: OPEN_START + 0.5, childSessionId: "child" }),
        ),
        "INVALID_BOUNDARY",
        { boundary: OPEN_START + 0.5, lastSeq: events.length - 1 },
      );
    },
  );
});

describe("fork at a boundary", () => {
  it.each(KINDS)(
    "copies events 0…boundary inclusive and writes the child's header (%s)",
    async (kind) => {
      const events = closedLog();
      const clock = manualClock(1_000);
      const backend = new MemoryBackend();
      const writer = storeOver(backend, clock);
      const live = await writer.create({ id: "src", seed: events, meta: { cwd: "/work/src" } });
      const store = kind === "stored, not loaded" ? storeOver(backend, clock) : writer;
      const source = kind === "live session" ? live : "src";
      clock.set(5_000);
      const boundary = 6; // the turn/end of turn 1
      const header = await store.fork(source, { boundary, childSessionId: "child" });
      expect(header).toEqual({
        version: 0,
        id: "child",
        createdAt: 5_000,
        cwd: "/work/src",
        parentSession: "src",
        seedLength: boundary + 1,
      });
      const child = await store.load("child");
      expect(child.header).toEqual(header);
      expect(await child.readEvents()).toEqual(events.slice(0, boundary + 1));
      expect(child.seedLength).toBe(boundary + 1);
      expect(await child.ownEvents()).toEqual([]);
      expect(live.header.createdAt).toBe(1_000);
      // Durable before fork resolved: the backend holds the child and its seed.
      const stored = await backend.load("child");
      expect(stored?.header).toEqual(header);
      expect(stored?.events).toEqual(events.slice(0, boundary + 1));
    },
  );

  it("overrides the inherited cwd with the fork's cwd", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: closedLog(), meta: { cwd: "/work/src" } });
    const header = await store.fork("src", {
      boundary: 6,
      childSessionId: "child",
      cwd: "/work/elsewhere",
    });
    expect(header.cwd).toBe("/work/elsewhere");
    expect((await store.load("child")).header.cwd).toBe("/work/elsewhere");
  });

  it("gives a child no cwd when the source has none and the fork names none", async () => {
    const store = new SessionStore({ now: () => 7 });
    await store.create({ id: "src", seed: closedLog() });
    expect(await store.fork("src", { boundary: 6, childSessionId: "child" })).toEqual({
      version: 0,
      id: "child",
      createdAt: 7,
      parentSession: "src",
      seedLength: 7,
    });
  });

  it("gives a fresh id when none is given", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: closedLog() });
    const first = await store.fork("src", { boundary: 6 });
    const second = await store.fork("src", { boundary: 6 });
    expect(first.id).toMatch(UUID);
    expect(second.id).toMatch(UUID);
    expect(new Set([first.id, second.id, "src"]).size).toBe(3);
    expect((await store.load(first.id)).header).toEqual(first);
    expect((await store.load(second.id)).header).toEqual(second);
  });

  it("uses the store's newId for a child without an id", async () => {
    let n = 0;
    const store = new SessionStore({ newId: () => `made-${++n}` });
    await store.create({ id: "src", seed: closedLog() });
    await expect(store.fork("src", { boundary: 6 })).resolves.toMatchObject({ id: "made-1" });
  });

  it.each(KINDS)("defaults the boundary to the last event (%s)", async (kind) => {
    const events = closedLog();
    const { store, source } = await sourceOf(kind, events);
    const header = await store.fork(source, { childSessionId: "child" });
    expect(header.seedLength).toBe(events.length);
    expect(await (await store.load("child")).readEvents()).toEqual(events);
  });

  it.each(KINDS)(
    "forks an empty source without a boundary into an empty child (%s)",
    async (kind) => {
      const { store, source } = await sourceOf(kind, [], "empty");
      const header = await store.fork(source, { childSessionId: "child" });
      expect(header).not.toHaveProperty("seedLength");
      expect(header.parentSession).toBe("empty");
      const child = await store.load("child");
      expect(await child.readEvents()).toEqual([]);
      expect(child.seedLength).toBe(0);
    },
  );

  it("forks a session created without a seed (not yet stored) into an empty, stored child", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    const empty = await store.create({ id: "empty", meta: { cwd: "/work/e" } });
    const header = await store.fork(empty, { childSessionId: "child" });
    expect(header).not.toHaveProperty("seedLength");
    expect(header.cwd).toBe("/work/e");
    expect((await backend.load("child"))?.events).toEqual([]);
    expect((await storeOver(backend).load("child")).header).toEqual(header);
  });

  it.each(KINDS)(
    "accepts a boundary at a standalone event after a closed turn (%s)",
    async (kind) => {
      const events = closedLog();
      const { store, source } = await sourceOf(kind, events);
      const atTodo = await store.fork(source, { boundary: 14, childSessionId: "at-todo" });
      expect(atTodo.seedLength).toBe(15);
      expect((await (await store.load("at-todo")).readEvents()).at(-1)).toEqual(events[14]);
      const atPrompt = await store.fork(source, { boundary: 15, childSessionId: "at-prompt" });
      expect(atPrompt.seedLength).toBe(16);
    },
  );

  it.each(KINDS)(
    "accepts standalone events after the closed turn of a source that is open later (%s)",
    async (kind) => {
      const events = openLog();
      const { store, source } = await sourceOf(kind, events);
      await expect(
        store.fork(source, { boundary: OPEN_START - 1, childSessionId: "child" }),
      ).resolves.toMatchObject({
        seedLength: OPEN_START,
      });
      expect(await (await store.load("child")).readEvents()).toEqual(events.slice(0, OPEN_START));
    },
  );

  it("accepts a boundary at the first event when it stands outside any turn", async () => {
    const store = new SessionStore();
    await store.create({ id: "src", seed: [userMessage(0, "hi"), ...simpleTurn(1, 1)] });
    await expect(
      store.fork("src", { boundary: 0, childSessionId: "child" }),
    ).resolves.toMatchObject({ seedLength: 1 });
  });
});

describe("lastCompletedTurnBoundary", () => {
  it("gives the seq of the last turn/end, or undefined when no turn ended", () => {
    expect(lastCompletedTurnBoundary(openLog())).toBe(13);
    expect(lastCompletedTurnBoundary(closedLog())).toBe(13);
    expect(lastCompletedTurnBoundary(openTurnTail(0, 1))).toBeUndefined();
    expect(lastCompletedTurnBoundary([])).toBeUndefined();
    expect(lastCompletedTurnBoundary([userMessage(0, "hi")])).toBeUndefined();
  });

  it.each(KINDS)(
    "is a boundary a fork of a source with an open turn accepts (%s)",
    async (kind) => {
      const events = openLog();
      const { store, source } = await sourceOf(kind, events);
      const boundary = lastCompletedTurnBoundary(events);
      expect(boundary).toBe(13);
      const header = await store.fork(source, { boundary, childSessionId: "sub" });
      expect(header.seedLength).toBe(14);
      expect(await (await store.load("sub")).readEvents()).toEqual(events.slice(0, 14));
    },
  );
});

describe("fork copies", () => {
  it("keeps the parent unchanged when the child is appended to, and the child when the parent is", async () => {
    const store = new SessionStore();
    const parent = await store.create({ id: "src", seed: closedLog() });
    const parentEvents = JSON.stringify(await parent.readEvents());
    const parentMessages = JSON.stringify(parent.deriveMessages());
    const parentLength = parent.nextSeq;
    await store.fork(parent, { boundary: 6, childSessionId: "child" });
    const child = await store.load("child");
    await expect(child.append(simpleTurn(7, 2, { prompt: "child only" }))).resolves.toBe(14);
    expect(JSON.stringify(await parent.readEvents())).toBe(parentEvents);
    expect(JSON.stringify(parent.deriveMessages())).toBe(parentMessages);
    expect(parent.nextSeq).toBe(parentLength);
    expect(await child.ownEvents()).toHaveLength(7);
    expect(child.deriveMessages()).toEqual(deriveMessages(await child.readEvents()));

    const childEvents = JSON.stringify(await child.readEvents());
    await parent.append(simpleTurn(parent.nextSeq, 3));
    expect(JSON.stringify(await child.readEvents())).toBe(childEvents);
    // The stored parent is unchanged by the child's appends too.
    const reread = await storeOver(store.backend as MemoryBackend).load("src");
    expect(await reread.readEvents()).toEqual(await parent.readEvents());
  });

  it("gives the child frozen events: nothing done through the child reaches the parent", async () => {
    const store = new SessionStore();
    const parent = await store.create({ id: "src", seed: closedLog() });
    const before = JSON.stringify(await parent.readEvents());
    await store.fork(parent, { boundary: 13, childSessionId: "child" });
    const child = await store.load("child");
    expect(await child.readEvents()).toEqual((await parent.readEvents()).slice(0, 14));
    const prompt = (await child.readEvents())[1] as unknown as {
      data: { content: { text: string }[] };
    };
    expect(() => {
      (prompt.data.content[0] as { text: string }).text = "changed";
    }).toThrow(TypeError);
    const childEvents = await child.readEvents();
    expect(() => (childEvents as SessionEvent[]).pop()).toThrow(TypeError);
    expect(JSON.stringify(await parent.readEvents())).toBe(before);
    expect(await child.readEvents()).toHaveLength(14);
  });

  it.each(KINDS)("continues the parent's turn numbering in the child (%s)", async (kind) => {
    const { store, source } = await sourceOf(kind, openLog());
    await store.fork(source, { boundary: 13, childSessionId: "child" });
    const child = await store.load("child");
    const wrongTurn = await rejectionOf(child.append([turnStart(14, 1), turnEnd(15, 1)]));
    expect(wrongTurn).toBeInstanceOf(InvalidEventError);
    expect((wrongTurn as InvalidEventError).details).toMatchObject({ rule: "turn-order", seq: 14 });
    const repeated = await rejectionOf(child.append([turnStart(14, 2)]));
    expect((repeated as InvalidEventError).rule).toBe("turn-order");
    await expect(child.append(simpleTurn(14, 3))).resolves.toBe(21);
    expect(child.nextSeq).toBe(21);
    expect(child.seedLength).toBe(14);
  });
});

describe("fork of a stored source that is not loaded", () => {
  it("forks by id without loading the source", async () => {
    const backend = new MemoryBackend();
    await storeOver(backend).create({ id: "src", seed: closedLog(), meta: { cwd: "/work/src" } });
    const store = storeOver(backend);
    const header = await store.fork("src", { boundary: 13, childSessionId: "child" });
    expect(header).toMatchObject({ parentSession: "src", seedLength: 14, cwd: "/work/src" });
    expect(store.liveIds()).not.toContain("src");
    expect(await (await store.load("child")).readEvents()).toEqual(closedLog().slice(0, 14));
  });

  it("forks a source whose tail is an open turn at an earlier completed boundary, writing no repair", async () => {
    const backend = new MemoryBackend();
    const events = openLog();
    const sourceHeader: SessionHeader = { version: 0, id: "crashed", createdAt: 1, cwd: "/w" };
    await backend.create(sourceHeader, serializeEvents(events));
    const before = await backend.load("crashed");
    const store = storeOver(backend);
    const boundary = lastCompletedTurnBoundary(events);
    const header = await store.fork("crashed", { boundary, childSessionId: "child" });
    expect(header.seedLength).toBe(14);
    expect(store.liveIds()).not.toContain("crashed");
    const after = await backend.load("crashed");
    expect(after).toEqual(before);
    expect(after?.events).toHaveLength(events.length);
    expect(await (await store.load("child")).readEvents()).toEqual(events.slice(0, 14));
  });

  it("rejects the default boundary of such a source with OPEN_TURN, still writing no repair", async () => {
    const backend = new MemoryBackend();
    const events = openLog();
    await backend.create({ version: 0, id: "crashed", createdAt: 1 }, serializeEvents(events));
    const before = await backend.load("crashed");
    const store = storeOver(backend);
    expectForkError(
      await rejectionOf(store.fork("crashed", { childSessionId: "child" })),
      "OPEN_TURN",
      {
        boundary: events.length - 1,
        turn: 3,
        before: OPEN_START - 1,
      },
    );
    expect(await backend.load("crashed")).toEqual(before);
    expect(await backend.has("child")).toBe(false);
  });
});

describe("fork lineage", () => {
  it("round-trips the child's header through a reload from the backend", async () => {
    const backend = new MemoryBackend();
    const clock = manualClock(10);
    const store = storeOver(backend, clock);
    await store.create({ id: "src", seed: closedLog(), meta: { cwd: "/work/src" } });
    clock.set(20);
    const header = await store.fork("src", {
      boundary: 13,
      childSessionId: "child",
      cwd: "/work/child",
    });
    const child = await storeOver(backend).load("child");
    expect(child.header).toEqual(header);
    expect(child.header).toEqual({
      version: 0,
      id: "child",
      createdAt: 20,
      cwd: "/work/child",
      parentSession: "src",
      seedLength: 14,
    });
    expect(await child.readEvents()).toEqual(closedLog().slice(0, 14));
    const listed = await storeOver(backend).list({ parentSession: "src" });
    expect(listed.sessions.map((s) => s.header)).toEqual([header]);
  });

  it("forks a fork: the grandchild names the child as parent and copies from it", async () => {
    const backend = new MemoryBackend();
    const store = storeOver(backend);
    await store.create({ id: "src", seed: closedLog() });
    await store.fork("src", { boundary: 6, childSessionId: "child" });
    const child = await store.load("child");
    await child.append(simpleTurn(7, 2, { prompt: "own" }));
    const header = await store.fork("child", { boundary: 13, childSessionId: "grandchild" });
    expect(header).toMatchObject({ parentSession: "child", seedLength: 14 });
    const grandchild = await storeOver(backend).load("grandchild");
    expect(await grandchild.readEvents()).toEqual(await child.readEvents());
  });
});
