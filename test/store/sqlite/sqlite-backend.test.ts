// The SQLite backend beyond the shared contract: byte-identical corpus, group commit, in-database fork, damage, two processes.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type SessionEvent,
  type SessionHeader,
  SQLITE_PRAGMAS,
  SQLITE_QUERIES,
  SQLITE_QUERY_PARAMS,
} from "../../../src/generated.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import type { StoredSuffix } from "../../../src/store/backend.js";
import { SessionStore } from "../../../src/store/session-store.js";
import { SqliteBackend } from "../../../src/store/sqlite/sqlite-backend.js";
import { repeatedRowsSql, rowParams, Statements } from "../../../src/store/sqlite/statements.js";
import {
  balancedLog,
  simpleTurn,
  TIME,
  turnEnd,
  turnStart,
  userMessage,
} from "../../helpers/builders.js";
import { corpusLogs } from "../../helpers/corpus.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const TURN = simpleTurn(0, 1).length;

const temps: string[] = [];
const backends: SqliteBackend[] = [];
afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-sqlite-backend-"));
  temps.push(dir);
  return dir;
}

async function openAt(path: string): Promise<SqliteBackend> {
  const backend = await SqliteBackend.open(path);
  backends.push(backend);
  return backend;
}

/** A fresh database file and a backend over it. */
async function fresh(): Promise<{ path: string; backend: SqliteBackend }> {
  const path = join(tempDir(), "store.db");
  return { path, backend: await openAt(path) };
}

function header(id: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return { version: 0, id, createdAt: TIME, ...extra };
}

