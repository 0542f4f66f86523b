// The search indexes are derived data: a store opened without them (an older store, or dropped tables) builds them from its events.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { type PostgresBackend, SessionStore, SqliteBackend } from "../src/index.js";
import { balancedLog, header } from "../src/testing/events.js";
import { describePostgres, makePostgresHarness } from "./postgres-harness.js";

const temp = mkdtempSync(join(tmpdir(), "seedline-search-index-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Two sessions, "a" with one turn and "b" with two ("prompt 2" at seq 10), created through the backend. */
async function fill(backend: SqliteBackend | PostgresBackend): Promise<void> {
  await backend.create(header("a", { cwd: "/w" }), balancedLog(1));
  await backend.create(header("b", { cwd: "/w", createdAt: 2 }), balancedLog(2));
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
