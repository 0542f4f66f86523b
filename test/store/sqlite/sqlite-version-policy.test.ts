// Proves the SQLite version policy: reject, never migrate — refused databases are left byte for byte as they were.

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { StorageError } from "../../../src/errors.js";
import { SQLITE_DDL, SQLITE_LAYOUT_VERSION } from "../../../src/generated.js";
import { isOutsideLayout } from "../../../src/store/sqlite/catalog.js";
import { SqliteBackend } from "../../../src/store/sqlite/sqlite-backend.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-sqlite-version-"));
  temps.push(dir);
  return dir;
}

/** Builds a database at `path` with raw SQL, the way another build (or another program) left it. */
function build(path: string, sql: string, wal = false): void {
  const db = new Database(path);
  if (wal) db.pragma("journal_mode = WAL");
  db.exec(sql);
  db.close();
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

async function refusal(path: string): Promise<StorageError> {
  try {
    const backend = await SqliteBackend.open(path);
    await backend.close();
  } catch (error) {
    if (error instanceof StorageError) return error;
    throw error;
  }
  throw new Error(`expected ${path} to be refused, and it was opened`);
}

/** The table layout 5 added to layout 4, as that layout's DDL made it. */
const LAYOUT_5_SUMMARIES = `CREATE TABLE session_summaries (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  updated_at INTEGER NOT NULL,
  title TEXT,
  derived_title TEXT,
  PRIMARY KEY (session_id)
) STRICT;
CREATE INDEX summaries_by_activity ON session_summaries (updated_at DESC, session_id DESC);`;

/** The layouts that once shipped, each with the user_version it was stamped with. */
const OLD_SESSIONS = `CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL,
  created_at INTEGER NOT NULL, cwd TEXT, parent_session TEXT`;
const OLD_EVENTS = `CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data TEXT NOT NULL`;
const KEY = ", PRIMARY KEY (session_id, seq))";

const CASES: { name: string; sql: string; found: number; direction: RegExp; wal?: boolean }[] = [
  {
    name: "layout 1",
    sql: `CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL);
      PRAGMA user_version = 1;`,
    found: 1,
    direction: /no layout is migrated/,
  },
  {
    name: "layout 2",
    sql: `${OLD_SESSIONS});\n${OLD_EVENTS}${KEY};\nPRAGMA user_version = 2;`,
    found: 2,
    direction: /no layout is migrated/,
  },
  {
    name: "layout 3 that added only seed_length",
    sql: `${OLD_SESSIONS}, seed_length INTEGER) STRICT;\n${OLD_EVENTS}${KEY} STRICT;
      PRAGMA user_version = 3;`,
    found: 3,
    direction: /no layout is migrated/,
  },
  {
    name: "layout 3 that added only source_event_seqs and surface_op",
    sql: `${OLD_SESSIONS}) STRICT;\n${OLD_EVENTS}, source_event_seqs TEXT, surface_op TEXT${KEY} STRICT;
      PRAGMA user_version = 3;`,
    found: 3,
    direction: /no layout is migrated/,
  },
  {
    // What the builds that kept summaries in the layout wrote: layout 4 plus session_summaries.
    name: "layout 5 (summaries in the layout)",
    sql: `${SQLITE_DDL}\n${LAYOUT_5_SUMMARIES}\nPRAGMA user_version = 5;`,
    found: 5,
    direction: /layout 5 .*seedline export --store OLD ID.*seedline import --store NEW DIR/,
  },
  {
    name: "layout 5 in WAL mode",
    sql: `${SQLITE_DDL}\n${LAYOUT_5_SUMMARIES}\nPRAGMA user_version = 5;`,
    found: 5,
    direction: /seedline export .*seedline import/,
    wal: true,
  },
  {
    name: "layout 6",
    sql: `${SQLITE_DDL}\nPRAGMA user_version = 6;`,
    found: 6,
    direction: /newer seedline.*upgrade seedline/,
  },
  {
    name: "layout 6 in WAL mode",
    sql: `${SQLITE_DDL}\nPRAGMA user_version = 6;`,
    found: 6,
    direction: /upgrade seedline/,
    wal: true,
  },
  {
    name: "a database stamped 0 that holds a foreign table",
    sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER);",
    found: 0,
    direction: /not a seedline store/,
  },
  {
    name: "a WAL-mode database stamped 0 that holds a foreign table",
    sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER);",
    found: 0,
    direction: /not a seedline store/,
    wal: true,
  },
];

