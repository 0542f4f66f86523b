// Proves the generated SQLite layout is layout 4 of the storage spec, and that its generator is strict and stable.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  type EventsRow,
  type SessionsRow,
  SQLITE_DDL,
  SQLITE_LAYOUT_VERSION,
  SQLITE_PRAGMAS,
  SQLITE_TABLES,
} from "../../../generated/sqlite-layout.gen.js";
import { loadSchemaSet, schemaFile } from "../../../scripts/lib/schema-set.js";
import { SqliteLayoutError, validateSqliteLayout } from "../../../scripts/lib/sqlite-layout.js";
import {
  renderSqliteDdl,
  renderSqliteFiles,
  renderSqliteModule,
} from "../../../scripts/render-sqlite.js";
import {
  readSqliteQueries,
  renderSqliteQueries,
  SqliteQueryError,
} from "../../../scripts/render-sqlite-queries.js";

const SCHEMA_DIR = fileURLToPath(new URL("../../../schema", import.meta.url));
const GENERATED_DIR = fileURLToPath(new URL("../../../generated", import.meta.url));

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

/** Fresh in-memory database with the layout applied and foreign keys on. */
function layoutDb(): Database.Database {
  const db = new Database(":memory:");
  db.pragma("foreign_keys = ON");
  db.exec(SQLITE_DDL);
  return db;
}

function columnsOf(db: Database.Database, table: string): ColumnInfo[] {
  return (db.pragma(`table_info(${table})`) as ColumnInfo[]).map(({ name, type, notnull, pk }) => ({
    name,
    type,
    notnull,
    pk,
  }));
}

function queryPlan(db: Database.Database, sql: string): string {
  // The plan does not depend on the values bound, so each parameter gets NULL.
  const params = (sql.match(/\?/g) ?? []).map(() => null);
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
  return rows.map((row) => row.detail).join("\n");
}