/** Runs raw SQL on the database file on a connection of its own (another program, for the test). */
function raw<T>(path: string, use: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

type Row = Record<string, unknown>;
const rowsOf = (path: string, id: string): Row[] =>
  raw(
    path,
    (db) =>
      db
        .prepare(
          "SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq",
        )
        .all(id) as Row[],
  );

/** The JSONL text of a loaded log: the header line, then one event per line. */
function jsonlOf(log: { header: SessionHeader; events: readonly unknown[] }): string {
  const lines = [JSON.stringify({ type: "session", ...log.header })];
  for (const event of log.events) lines.push(JSON.stringify(event));
  return `${lines.join("\n")}\n`;
}

describe("SQLite backend", () => {
  it("stores every corpus log and reads it back equal and byte-identical as JSONL", async () => {
    const logs = corpusLogs();
    expect(logs.length).toBeGreaterThan(30);
    let events = 0;
    for (const log of logs) {
      const path = join(tempDir(), "store.db");
      const { type: _type, ...stored } = log.header as { type: string } & SessionHeader;
      const writer = await SqliteBackend.open(path);
      await writer.create(stored, serializeEvents(log.events as SessionEvent[]));
      await writer.close();
      const reader = await openAt(path);
      const loaded = await reader.load(stored.id);
      expect(loaded, log.name).toBeDefined();
      if (loaded === undefined) continue;
      expect(loaded.header, log.name).toEqual(stored);
      expect(loaded.events, log.name).toEqual(log.events);
      expect(loaded.tornTail, log.name).toBe(false);
      expect(jsonlOf(loaded), log.name).toBe(log.text);
      events += loaded.events.length;
    }
    console.log(`corpus: ${logs.length} logs, ${events} events byte-identical through SQLite`);
  });

  it("groups appends to different sessions queued together into one transaction", async () => {
    const { backend } = await fresh();
    const ids = Array.from({ length: 24 }, (_, i) => `g${i}`);
    await Promise.all(
      ids.map((id) => backend.create(header(id), serializeEvents(simpleTurn(0, 1)))),
    );
    const before = backend.writeStats;
    await Promise.all(
      ids.map((id) => backend.append(id, TURN, serializeEvents(simpleTurn(TURN, 2)))),
    );
    const after = backend.writeStats;
    expect(after.transactions - before.transactions).toBe(1);
    expect(after.batches - before.batches).toBe(ids.length);
    for (const id of ids) expect((await backend.load(id))?.events).toEqual(balancedLog(2));
    console.log(
      `group commit: ${ids.length} appends, ${after.transactions - before.transactions} transaction`,
    );
  });

  it("rejects a failing batch of a group alone, rolled back to its savepoint, while the others land", async () => {
    const { backend } = await fresh();
    const ids = ["a", "b", "c", "d", "e"];
    await Promise.all(
      ids.map((id) => backend.create(header(id), serializeEvents(simpleTurn(0, 1)))),
    );
    const before = backend.writeStats;
    const next = simpleTurn(TURN, 2);
    // c: two rows go in, then the third repeats a seq — the first two must not survive.
    const broken = [next[0], next[1], { ...next[2], seq: TURN + 1 }] as SessionEvent[];
    const results = await Promise.allSettled([
      backend.append("a", TURN, serializeEvents(next)),
      backend.append("b", TURN + 1, serializeEvents(next)),
      backend.append("c", TURN, serializeEvents(broken)),
      backend.append("missing", 0, serializeEvents(simpleTurn(0, 1))),
      backend.append("d", TURN, serializeEvents(next)),
      backend.append("e", TURN, serializeEvents(next)),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "rejected",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const reasons = results.map((r) => (r.status === "rejected" ? r.reason : undefined));
    expect(reasons[1]).toMatchObject({ code: "SEQ_CONFLICT", details: { expectedSeq: TURN } });
    expect(reasons[2]).toMatchObject({ code: "SEQ_CONFLICT" });
    expect(reasons[3]).toMatchObject({ code: "SESSION_NOT_FOUND" });
    const after = backend.writeStats;
    expect(after.transactions - before.transactions).toBe(1);
    expect(after.batches - before.batches).toBe(3);
    for (const id of ["a", "d", "e"])
      expect((await backend.load(id))?.events).toEqual(balancedLog(2));
    for (const id of ["b", "c"]) expect((await backend.load(id))?.events).toEqual(balancedLog(1));
    expect(await backend.has("missing")).toBe(false);
  });

  it("inserts a batch's events 32 to a statement and its last few one by one, stored as they were given", async () => {
    const { path, backend } = await fresh();
    const events = balancedLog(12);
    // Two whole groups and a remainder (the test needs both paths).
    expect(events.length).toBeGreaterThan(64);
    expect(events.length % 32).not.toBe(0);
    const inserts = vi.spyOn(Statements.prototype, "runRepeated");
    try {
      await backend.create(header("s"), []);
      await backend.append("s", 0, serializeEvents(events));
      const sizes = inserts.mock.calls.filter(([name]) => name === "insertEvent").map(([, n]) => n);
      expect(sizes).toEqual([
        ...Array(Math.floor(events.length / 32)).fill(32),
        ...Array(events.length % 32).fill(1),
      ]);
    } finally {
      inserts.mockRestore();
    }
    expect((await backend.load("s"))?.events).toEqual(events);
    const rows = rowsOf(path, "s");
    expect(rows.map((row) => row.seq)).toEqual(events.map((event) => event.seq));
    rows.forEach((row, i) => {
      const event = events[i] as SessionEvent & { sourceEventSeqs?: unknown; surfaceOp?: unknown };
      expect(row.data).toBe(JSON.stringify(event.data));
      expect(row.surface_op).toBe(
        event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp),
      );
      expect(row.source_event_seqs).toBe(
        event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs),
      );
    });
  });

  it("repeats an insert's VALUES row for a group, binding its parameters by position in the row's order", () => {
    expect(repeatedRowsSql("INSERT INTO t (a, b)\nVALUES (@b, @a);", 3)).toBe(
      "INSERT INTO t (a, b)\nVALUES (?, ?), (?, ?), (?, ?);",
    );
    expect(rowParams("INSERT INTO t (a, b)\nVALUES (@b, @a);")).toEqual(["b", "a"]);
    expect(new Set(rowParams(SQLITE_QUERIES.insertEvent))).toEqual(
      new Set(SQLITE_QUERY_PARAMS.insertEvent),
    );
    expect(() => repeatedRowsSql("SELECT 1;", 2)).toThrow(/expected an INSERT of one VALUES row/);
    expect(() => repeatedRowsSql("INSERT INTO t (a) VALUES (@a);", 0)).toThrow(
      /expected a positive whole number of rows, got 0/,
    );
  });

  it("refuses a whole batch when a row of one of its groups is refused, with that row's error", async () => {
    const { path, backend } = await fresh();
    const first = simpleTurn(0, 1);
    await backend.create(header("s"), serializeEvents(first));
    const next = balancedLog(12).slice(first.length);
    const refused = first.length + 40;
    expect(next.length).toBeGreaterThan(64);
    // Another program's rule refuses one row inside the second group of 32.
    raw(path, (db) =>
      db.exec(
        `CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.seq = ${refused} BEGIN SELECT RAISE(ABORT, 'row ${refused} refused'); END;`,
      ),
    );
    const appended = backend.append("s", first.length, serializeEvents(next));
    await expect(appended).rejects.toThrow(`row ${refused} refused`);
    // Nothing of the batch stays, not even the first group, which went in before the refusal.
    expect(rowsOf(path, "s").map((row) => row.seq)).toEqual(first.map((event) => event.seq));
    raw(path, (db) => db.exec("DROP TRIGGER refuse"));
    await backend.append("s", first.length, serializeEvents(next));
    expect((await backend.load("s"))?.events).toEqual([...first, ...next]);
  });

  it("groups store appends to many sessions in flight at once", async () => {
    const { backend } = await fresh();
    const store = new SessionStore({ backend });
    const sessions = await Promise.all(
      Array.from({ length: 16 }, (_, i) => store.create({ id: `s${i}`, seed: simpleTurn(0, 1) })),
    );
    const before = backend.writeStats;
    await Promise.all(sessions.map((s) => s.append(simpleTurn(TURN, 2))));
    expect(backend.writeStats.transactions - before.transactions).toBe(1);
    expect(backend.writeStats.batches - before.batches).toBe(16);
    await store.close();
  });

  it("finishes queued commits on close", async () => {
    const { path, backend } = await fresh();
    await backend.create(header("q"), []);
    const pending = backend.append("q", 0, serializeEvents(simpleTurn(0, 1)));
    await backend.close();
    await pending;
    const reopened = await openAt(path);
    expect((await reopened.load("q"))?.events).toEqual(simpleTurn(0, 1));
  });

  it("applies the pragmas after the version check: WAL, foreign keys, busy timeout, synchronous by durability", async () => {
    const dir = tempDir();
    const durable = await openAt(join(dir, "fsync.db"));
    const quick = await SqliteBackend.open(join(dir, "process.db"), { durability: "process" });
    backends.push(quick);
    const expected = {
      journalMode: "wal",
      foreignKeys: 1,
      busyTimeoutMs: SQLITE_PRAGMAS.busyTimeoutMs,
    };
    expect(durable.settings()).toEqual({ synchronous: 2, ...expected });
    expect(quick.settings()).toEqual({ synchronous: 1, ...expected });
    expect([durable.durability, quick.durability]).toEqual(["fsync", "process"]);
  });

  it("works on a private in-memory database", async () => {
    const memory = await openAt(":memory:");
    await memory.create(header("m"), serializeEvents(simpleTurn(0, 1)));
    const release = await memory.lock("m");
    await release();
    expect((await memory.load("m"))?.events).toEqual(simpleTurn(0, 1));
    expect(await memory.delete("m")).toBe(true);
  });

  it("maps a taken id, a stale seq and a missing session to their codes", async () => {
    const { backend } = await fresh();
    await backend.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    await expect(backend.create(header("x"), [])).rejects.toMatchObject({
      code: "SESSION_ALREADY_EXISTS",
    });
    await expect(backend.append("x", 0, serializeEvents(simpleTurn(0, 1)))).rejects.toMatchObject({
      code: "SEQ_CONFLICT",
      details: { expectedSeq: TURN },
    });
    await expect(backend.append("nope", 0, [])).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
    await expect(backend.fork("nope", 0, header("y"))).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
    await expect(backend.fork("x", 0, header("x"))).rejects.toMatchObject({
      code: "SESSION_ALREADY_EXISTS",
    });
  });

  // readEvents asks for each page's rows before it checks the page before: a damaged row on a
  // later page is still CORRUPT_LOG, and a range that ends before that page still reads (the
  // page asked for ahead is not left failing behind it).
  it("reads a log of several pages whole or in part, with a damaged row on its third page", async () => {
    const { path, backend } = await fresh();
    const events = balancedLog(Math.ceil(9000 / TURN) + 1);
    await backend.create(header("long"), serializeEvents(events));
    const store = new SessionStore({ backend });
    expect(await store.readEvents("long")).toEqual(events);
    // Seq 8200 is on the third page of 4096 events, and a turn/end follows it.
    raw(path, (db) =>
      db.prepare("UPDATE events SET data = '#' WHERE session_id = 'long' AND seq = 8200").run(),
    );
    await expect(store.readEvents("long")).rejects.toMatchObject({
      code: "CORRUPT_LOG",
      details: { seq: 8200 },
    });
    expect(await store.readEvents("long", { toSeq: 10 })).toEqual(events.slice(0, 10));
    expect(await store.readEvents("long", { fromSeq: 4000, toSeq: 4200 })).toEqual(
      events.slice(4000, 4200),
    );
  });

  it("forks by copying the prefix rows inside the database, byte for byte", async () => {
    const { path, backend } = await fresh();
    await backend.create(
      header("parent", { cwd: "/w" }),
      serializeEvents(balancedLog(3, { toolCallsPerStep: 1 })),
    );
    // Non-canonical JSON text in a parent row: a copy through JavaScript would rewrite it.
    raw(path, (db) =>
      db
        .prepare("UPDATE events SET data = ? WHERE session_id = 'parent' AND seq = 0")
        .run('{ "turn" : 1, "trigger" : { "kind" : "message", "source" : { "kind" : "user" } } }'),
    );
    const boundary = 2 * simpleTurn(0, 1, { toolCallsPerStep: 1 }).length - 1;
    const point = await backend.forkPoint("parent", boundary);
    expect(point).toMatchObject({
      length: balancedLog(3, { toolCallsPerStep: 1 }).length,
      marker: { seq: boundary, type: "turn/end", turn: 2 },
    });
    const child = header("child", { cwd: "/w", parentSession: "parent", seedLength: boundary + 1 });
    await backend.fork("parent", boundary, child);
    const parentRows = rowsOf(path, "parent");
    expect(rowsOf(path, "child")).toEqual(parentRows.slice(0, boundary + 1));
    expect(rowsOf(path, "child")[0]?.data).toMatch(/^\{ "turn" : 1/);
    const loaded = await backend.load("child");
    expect(loaded?.header).toEqual(child);
    expect(loaded?.events).toEqual(balancedLog(2, { toolCallsPerStep: 1 }));
    await backend.fork("parent", -1, header("empty-child", { parentSession: "parent" }));
    expect((await backend.load("empty-child"))?.events).toEqual([]);
  });

  it("reads the fork point's turn marker without loading the log", async () => {
    const { backend } = await fresh();
    const open = [...simpleTurn(0, 1), turnStart(TURN, 2), userMessage(TURN + 1, "more")];
    await backend.create(header("m"), serializeEvents(open));
    expect(await backend.forkPoint("m", undefined)).toMatchObject({
      length: TURN + 2,
      marker: { seq: TURN, type: "turn/start", turn: 2 },
    });
    expect((await backend.forkPoint("m", 1))?.marker).toEqual({
      seq: 0,
      type: "turn/start",
      turn: 1,
    });
    expect(await backend.forkPoint("none", 0)).toBeUndefined();
  });

  it("loads garbled or deleted trailing rows after the last turn/end as the intact prefix", async () => {
    const log = [
      ...simpleTurn(0, 1),
      turnStart(TURN, 2),
      userMessage(TURN + 1, "a"),
      ...simpleTurn(TURN, 2).slice(2, 5),
    ];
    let tried = 0;
    for (let seq = TURN; seq < log.length; seq++) {
      for (const damage of ["garble", "delete"] as const) {
        const { path, backend } = await fresh();
        await backend.create(header("t"), serializeEvents(log));
        raw(path, (db) => {
          const sql =
            damage === "garble"
              ? "UPDATE events SET data = substr(data, 1, length(data) - 3) WHERE session_id = 't' AND seq = ?"
              : "DELETE FROM events WHERE session_id = 't' AND seq = ?";
          db.prepare(sql).run(seq);
        });
        const loaded = await backend.load("t");
        expect(loaded?.events, `${damage} ${seq}`).toEqual(log.slice(0, seq));
        expect(loaded?.tornTail, `${damage} ${seq}`).toBe(
          seq < log.length - 1 || damage === "garble",
        );
        tried++;
      }
    }
    console.log(`torn tails: ${tried} damaged trailing rows loaded as the intact prefix`);
  });

  it("repairs a torn tail when opened for writing: deletes the damaged rows and closes the turn", async () => {
    const { path, backend } = await fresh();
    const log = [...simpleTurn(0, 1), turnStart(TURN, 2), userMessage(TURN + 1, "a")];
    await backend.create(
      header("r"),
      serializeEvents([...log, ...simpleTurn(TURN, 2).slice(2, 4)]),
    );
    raw(path, (db) =>
      db
        .prepare("UPDATE events SET data = 'garbage' WHERE session_id = 'r' AND seq = ?")
        .run(TURN + 2),
    );
    const store = new SessionStore({ backend });
    // Readers see the log as stored; crash repair is the writer's job (docs/readers.md).
    expect(await (await store.load("r")).readEvents()).toEqual(log);
    const session = await store.openForWriting("r");
    expect((await session.readEvents()).slice(0, TURN + 2)).toEqual(log);
    expect((await session.readEvents()).slice(TURN + 2).map((e) => e.type)).toEqual(["turn/end"]);
    expect(rowsOf(path, "r").map((row) => row.seq)).toEqual(
      Array.from({ length: TURN + 3 }, (_, i) => i),
    );
    await store.unload("r");
    expect((await backend.load("r"))?.tornTail).toBe(false);
  });

  it("reports a garbled row or a hole before the last turn/end as CORRUPT_LOG naming table and seq", async () => {
    for (const damage of [
      "UPDATE events SET data = '{' WHERE session_id = 'c' AND seq = 3",
      "DELETE FROM events WHERE session_id = 'c' AND seq = 3",
    ]) {
      const { path, backend } = await fresh();
      await backend.create(header("c"), serializeEvents(balancedLog(2)));
      raw(path, (db) => db.exec(damage));
      const error = await backend.load("c").catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "CORRUPT_LOG", details: { seq: 3 } });
      const location = (error as { details: { location: string } }).details.location;
      expect(location).toContain("events");
      expect(location).toContain('"c"');
      expect(location).toContain(path);
    }
  });

  it("lists from the session rows and one last-event lookup each, never loading a log", async () => {
    const { path, backend } = await fresh();
    await backend.create(
      header("old", { createdAt: 1, cwd: "/a" }),
      serializeEvents(balancedLog(2)),
    );
    await backend.create(
      header("new", { createdAt: 2, cwd: "/b" }),
      serializeEvents(simpleTurn(0, 1, { time: 77 })),
    );
    await backend.create(header("kid", { createdAt: 2, parentSession: "old", cwd: "/a" }), []);
    // A garbled middle row would make a load fail; listing must not notice it.
    raw(path, (db) =>
      db.exec("UPDATE events SET data = 'garbage' WHERE session_id = 'old' AND seq = 2"),
    );
    const page = await backend.catalog.list({ limit: 10 });
    expect(page.sessions).toEqual([
      {
        header: header("new", { createdAt: 2, cwd: "/b" }),
        eventCount: TURN,
        updatedAt: 77,
        title: expect.any(String),
      },
      {
        header: header("kid", { createdAt: 2, cwd: "/a", parentSession: "old" }),
        eventCount: 0,
        updatedAt: 2,
      },
      {
        header: header("old", { createdAt: 1, cwd: "/a" }),
        eventCount: 2 * TURN,
        updatedAt: TIME,
        title: expect.any(String),
      },
    ]);
    expect(page.nextCursor).toBeUndefined();
    const first = await backend.catalog.list({ limit: 1 });
    expect(first.sessions.map((s) => s.header.id)).toEqual(["new"]);
    const rest = await backend.catalog.list({ limit: 5, cursor: first.nextCursor as string });
    expect(rest.sessions.map((s) => s.header.id)).toEqual(["kid", "old"]);
    const inA = await backend.catalog.list({ limit: 5, cwd: "/a", parentSession: "old" });
    expect(inA.sessions.map((s) => s.header.id)).toEqual(["kid"]);
    await expect(backend.load("old")).rejects.toMatchObject({ code: "CORRUPT_LOG" });
  });

  it("deletes a session with its rows, keeping its children's copies", async () => {
    const { path, backend } = await fresh();
    await backend.create(header("p"), serializeEvents(balancedLog(2)));
    await backend.fork("p", TURN - 1, header("k", { parentSession: "p", seedLength: TURN }));
    expect(await backend.delete("p")).toBe(true);
    expect(await backend.delete("p")).toBe(false);
    expect(rowsOf(path, "p")).toEqual([]);
    expect((await backend.load("k"))?.events).toEqual(balancedLog(1));
  });
});