describe("SQLite version policy: reject what it cannot upgrade, untouched", () => {
  for (const { name, sql, found, direction, wal } of CASES) {
    it(`refuses ${name} with FORMAT_UNSUPPORTED and leaves its bytes unchanged`, async () => {
      const dir = tempDir();
      const path = join(dir, "store.db");
      build(path, sql, wal);
      const before = sha256(path);
      const filesBefore = readdirSync(dir).sort();

      const error = await refusal(path);

      expect(error.code).toBe("FORMAT_UNSUPPORTED");
      expect(error.details).toEqual({ found, supported: SQLITE_LAYOUT_VERSION, location: path });
      expect(error.message).toMatch(direction);
      expect(sha256(path)).toBe(before);
      expect(readdirSync(dir).sort()).toEqual(filesBefore);
      expect(existsSync(`${path}-wal`)).toBe(false);
      expect(existsSync(`${path}-shm`)).toBe(false);
    });
  }

  it("is layout 4: the version constant and the stamp of a new database", async () => {
    expect(SQLITE_LAYOUT_VERSION).toBe(4);
    expect(SQLITE_DDL).toContain("PRAGMA user_version = 4;");
    expect(SQLITE_DDL).not.toContain("session_summaries");
  });

  it("refuses a titles table of another version with FORMAT_UNSUPPORTED, untouched", async () => {
    const path = join(tempDir(), "store.db");
    const backend = await SqliteBackend.open(path);
    await backend.close();
    build(path, "UPDATE titles_version SET version = 2;");
    const before = sha256(path);
    const error = await refusal(path);
    expect(error.code).toBe("FORMAT_UNSUPPORTED");
    expect(error.message).toMatch(
      /titles table of version 1 .* found 2: it was written by a newer seedline/,
    );
    expect(sha256(path)).toBe(before);
  });

  it("refuses a file that is not an SQLite database, untouched", async () => {
    const path = join(tempDir(), "store.db");
    writeFileSync(path, "this is a text file, not a database\n".repeat(10));
    const before = sha256(path);
    const error = await refusal(path);
    expect(error.code).toBe("FORMAT_UNSUPPORTED");
    expect(sha256(path)).toBe(before);
  });

  it("refuses layout 4 whose tables differ from the generated ones as CORRUPT_LOG", async () => {
    const path = join(tempDir(), "store.db");
    build(path, `${SQLITE_DDL}\nCREATE TABLE extra (x TEXT) STRICT;`);
    const before = sha256(path);
    const error = await refusal(path);
    expect(error.code).toBe("CORRUPT_LOG");
    expect(error.details).toEqual({ location: path });
    expect(sha256(path)).toBe(before);
  });

  it("stamps a fresh path with the current layout and exactly the generated tables, besides the catalog and titles table", async () => {
    const path = join(tempDir(), "store.db");
    const backend = await SqliteBackend.open(path);
    await backend.close();
    const db = new Database(path, { readonly: true });
    const expected = new Database(":memory:");
    expected.exec(SQLITE_DDL);
    const objects = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name";
    expect(db.pragma("user_version", { simple: true })).toBe(SQLITE_LAYOUT_VERSION);
    const layout = (db.prepare(objects).all() as { tbl_name: string }[]).filter(
      (o) => !isOutsideLayout(o.tbl_name),
    );
    expect(layout).toEqual(expected.prepare(objects).all());
    expect(db.prepare(objects).all().length).toBeGreaterThan(layout.length);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    expected.close();
  });

  it("stamps an empty file and an unstamped database without tables", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "empty.db"), "");
    build(join(dir, "blank.db"), "PRAGMA user_version = 0;");
    for (const name of ["empty.db", "blank.db"]) {
      const backend = await SqliteBackend.open(join(dir, name));
      await backend.close();
      const db = new Database(join(dir, name), { readonly: true });
      expect(db.pragma("user_version", { simple: true })).toBe(SQLITE_LAYOUT_VERSION);
      db.close();
    }
  });

  it("reopens a database it stamped, and keeps what it stored", async () => {
    const path = join(tempDir(), "store.db");
    const first = await SqliteBackend.open(path);
    await first.create({ version: 0, id: "kept", createdAt: 1 }, []);
    await first.close();
    const second = await SqliteBackend.open(path, { durability: "process" });
    expect(await second.has("kept")).toBe(true);
    await second.close();
  });
});