describe("generated SQLite layout", () => {
  const tempDirs: string[] = [];
  afterEach(() => {
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("creates exactly the STRICT tables sessions and events (layout 4; the catalog is not in it)", () => {
    const tables = (
      layoutDb().pragma("table_list") as { schema: string; name: string; strict: number }[]
    )
      .filter((t) => t.schema === "main" && !t.name.startsWith("sqlite_"))
      .map(({ name, strict }) => ({ name, strict }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(tables).toEqual([
      { name: "events", strict: 1 },
      { name: "sessions", strict: 1 },
    ]);
  });

  it("declares the sessions columns of layout 4", () => {
    expect(columnsOf(layoutDb(), "sessions")).toEqual([
      { name: "id", type: "TEXT", notnull: 1, pk: 1 },
      { name: "version", type: "INTEGER", notnull: 1, pk: 0 },
      { name: "created_at", type: "INTEGER", notnull: 1, pk: 0 },
      { name: "cwd", type: "TEXT", notnull: 0, pk: 0 },
      { name: "parent_session", type: "TEXT", notnull: 0, pk: 0 },
      { name: "seed_length", type: "INTEGER", notnull: 0, pk: 0 },
    ]);
  });

  it("declares the events columns of layout 4 with the key (session_id, seq)", () => {
    expect(columnsOf(layoutDb(), "events")).toEqual([
      { name: "session_id", type: "TEXT", notnull: 1, pk: 1 },
      { name: "seq", type: "INTEGER", notnull: 1, pk: 2 },
      { name: "type", type: "TEXT", notnull: 1, pk: 0 },
      { name: "time", type: "INTEGER", notnull: 1, pk: 0 },
      { name: "data", type: "TEXT", notnull: 1, pk: 0 },
      { name: "source_event_seqs", type: "TEXT", notnull: 0, pk: 0 },
      { name: "surface_op", type: "TEXT", notnull: 0, pk: 0 },
    ]);
  });

  it("makes events reference sessions(id) with ON DELETE CASCADE, and only that", () => {
    const db = layoutDb();
    const keys = db.pragma("foreign_key_list(events)") as Record<string, unknown>[];
    expect(keys.map(({ table, from, to, on_delete }) => ({ table, from, to, on_delete }))).toEqual([
      { table: "sessions", from: "session_id", to: "id", on_delete: "CASCADE" },
    ]);
    expect(db.pragma("foreign_key_list(sessions)")).toEqual([]);

    db.prepare("INSERT INTO sessions (id, version, created_at) VALUES (?, 0, 1)").run("s");
    db.prepare("INSERT INTO events VALUES ('s', 0, 'turn/start', 1, '{}', NULL, NULL)").run();
    db.prepare("DELETE FROM sessions WHERE id = 's'").run();
    expect(db.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 0 });
  });

  it("creates the listing indexes with their key order and directions", () => {
    const db = layoutDb();
    const indexes = (db.pragma("index_list(sessions)") as { name: string; origin: string }[])
      .filter((index) => index.origin === "c")
      .map((index) => index.name)
      .sort();
    expect(indexes).toEqual([
      "sessions_by_created",
      "sessions_by_cwd",
      "sessions_by_parent_session",
    ]);
    const keyOf = (index: string) =>
      (db.pragma(`index_xinfo(${index})`) as { name: string; desc: number; key: number }[])
        .filter((column) => column.key === 1)
        .map(({ name, desc }) => [name, desc]);
    expect(keyOf("sessions_by_created")).toEqual([
      ["created_at", 1],
      ["id", 1],
    ]);
    expect(keyOf("sessions_by_cwd")).toEqual([
      ["cwd", 0],
      ["created_at", 1],
      ["id", 1],
    ]);
    expect(keyOf("sessions_by_parent_session")).toEqual([
      ["parent_session", 0],
      ["created_at", 1],
      ["id", 1],
    ]);
    const eventIndexes = db.pragma("index_list(events)") as { origin: string }[];
    expect(eventIndexes.map((index) => index.origin)).toEqual(["pk"]);
  });

  it("pages list() newest first through an index, without a sort", () => {
    const db = layoutDb();
    const page = "(created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 10";
    const plans = {
      sessions_by_created: queryPlan(db, `SELECT * FROM sessions WHERE ${page}`),
      sessions_by_cwd: queryPlan(db, `SELECT * FROM sessions WHERE cwd = ? AND ${page}`),
      sessions_by_parent_session: queryPlan(
        db,
        `SELECT * FROM sessions WHERE parent_session = ? AND ${page}`,
      ),
    };
    for (const [index, plan] of Object.entries(plans)) {
      expect(plan).toContain(`USING INDEX ${index} `);
      expect(plan).not.toContain("TEMP B-TREE");
    }
    const lastEvent = "SELECT seq, time FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1";
    expect(queryPlan(db, lastEvent)).toMatch(/^SEARCH events USING INDEX \S+ \(session_id=\?\)$/);
  });

  it("lists by activity through catalog_by_activity and matches id prefixes by a key range, without a sort", async () => {
    const { SQLITE_QUERIES } = await import("../../../generated/sqlite-queries.gen.js");
    const db = layoutDb();
    for (const create of [
      "createCatalogSummaries",
      "createCatalogByActivity",
      "createSessionTitles",
    ] as const) {
      db.exec(SQLITE_QUERIES[create]);
    }
    const plan = (sql: string, params: Record<string, unknown>): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[])
        .map((row) => row.detail)
        .join("\n");
    const page = { afterAt: 1, afterId: "", limit: 10 };
    const byActivity = plan(SQLITE_QUERIES.listSessionsByActivity, page);
    expect(byActivity).toContain("USING INDEX catalog_by_activity ");
    expect(byActivity).not.toContain("TEMP B-TREE");
    const created = plan(SQLITE_QUERIES.listSessions, page);
    expect(created).toContain("USING INDEX sessions_by_created ");
    expect(created).not.toContain("TEMP B-TREE");
    const prefix = plan(SQLITE_QUERIES.idsWithPrefix, { prefix: "abcd", limit: 10 });
    expect(prefix).toMatch(/^SEARCH sessions USING COVERING INDEX \S+ \(id>\? AND id<\?\)$/);
  });

  it("reads a log from a seq and the heads of watched sessions through the primary keys, without a scan or a sort", async () => {
    const { SQLITE_QUERIES } = await import("../../../generated/sqlite-queries.gen.js");
    const db = layoutDb();
    const plan = (sql: string, params: Record<string, unknown>): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[])
        .map((row) => row.detail)
        .join("\n");
    // loadFrom with nothing new reads one row (the one before fromSeq): a range of the key. With
    // the queries as they were (the page read without @fromSeq, then eventLines) this failed: the plan was
    // "(session_id=?)", a read of the whole log.
    for (const limit of [-1, 10]) {
      expect(plan(SQLITE_QUERIES.eventRows, { sessionId: "s", fromSeq: 5, limit })).toMatch(
        /^SEARCH events USING INDEX \S+ \(session_id=\? AND seq>\?\)$/,
      );
    }
    // The lookup a page with a bad row makes walks the same key forwards, no sort.
    expect(plan(SQLITE_QUERIES.nextTurnEnd, { sessionId: "s", fromSeq: 5 })).toMatch(
      /^SEARCH events USING INDEX \S+ \(session_id=\? AND seq>\?\)$/,
    );
    const heads = plan(SQLITE_QUERIES.watchedHeads, { ids: '["a","b"]' });
    // The head reads the header columns besides the key (a recreated session differs there), so
    // its probe of `sessions` is by the key's index, no longer a covering one.
    expect(heads).toMatch(/SEARCH s USING (COVERING )?INDEX \S+ \(id=\?\)/);
    expect(heads).toMatch(/SEARCH e USING INDEX \S+ \(session_id=\?\)/);
    expect(heads).not.toMatch(/SCAN (s|e)\b|TEMP B-TREE/);
  });

  it("stamps user_version with layout version 4", () => {
    expect(SQLITE_LAYOUT_VERSION).toBe(4);
    const db = new Database(":memory:");
    expect(db.pragma("user_version", { simple: true })).toBe(0);
    db.exec(SQLITE_DDL);
    expect(db.pragma("user_version", { simple: true })).toBe(SQLITE_LAYOUT_VERSION);
  });

  it("leaves a database empty and unstamped when the DDL transaction rolls back", () => {
    const dir = mkdtempSync(join(tmpdir(), "seedline-sqlite-"));
    tempDirs.push(dir);
    const db = new Database(join(dir, "store.db"));
    db.exec("BEGIN IMMEDIATE");
    db.exec(SQLITE_DDL);
    db.exec("ROLLBACK");
    expect(db.pragma("user_version", { simple: true })).toBe(0);
    const tables = db.pragma("table_list") as { name: string }[];
    expect(tables.filter((t) => !t.name.startsWith("sqlite_"))).toEqual([]);
    db.close();
  });

  it("refuses values of the wrong type (STRICT)", () => {
    const db = layoutDb();
    const insert = db.prepare("INSERT INTO sessions (id, version, created_at) VALUES (?, ?, ?)");
    expect(() => insert.run("s", 0, "yesterday")).toThrow(/cannot store TEXT value in INTEGER/);
  });

  it("applies the generated pragmas to a file database", () => {
    expect(SQLITE_PRAGMAS).toEqual({
      foreignKeys: true,
      journalMode: "wal",
      busyTimeoutMs: expect.any(Number),
      synchronous: { fsync: "full", process: "normal" },
    });
    expect(SQLITE_PRAGMAS.busyTimeoutMs).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), "seedline-sqlite-"));
    tempDirs.push(dir);
    const db = new Database(join(dir, "store.db"));
    db.pragma(`foreign_keys = ${SQLITE_PRAGMAS.foreignKeys ? "ON" : "OFF"}`);
    expect(db.pragma(`journal_mode = ${SQLITE_PRAGMAS.journalMode}`, { simple: true })).toBe("wal");
    db.pragma(`busy_timeout = ${SQLITE_PRAGMAS.busyTimeoutMs}`);
    db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous.fsync}`);
    expect(db.pragma("synchronous", { simple: true })).toBe(2);
    db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous.process}`);
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(SQLITE_PRAGMAS.busyTimeoutMs);
    db.close();
  });

  it("names every column in SQLITE_TABLES, keyed by the member it stores", () => {
    const db = layoutDb();
    for (const table of Object.values(SQLITE_TABLES)) {
      const names = columnsOf(db, table.name).map((column) => column.name);
      expect(Object.values(table.columns)).toEqual(names);
    }
    expect(SQLITE_TABLES.events.columns.sessionId).toBe("session_id");
    expect(SQLITE_TABLES.sessions.columns.createdAt).toBe("created_at");
    expect(SQLITE_TABLES.events.columns.sourceEventSeqs).toBe("source_event_seqs");
    expect(SQLITE_TABLES.events.primaryKey).toEqual(["session_id", "seq"]);
    expect(SQLITE_TABLES.events.jsonColumns).toEqual(["data", "source_event_seqs", "surface_op"]);
    expect(SQLITE_TABLES.sessions.jsonColumns).toEqual([]);
  });

  it("reads rows in the shape of SessionsRow and EventsRow", () => {
    expectTypeOf<SessionsRow["cwd"]>().toEqualTypeOf<string | null>();
    expectTypeOf<SessionsRow["created_at"]>().toEqualTypeOf<number>();
    expectTypeOf<EventsRow["surface_op"]>().toEqualTypeOf<string | null>();
    const db = layoutDb();
    db.prepare(
      "INSERT INTO sessions (id, version, created_at, seed_length) VALUES ('s', 0, 5, 2)",
    ).run();
    db.prepare(
      `INSERT INTO events VALUES ('s', 0, 'user/message', 6, '{}', '[]', '"append"')`,
    ).run();
    const session = db.prepare("SELECT * FROM sessions").get() as SessionsRow;
    const event = db.prepare("SELECT * FROM events").get() as EventsRow;
    expect(session).toEqual({
      id: "s",
      version: 0,
      created_at: 5,
      cwd: null,
      parent_session: null,
      seed_length: 2,
    });
    expect(JSON.parse(event.surface_op ?? "null")).toBe("append");
  });
});