/** How long a test waits for a change to be reported before it fails: generous, never a bound checked. */
const WAIT_MS = 10_000;

/** A subscription that counts its calls and lets a test wait for the next one. */
interface Watcher {
  readonly calls: number;
  /** Resolves once the subscription has been called more than `after` times. */
  calledAfter(after: number): Promise<void>;
  readonly unsubscribe: () => void;
}

function watcher(backend: SqliteBackend, id: string, onCall?: () => void): Watcher {
  let calls = 0;
  const wakers = new Set<() => void>();
  const unsubscribe = backend.subscribe(id, () => {
    calls++;
    onCall?.();
    for (const wake of [...wakers]) wake();
  });
  return {
    get calls() {
      return calls;
    },
    unsubscribe,
    calledAfter: (after) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          wakers.delete(wake);
          reject(new Error(`expected a change of ${id} to be reported, none in ${WAIT_MS} ms`));
        }, WAIT_MS);
        const wake = () => {
          if (calls <= after) return;
          clearTimeout(timer);
          wakers.delete(wake);
          resolve();
        };
        wakers.add(wake);
        wake();
      }),
  };
}

/**
 * Two backends on one database file stand for two processes: each has its own connections, and
 * learns of the other's commits only from the database.
 *
 * How each was seen to fail without the change (each mutation alone, then restored): against the
 * backend as it was (no loadFrom, no subscribe) all ten fail — "b.loadFrom is not a function",
 * "backend.subscribe is not a function", `polling` undefined. loadFrom always answering from
 * fromSeq fails "answers with the whole log from 0…" and "…garbled last row…" (from fromSeq, not
 * 0). The hub without the poller's hooks fails "…for the changed session only" (`polling` false)
 * and the creation, repair and unsubscribe tests after the 10 s wait ("expected a change of e to
 * be reported"). A poller that reports every watched id on any data_version change fails "quiet"
 * (1 call, not 0). Heads without the last row's time fail the repair test after the wait. close()
 * without stopping the poller fails "polling" (true). The own-write notifies removed fail the
 * :memory: test (0 calls, not 1).
 */
