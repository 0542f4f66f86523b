// The search indexes are derived data: a store opened without them (an older store, or dropped tables) builds them from its events.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import {
  type PostgresBackend,
  SessionStore,
  SqliteBackend,
  serializeEvents,
} from "../src/index.js";
import { balancedLog, header } from "../src/testing/events.js";
import { describePostgres, makePostgresHarness } from "./postgres-harness.js";

const temp = mkdtempSync(join(tmpdir(), "seedline-search-index-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Two sessions, "a" with one turn and "b" with two ("prompt 2" at seq 10), created through the backend. */
async function fill(backend: SqliteBackend | PostgresBackend): Promise<void> {
  await backend.create(header("a", { cwd: "/w" }), serializeEvents(balancedLog(1)));
  await backend.create(header("b", { cwd: "/w", createdAt: 2 }), serializeEvents(balancedLog(2)));
}

describe("SQLite search index", () => {
  it("is built from the events when a store opens without it, and left out of the layout check", async () => {
    const path = join(temp, "store.db");
    const first = await SqliteBackend.open(path);
    await fill(first);
    await first.close();
    // A store as an older build left it: no index. (Without the rebuild, the search finds nothing.)
    const raw = new Database(path);
    raw.exec("DROP TABLE search_fts; DROP TABLE search_texts;");
    raw.close();
    const store = new SessionStore({ backend: await SqliteBackend.open(path) });
    const found = await store.search({ query: "prompt 2" });
    expect(found.results.map((r) => r.sessionId)).toEqual(["b"]);
    expect(found.results[0]?.excerpts.map((e) => e.seq)).toEqual([10]);
    await store.close();
  });
});

describe("SQLite search index backfill", () => {
  // The backfill read every event row into one array (`all`): M3's server, opened over a
  // 1M-event store made without the index, started at 582 MiB instead of 64. It now reads pages
  // of 4,096 rows; this case puts sessions on both sides of page boundaries.
  it("fills the index a page at a time, every session's texts found whatever page they fell on", async () => {
    const path = join(temp, "paged.db");
    const first = await SqliteBackend.open(path);
    await first.create(header("big", { cwd: "/w" }), serializeEvents(balancedLog(600)));
    await first.create(
      header("small", { cwd: "/w", createdAt: 2 }),
      serializeEvents(balancedLog(2)),
    );
    await first.close();
    const raw = new Database(path);
    const rows = (raw.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    raw.exec("DROP TABLE search_fts; DROP TABLE search_texts; DROP TABLE search_unindexed;");
    raw.close();
    expect(rows).toBeGreaterThan(4096);
    const store = new SessionStore({ backend: await SqliteBackend.open(path) });
    expect((await store.search({ query: "prompt 600" })).results.map((r) => r.sessionId)).toEqual([
      "big",
    ]);
    const both = (await store.search({ query: "prompt 2" })).results.map((r) => r.sessionId);
    expect(both.sort()).toEqual(["big", "small"]);
    await store.close();
  });
});

describe("SQLite search index of fork children", () => {
  /** Rows of the trigram index (one per indexed text) and fork prefixes waiting for it. */
  function indexed(path: string): { rows: number; waiting: number } {
    const raw = new Database(path, { readonly: true });
    try {
      const rows = raw.prepare("SELECT count(*) AS n FROM search_fts_docsize").get() as {
        n: number;
      };
      const waiting = raw.prepare("SELECT count(*) AS n FROM search_unindexed").get() as {
        n: number;
      };
      return { rows: rows.n, waiting: waiting.n };
    } finally {
      raw.close();
    }
  }

  // Before the fork left its prefix to the next search, the fork put every inherited text through
  // the trigram tokenizer in its own transaction (B4 SQLite went from 0.99x to 2.5x its copy):
  // this test failed at the first `indexed` (no search_unindexed table; the child's rows indexed).
  it("leaves a fork's inherited texts out of the trigram index until the next search, which finds them", async () => {
    const path = join(temp, "forks.db");
    const backend = await SqliteBackend.open(path);
    await fill(backend);
    const before = indexed(path).rows;
    const store = new SessionStore({ backend });
    await store.fork("b", { childSessionId: "child" });
    await store.fork("child", { childSessionId: "grandchild", boundary: 8 });
    expect(indexed(path)).toEqual({ rows: before, waiting: 2 });
    // An append to the child is indexed at once; its inherited texts still wait.
    await store.append("child", balancedLog(3).slice(balancedLog(2).length));
    expect(indexed(path).waiting).toBe(2);

    // "prompt 2" (seq 10 of b) is rare: found through the trigram index once the prefixes are in.
    const found = await store.search({ query: "prompt 2" });
    expect(found.results.map((r) => r.sessionId).sort()).toEqual(["b", "child"]);
    expect(indexed(path).waiting).toBe(0);
    expect((await store.search({ query: "prompt 3" })).results.map((r) => r.sessionId)).toEqual([
      "child",
    ]);
    expect(
      (await store.search({ query: "prompt 1" })).results.map((r) => r.sessionId).sort(),
    ).toEqual(["a", "b", "child", "grandchild"]);
    await store.close();
  });

  it("deletes and cuts a child whose prefix waits, leaving the trigram index whole", async () => {
    const path = join(temp, "forks-deleted.db");
    const backend = await SqliteBackend.open(path);
    await fill(backend);
    const store = new SessionStore({ backend });
    await store.fork("b", { childSessionId: "gone" });
    await store.fork("b", { childSessionId: "kept" });
    // Deleting a child whose rows the index never held must not ask the index to forget them
    // (SQLite answers SQLITE_CORRUPT_VTAB when it is asked to).
    await store.delete("gone");
    await backend.repair("kept", 3, []);
    expect(indexed(path).waiting).toBe(1);
    expect(
      (await store.search({ query: "prompt 1" })).results.map((r) => r.sessionId).sort(),
    ).toEqual(["a", "b", "kept"]);
    expect((await store.search({ query: "prompt 2" })).results.map((r) => r.sessionId)).toEqual([
      "b",
    ]);
    const raw = new Database(path);
    expect(
      raw.prepare("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')").run(),
    ).toBeDefined();
    raw.close();
    await store.close();
  });

  it("gets the table of waiting prefixes on open when an earlier build made the index without it", async () => {
    const path = join(temp, "older-index.db");
    const first = await SqliteBackend.open(path);
    await fill(first);
    await first.close();
    const raw = new Database(path);
    raw.exec("DROP TABLE search_unindexed;");
    raw.close();
    const store = new SessionStore({ backend: await SqliteBackend.open(path) });
    await store.fork("a", { childSessionId: "child" });
    expect(
      (await store.search({ query: "prompt 1" })).results.map((r) => r.sessionId).sort(),
    ).toEqual(["a", "b", "child"]);
    await store.close();
  });
});

describePostgres("PostgreSQL search index", () => {
  it("is built from the events when a store opens without it, and left out of the layout check", async () => {
    const harness = await makePostgresHarness();
    try {
      const first = await harness.open();
      await fill(first);
      await first.close();
      await harness.sql("DROP TABLE search_texts");
      const store = new SessionStore({ backend: await harness.open() });
      const found = await store.search({ query: "PROMPT 2" });
      expect(found.results.map((r) => r.sessionId)).toEqual(["b"]);
      expect(found.results[0]?.excerpts.map((e) => e.seq)).toEqual([10]);
    } finally {
      await harness.cleanup();
    }
  });
});