type LooseColumn = { name: string; type: string; notNull: boolean; encoding?: string } & Record<
  string,
  unknown
>;
type LooseTable = {
  name: string;
  columns: LooseColumn[];
  primaryKey: string[];
  indexes: { name: string; columns: { name: string; order: string }[] }[];
} & Record<string, unknown>;
type LooseLayout = { tables: LooseTable[] } & Record<string, unknown>;

function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`expected an item at ${index}, found none`);
  return item;
}

describe("render-sqlite", () => {
  const set = loadSchemaSet(SCHEMA_DIR);
  const doc = schemaFile(set, "storage/sqlite-layout.json");
  const layout = validateSqliteLayout(doc);

  /** Validates a broken copy of the committed layout document and returns the error. */
  function rejection(breakIt: (copy: LooseLayout) => void): SqliteLayoutError {
    const copy = structuredClone(doc) as LooseLayout;
    breakIt(copy);
    try {
      validateSqliteLayout(copy);
    } catch (error) {
      if (error instanceof SqliteLayoutError) return error;
      throw error;
    }
    throw new Error("expected the broken layout to be rejected, and it was accepted");
  }

  it("renders the same bytes twice", () => {
    expect(renderSqliteDdl(layout)).toBe(
      renderSqliteDdl(validateSqliteLayout(structuredClone(doc))),
    );
    expect(renderSqliteModule(layout)).toBe(renderSqliteModule(layout));
  });

  it("matches the committed generated files", () => {
    const files = renderSqliteFiles(set);
    expect(files.map((file) => file.path)).toEqual([
      "sqlite-layout.gen.sql",
      "sqlite-layout.gen.ts",
      "sqlite-queries.gen.ts",
    ]);
    for (const file of files) {
      expect(readFileSync(join(GENERATED_DIR, file.path), "utf8")).toBe(file.content);
    }
  });

  it("opens both files with the generated header and embeds the DDL without it", () => {
    const sql = renderSqliteDdl(layout);
    expect(sql.startsWith("-- Generated by scripts/render-sqlite.ts from ")).toBe(true);
    expect(renderSqliteModule(layout).startsWith("// Generated by scripts/render-sqlite.ts ")).toBe(
      true,
    );
    expect(sql.endsWith(SQLITE_DDL)).toBe(true);
    expect(SQLITE_DDL.startsWith("CREATE TABLE")).toBe(true);
  });

  it("rejects a column type outside TEXT and INTEGER", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 0).columns, 1).type = "BLOB";
    });
    expect(error.code).toBe("INVALID_SQLITE_LAYOUT");
    expect(error.path).toBe("/tables/0/columns/1/type");
    expect(error.message).toContain("/tables/0/columns/1/type");
    expect(error.message).toContain('"BLOB"');
  });

  it("rejects a primary key naming a missing column", () => {
    const error = rejection((copy) => {
      at(copy.tables, 0).primaryKey = ["session"];
    });
    expect(error.path).toBe("/tables/0/primaryKey/0");
    expect(error.message).toContain('"session"');
  });

  it("rejects a document without a version", () => {
    const error = rejection((copy) => {
      Reflect.deleteProperty(copy, "version");
    });
    expect(error.path).toBe("/version");
    expect(error.message).toContain("/version");
  });

  it("rejects an unknown property", () => {
    const error = rejection((copy) => {
      at(copy.tables, 1).withoutRowid = true;
    });
    expect(error.path).toBe("/tables/1/withoutRowid");
  });

  it("rejects an index on a missing column", () => {
    const error = rejection((copy) => {
      at(at(at(copy.tables, 0).indexes, 1).columns, 0).name = "folder";
    });
    expect(error.path).toBe("/tables/0/indexes/1/columns/0/name");
  });

  it("rejects a reference to a missing table", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 1).columns, 0).references = { table: "session", column: "id" };
    });
    expect(error.path).toBe("/tables/1/columns/0/references/table");
  });

  it("rejects a reference to a column that is not the primary key", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 1).columns, 0).references = { table: "sessions", column: "cwd" };
    });
    expect(error.path).toBe("/tables/1/columns/0/references/column");
  });

  it("rejects two tables with one name", () => {
    const error = rejection((copy) => {
      at(copy.tables, 1).name = "sessions";
    });
    expect(error.path).toBe("/tables/1/name");
  });

  it("rejects an index named like a table", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 0).indexes, 0).name = "events";
    });
    expect(error.path).toBe("/tables/0/indexes/0/name");
  });

  it("rejects JSON encoding on an INTEGER column", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 1).columns, 1).encoding = "json";
    });
    expect(error.path).toBe("/tables/1/columns/1/type");
  });

  it("rejects a nullable primary key column", () => {
    const error = rejection((copy) => {
      at(at(copy.tables, 0).columns, 0).notNull = false;
    });
    expect(error.path).toBe("/tables/0/primaryKey/0");
  });
});