describe("reading what is new and watching, two backends on one file", () => {
  async function pair(): Promise<{ path: string; a: SqliteBackend; b: SqliteBackend }> {
    const { path, backend: a } = await fresh();
    return { path, a, b: await openAt(path) };
  }

  it("loadFrom reads the other backend's appends from the seq asked, and no events when nothing is new", async () => {
    const { a, b } = await pair();
    await a.create(header("s"), serializeEvents(simpleTurn(0, 1)));
    expect(await b.loadFrom("s", TURN)).toEqual({
      header: header("s"),
      events: [],
      tornTail: false,
      from: TURN,
    });
    await a.append("s", TURN, serializeEvents(simpleTurn(TURN, 2)));
    expect(await b.loadFrom("s", TURN)).toEqual({
      header: header("s"),
      events: simpleTurn(TURN, 2),
      tornTail: false,
      from: TURN,
    });
    expect(await b.loadFrom("s", 2 * TURN)).toMatchObject({ events: [], from: 2 * TURN });
    expect(await b.loadFrom("s", 0)).toMatchObject({ events: balancedLog(2), from: 0 });
    expect(await b.loadFrom("none", 1)).toBeUndefined();
  });

  it("loadFrom reads only the rows from fromSeq - 1 on: damage further back is not read again", async () => {
    const { path, a, b } = await pair();
    await a.create(header("d"), serializeEvents(balancedLog(2)));
    raw(path, (db) => db.exec("UPDATE events SET data = '{' WHERE session_id = 'd' AND seq = 3"));
    expect(await b.loadFrom("d", 2 * TURN)).toMatchObject({ events: [], from: 2 * TURN });
    expect(await b.loadFrom("d", TURN + 1)).toMatchObject({
      events: balancedLog(2).slice(TURN + 1),
      from: TURN + 1,
    });
    // From seq 2 on, the damaged row is read, before a turn/end: corruption, as load reports it.
    await expect(b.loadFrom("d", 2)).rejects.toMatchObject({
      code: "CORRUPT_LOG",
      details: { seq: 3 },
    });
    await expect(b.load("d")).rejects.toMatchObject({ code: "CORRUPT_LOG", details: { seq: 3 } });
  });

  it("loadFrom answers with the whole log from 0 when the stored log is shorter than the prefix asked (deleted and created again)", async () => {
    const { a, b } = await pair();
    await a.create(header("s"), serializeEvents(balancedLog(2)));
    expect(await b.loadFrom("s", 2 * TURN)).toMatchObject({ events: [], from: 2 * TURN });
    expect(await a.delete("s")).toBe(true);
    expect(await b.loadFrom("s", 2 * TURN)).toBeUndefined();
    const again = simpleTurn(0, 1, { prompt: "again" });
    await a.create(header("s", { createdAt: TIME + 1 }), serializeEvents(again));
    expect(await b.loadFrom("s", 2 * TURN)).toEqual({
      header: header("s", { createdAt: TIME + 1 }),
      events: again,
      tornTail: false,
      from: 0,
    });
    expect(await b.loadFrom("s", TURN + 1)).toMatchObject({ events: again, from: 0 });
    expect(await b.loadFrom("s", TURN)).toMatchObject({ events: [], from: TURN });
  });

  it("loadFrom reports a garbled last row as a torn tail, as load does", async () => {
    const { path, a, b } = await pair();
    const log = [
      ...simpleTurn(0, 1),
      turnStart(TURN, 2),
      userMessage(TURN + 1, "a"),
      ...simpleTurn(TURN, 2).slice(2, 5),
    ];
    const last = log.length - 1;
    await a.create(header("t"), serializeEvents(log));
    raw(path, (db) =>
      db
        .prepare(
          "UPDATE events SET data = substr(data, 1, length(data) - 3) WHERE session_id = 't' AND seq = ?",
        )
        .run(last),
    );
    expect(await b.load("t")).toMatchObject({ events: log.slice(0, last), tornTail: true });
    expect(await b.loadFrom("t", TURN)).toEqual({
      header: header("t"),
      events: log.slice(TURN, last),
      tornTail: true,
      from: TURN,
    });
    expect(await b.loadFrom("t", last)).toMatchObject({ events: [], tornTail: true, from: last });
    // The row before seq `last + 1` is the damaged one: the log no longer holds that prefix.
    expect(await b.loadFrom("t", last + 1)).toMatchObject({
      events: log.slice(0, last),
      tornTail: true,
      from: 0,
    });
  });

  it("stores a session created without events at once: listed with eventCount 0, readable, watchable, appendable and forkable", async () => {
    // Storing the row at once already held (create inserts it before any event); reading and
    // watching it from the other backend is what is new here.
    const { a, b } = await pair();
    const created = watcher(b, "e");
    await a.create(header("e", { cwd: "/w" }), []);
    await created.calledAfter(0);
    expect((await b.catalog.list({ limit: 10 })).sessions).toEqual([
      { header: header("e", { cwd: "/w" }), eventCount: 0, updatedAt: header("e").createdAt },
    ]);
    expect(await b.loadFrom("e", 0)).toEqual({
      header: header("e", { cwd: "/w" }),
      events: [],
      tornTail: false,
      from: 0,
    });
    await a.fork("e", -1, header("e-child", { parentSession: "e" }));
    expect((await b.load("e-child"))?.events).toEqual([]);
    await a.append("e", 0, serializeEvents(simpleTurn(0, 1)));
    expect(await b.loadFrom("e", 0)).toMatchObject({ events: simpleTurn(0, 1), from: 0 });
    const listed = (await b.catalog.list({ limit: 10 })).sessions.map((s) => [
      s.header.id,
      s.eventCount,
    ]);
    expect(listed).toEqual([
      ["e-child", 0],
      ["e", TURN],
    ]);
    created.unsubscribe();
  });

  it("tells a subscriber of the other backend's appends and deletes, for the changed session only", async () => {
    const { a, b } = await pair();
    await a.create(header("w"), serializeEvents(simpleTurn(0, 1)));
    await a.create(header("quiet"), serializeEvents(simpleTurn(0, 1)));
    const w = watcher(b, "w");
    const quiet = watcher(b, "quiet");
    expect(b.polling).toBe(true);
    await a.append("w", TURN, serializeEvents(simpleTurn(TURN, 2)));
    await w.calledAfter(0);
    // The look that reported w read quiet's head too, and found it unchanged.
    expect(quiet.calls).toBe(0);
    expect((await b.loadFrom("w", TURN))?.events).toEqual(simpleTurn(TURN, 2));
    const seen = w.calls;
    expect(await a.delete("w")).toBe(true);
    await w.calledAfter(seen);
    expect(await b.loadFrom("w", 2 * TURN)).toBeUndefined();
    expect(quiet.calls).toBe(0);
  });

  it("tells a subscriber of a repair that put back as many rows as it cut", async () => {
    const { path, a, b } = await pair();
    const log = [...simpleTurn(0, 1), turnStart(TURN, 2), userMessage(TURN + 1, "a")];
    await a.create(header("r"), serializeEvents([...log, userMessage(TURN + 2, "b")]));
    raw(path, (db) =>
      db.exec(`UPDATE events SET data = 'garbage' WHERE session_id = 'r' AND seq = ${TURN + 2}`),
    );
    const r = watcher(b, "r");
    // One closer where the torn row was: the last seq is the same, the row is not.
    await a.repair(
      "r",
      TURN + 2,
      serializeEvents([turnEnd(TURN + 2, 2, { kind: "interrupted" }, TIME + 5)]),
    );
    await r.calledAfter(0);
    expect(await b.loadFrom("r", TURN + 2)).toMatchObject({
      events: [turnEnd(TURN + 2, 2, { kind: "interrupted" }, TIME + 5)],
      tornTail: false,
    });
  });

  it("stops calling a subscription once it is unsubscribed", async () => {
    const { a, b } = await pair();
    await a.create(header("u"), serializeEvents(simpleTurn(0, 1)));
    const gone = watcher(b, "u");
    const stays = watcher(b, "u");
    gone.unsubscribe();
    gone.unsubscribe();
    await a.append("u", TURN, serializeEvents(simpleTurn(TURN, 2)));
    // Both subscriptions of one id hear of a change in the same call of the hub.
    await stays.calledAfter(0);
    expect(gone.calls).toBe(0);
    stays.unsubscribe();
    expect(b.polling).toBe(false);
  });

  it("runs the poller only while a session is watched, and stops it on close", async () => {
    const { b } = await pair();
    expect(b.polling).toBe(false);
    const first = b.subscribe("x", () => {});
    const second = b.subscribe("y", () => {});
    expect(b.polling).toBe(true);
    first();
    expect(b.polling).toBe(true);
    second();
    expect(b.polling).toBe(false);
    const again = b.subscribe("x", () => {});
    expect(b.polling).toBe(true);
    await b.close();
    expect(b.polling).toBe(false);
    again();
    expect(b.polling).toBe(false);
    expect(() => b.subscribe("x", () => {})).toThrow(/closed/);
  });

  it("tells subscribers of its own writes once they have committed: create, append, fork, repair, delete", async () => {
    // A private database has no poller: every call here comes from the write path itself.
    const memory = await openAt(":memory:");
    // What a subscriber reads when told (a read runs at once, on the calling stack): the write it
    // hears of is already committed.
    const reads: Promise<StoredSuffix | undefined>[] = [];
    const parent = watcher(memory, "p", () => reads.push(memory.loadFrom("p", 0)));
    const child = watcher(memory, "k");
    await memory.create(header("p"), []);
    expect(parent.calls).toBe(1);
    await memory.append("p", 0, serializeEvents(simpleTurn(0, 1)));
    expect(parent.calls).toBe(2);
    await memory.fork("p", TURN - 1, header("k", { parentSession: "p", seedLength: TURN }));
    expect([parent.calls, child.calls]).toEqual([2, 1]);
    await memory.append(
      "p",
      TURN,
      serializeEvents([turnStart(TURN, 2), userMessage(TURN + 1, "open")]),
    );
    await memory.repair(
      "p",
      TURN + 2,
      serializeEvents([turnEnd(TURN + 2, 2, { kind: "interrupted" })]),
    );
    expect(parent.calls).toBe(4);
    expect(await memory.delete("p")).toBe(true);
    expect(parent.calls).toBe(5);
    const lengths = (await Promise.all(reads)).map((log) => log?.events.length);
    expect(lengths).toEqual([0, TURN, TURN + 2, TURN + 3, undefined]);
    // A write that fails changes nothing and tells no one.
    await expect(memory.append("k", 0, serializeEvents(simpleTurn(0, 1)))).rejects.toMatchObject({
      code: "SEQ_CONFLICT",
    });
    expect(await memory.delete("p")).toBe(false);
    expect([parent.calls, child.calls]).toEqual([5, 1]);
  });
});