describe("render-sqlite queries", () => {
  const set = loadSchemaSet(SCHEMA_DIR);
  const layout = validateSqliteLayout(schemaFile(set, "storage/sqlite-layout.json"));
  const text = readSqliteQueries(set) ?? "";

  /** Renders `queries` and returns the error it is rejected with. */
  function rejection(queries: string): SqliteQueryError {
    try {
      renderSqliteQueries(layout, queries);
    } catch (error) {
      if (error instanceof SqliteQueryError) return error;
      throw error;
    }
    throw new Error("expected the queries to be rejected, and they were accepted");
  }

  it("renders the same bytes twice, every query prepared on the layout", async () => {
    expect(text).toContain("-- name: insertEvent");
    expect(renderSqliteQueries(layout, text)).toBe(renderSqliteQueries(layout, text));
    const { SQLITE_QUERIES, SQLITE_QUERY_PARAMS } = await import(
      "../../../generated/sqlite-queries.gen.js"
    );
    const db = layoutDb();
    // The CREATEs first, as generation does: the catalog, titles and search statements use
    // tables that the open makes, not the layout.
    for (const sql of Object.values(SQLITE_QUERIES)) {
      if (/^\s*CREATE\b/i.test(sql)) db.prepare(sql).run();
    }
    for (const sql of Object.values(SQLITE_QUERIES)) {
      expect(() => db.prepare(sql)).not.toThrow();
      if (/^\s*CREATE\b/i.test(sql)) db.prepare(sql).run();
    }
    expect(SQLITE_QUERY_PARAMS.insertEvent).toEqual([
      "sessionId",
      "seq",
      "type",
      "time",
      "data",
      "sourceEventSeqs",
      "surfaceOp",
    ]);
  });

  it("rejects a query that does not prepare on the layout, naming it", () => {
    const error = rejection(`${text}\n-- name: brokenQuery\nSELECT nope FROM sessions;\n`);
    expect(error.code).toBe("INVALID_SQLITE_QUERY");
    expect(error.query).toBe("brokenQuery");
    expect(error.message).toContain("brokenQuery");
    expect(error.message).toContain("no such column");
  });

  it("rejects two statements under one name", () => {
    const error = rejection("-- name: twoOfThem\nSELECT 1;\nSELECT 2;\n");
    expect(error.query).toBe("twoOfThem");
  });

  it("rejects a positional parameter", () => {
    const error = rejection("-- name: positional\nSELECT id FROM sessions WHERE id = ?;\n");
    expect(error.query).toBe("positional");
  });

  it("rejects a repeated name and a name without a statement", () => {
    expect(rejection("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n").line).toBe(3);
    expect(rejection("-- name: empty\n-- just a comment\n").query).toBe("empty");
  });

  it("fails generation naming the bad query", () => {
    const files = new Map(set.files);
    files.set("storage/sqlite-queries.sql", "-- name: bad\nSELEC 1;\n");
    expect(() => renderSqliteFiles({ ...set, files })).toThrow(/invalid SQLite query bad/);
  });
});