/** A child process running the store over the SQLite backend, driven line by line over stdio. */
interface Writer {
  send(command: string): void;
  next(): Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
}

const WRITER_SCRIPT = `
import { createInterface } from "node:readline";
const [backendUrl, storeUrl, dbPath, mode, sessionId, batches] = process.argv.slice(2);
const { SqliteBackend } = await import(backendUrl);
const { SessionStore } = await import(storeUrl);
const commands = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
const store = new SessionStore({ backend: await SqliteBackend.open(dbPath) });
const session = mode === "create" ? await store.create({ id: sessionId }) : await store.load(sessionId);
let turn = (await session.readEvents()).filter((e) => e.type === "turn/start").length;
send({ ready: true });
await commands.next();
let appended = 0;
let error;
try {
  for (let i = 0; i < Number(batches); i++) {
    const seq = session.nextSeq;
    const time = Date.now();
    turn++;
    await session.append([
      { type: "turn/start", seq, time, data: { turn, trigger: { kind: "message", source: { kind: "user" } } } },
      { type: "user/message", seq: seq + 1, time, data: { content: [{ type: "text", text: "p" + turn }], source: { kind: "user" } }, surfaceOp: "append" },
      { type: "step/start", seq: seq + 2, time, data: { turn, step: 1 } },
      { type: "step/end", seq: seq + 3, time, data: { turn, step: 1 } },
      { type: "turn/end", seq: seq + 4, time, data: { turn, reason: { kind: "completed" } } },
    ]);
    appended++;
  }
} catch (e) {
  error = { code: e.code ?? null, message: String(e.message) };
}
send({ done: true, appended, error });
await commands.next();
await store.close();
process.exit(0);
`;

function spawnWriter(dir: string, args: string[]): Writer {
  const script = join(dir, "writer.mjs");
  writeFileSync(script, WRITER_SCRIPT);
  const modules = ["src/store/sqlite/sqlite-backend.ts", "src/store/session-store.ts"].map(
    (file) => pathToFileURL(join(ROOT, file)).href,
  );
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", script, ...modules, ...args],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[
    Symbol.asyncIterator
  ]();
  return {
    send: (command) => child.stdin?.write(`${command}\n`),
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error(`the writer ended early: ${stderr}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    },
    exited: new Promise((resolve) => child.on("exit", resolve)),
  };
}

/** Starts writers, waits until each is ready, then lets them all go at once. */
async function runTogether(writers: Writer[]): Promise<Record<string, unknown>[]> {
  for (const writer of writers) expect(await writer.next()).toEqual({ ready: true });
  for (const writer of writers) writer.send("go");
  return Promise.all(writers.map((writer) => writer.next()));
}

function seqsOf(path: string, id: string): number[] {
  return raw(path, (db) =>
    (
      db.prepare("SELECT seq FROM events WHERE session_id = ? ORDER BY seq").all(id) as {
        seq: number;
      }[]
    ).map((row) => row.seq),
  );
}

describe("two processes, one SQLite database", () => {
  const BATCHES = 200;

  it("appends to different sessions concurrently: no error reaches either, every row present once", async () => {
    const dir = tempDir();
    const path = join(dir, "store.db");
    await (await SqliteBackend.open(path)).close();
    const writers = ["left", "right"].map((id) =>
      spawnWriter(dir, [path, "create", id, String(BATCHES)]),
    );
    const results = await runTogether(writers);
    for (const writer of writers) writer.send("exit");
    expect(await Promise.all(writers.map((w) => w.exited))).toEqual([0, 0]);
    expect(results).toEqual([
      { done: true, appended: BATCHES },
      { done: true, appended: BATCHES },
    ]);
    for (const id of ["left", "right"]) {
      expect(seqsOf(path, id)).toEqual(Array.from({ length: BATCHES * 5 }, (_, i) => i));
    }
    const backend = await openAt(path);
    expect((await backend.load("left"))?.events).toHaveLength(BATCHES * 5);
    console.log(
      `two processes: ${2 * BATCHES} batches to two sessions, no error, no duplicate seq`,
    );
  });

  it("lets one process write a session; the other gets SESSION_BUSY, and so does a delete", async () => {
    const dir = tempDir();
    const path = join(dir, "store.db");
    const setup = await SqliteBackend.open(path);
    await setup.create(header("shared"), serializeEvents(simpleTurn(0, 1)));
    await setup.close();
    const writers = [0, 1].map(() => spawnWriter(dir, [path, "load", "shared", String(BATCHES)]));
    const results = await runTogether(writers);
    const winners = results.filter((r) => r.appended === BATCHES && r.error === undefined);
    const losers = results.filter((r) => r.appended === 0);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(losers[0]?.error).toMatchObject({
      code: expect.stringMatching(/SESSION_BUSY|SEQ_CONFLICT/),
    });
    // The winner still holds the writer lock: deleting from here is refused.
    const backend = await openAt(path);
    await expect(backend.delete("shared")).rejects.toMatchObject({ code: "SESSION_BUSY" });
    for (const writer of writers) writer.send("exit");
    expect(await Promise.all(writers.map((w) => w.exited))).toEqual([0, 0]);
    expect(seqsOf(path, "shared")).toEqual(Array.from({ length: TURN + BATCHES * 5 }, (_, i) => i));
    const loaded = await backend.load("shared");
    expect(loaded?.events.map((e) => (e as SessionEvent).seq)).toEqual(
      Array.from({ length: TURN + BATCHES * 5 }, (_, i) => i),
    );
    expect(await backend.delete("shared")).toBe(true);
    const lost = losers[0]?.error as { code?: string } | undefined;
    console.log(
      `same session: one writer appended ${BATCHES} batches, the other got ${lost?.code}`,
    );
  });
});
