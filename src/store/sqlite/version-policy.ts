// The layout version policy of SQLite databases: layout 4 or nothing, reject never migrate — decided before a byte is written.
import { closeSync, existsSync, openSync, readSync, rmSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import { hasCode, StorageError, show } from "../../errors.js";
import { SQLITE_DDL, SQLITE_LAYOUT_VERSION } from "../../generated.js";
import { refusedOr } from "../errors/storage-refusal.js";
import { layoutDirection } from "../sql/layout-direction.js";
import { checkTitlesVersion, isOutsideLayout } from "./catalog.js";
import { type SqliteQueryRows, Statements } from "./statements.js";

/** What the read-only look at a database found: nothing of anyone's yet, or layout 4. */
export type DatabaseState = "new" | "current";

/** The first bytes of every SQLite database file. */
const MAGIC = "SQLite format 3\0";
/** The 100-byte file header: read/write versions at 18/19 (2 = WAL), user_version at 60. */
const HEADER_BYTES = 100;
const WAL_VERSION = 2;
const SIDE_FILES = ["-wal", "-shm"] as const;

/**
 * Looks at the database at `path` without changing it and decides whether this build may open it.
 * A missing file, an empty file, or user_version 0 without any table, index or trigger is new;
 * user_version 4 with exactly the generated layout is current. The file is opened read-only
 * before any pragma is set; a WAL-mode file without a `-wal` file is judged from its header bytes
 * when they already refuse it (a read-only connection would create `-wal` and `-shm`), and side
 * files that a refused look created are removed, so that a refused database is left as it was.
 * @throws StorageError FORMAT_UNSUPPORTED (another layout version, a version-0 database holding
 *   tables that are not ours, or not an SQLite file), CORRUPT_LOG (layout 4 whose tables differ,
 *   or a file SQLite cannot read).
 */
export function inspectDatabase(path: string): DatabaseState {
  if (isPrivate(path) || !existsSync(path) || statSync(path).size === 0) return "new";
  const header = readHeader(path);
  if (header.toString("latin1", 0, MAGIC.length) !== MAGIC) {
    throw new StorageError(
      "FORMAT_UNSUPPORTED",
      `expected an SQLite database at ${path}, found a file that is not one`,
      { found: "not an SQLite database", supported: SQLITE_LAYOUT_VERSION, location: path },
    );
  }
  const walMode = header[18] === WAL_VERSION || header[19] === WAL_VERSION;
  if (walMode && !existsSync(`${path}-wal`)) {
    // Without a -wal file the main file is complete, so its header's user_version is the truth.
    const version = header.readInt32BE(60);
    if (version !== 0 && version !== SQLITE_LAYOUT_VERSION) {
      throw unsupportedLayout(path, version);
    }
  }
  const missing = SIDE_FILES.filter((suffix) => !existsSync(`${path}${suffix}`));
  let db: Database.Database | undefined;
  let state: DatabaseState;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    state = judge(path, new Statements(db));
  } catch (error) {
    db?.close();
    db = undefined;
    if (hasCode(error, "FORMAT_UNSUPPORTED")) takeBackSideFiles(path, missing);
    throw asStorageError(error, path);
  } finally {
    db?.close();
  }
  return state;
}

/**
 * A read-only connection to a WAL-mode file creates `-wal` and `-shm` and leaves them behind.
 * After a refusal, removes the ones that did not exist before — and only an empty `-wal`, which
 * holds nothing of anyone's.
 */
function takeBackSideFiles(path: string, missing: readonly string[]): void {
  const wal = `${path}-wal`;
  if (!missing.includes("-wal") || !existsSync(wal) || statSync(wal).size > 0) return;
  rmSync(wal, { force: true });
  if (missing.includes("-shm")) rmSync(`${path}-shm`, { force: true });
}

/**
 * Stamps a new database with the generated layout inside one write transaction (`BEGIN
 * IMMEDIATE`), after looking again under the write lock: another process may have stamped it
 * since {@link inspectDatabase}, which is fine when it stamped layout 4.
 * @throws StorageError as {@link inspectDatabase}.
 */
export function stampNewDatabase(
  db: Database.Database,
  statements: Statements,
  path: string,
): void {
  statements.run("beginWrite", {});
  try {
    if (judge(path, statements) === "new") db.exec(SQLITE_DDL);
    statements.run("commit", {});
  } catch (error) {
    if (db.inTransaction) statements.run("rollback", {});
    throw asStorageError(error, path);
  }
}

/** Decides from user_version and the schema objects; see {@link inspectDatabase}. */
function judge(path: string, statements: Statements): DatabaseState {
  const version = Number(statements.get("layoutVersion", {})?.userVersion ?? 0);
  // The catalog and the titles table lie outside the layout (catalog.ts).
  const objects = statements
    .all("schemaObjects", {})
    .filter((o) => !isOutsideLayout(String(o.tableName)));
  if (version === 0) {
    if (objects.length === 0) return "new";
    const names = objects.map((o) => String(o.name));
    throw new StorageError(
      "FORMAT_UNSUPPORTED",
      `expected an empty database or seedline layout ${SQLITE_LAYOUT_VERSION} at ${path}, found user_version 0 with objects that are not seedline's (${show(names)}); it is not a seedline store`,
      { found: 0, supported: SQLITE_LAYOUT_VERSION, location: path },
    );
  }
  if (version !== SQLITE_LAYOUT_VERSION) throw unsupportedLayout(path, version);
  const expected = expectedObjects();
  if (JSON.stringify(objects) !== JSON.stringify(expected)) {
    const found = objects.map((o) => String(o.name));
    throw new StorageError(
      "CORRUPT_LOG",
      `expected the tables and indexes of layout ${SQLITE_LAYOUT_VERSION} (${show(expected.map((o) => o.name))}) in ${path}, found ${show(found)}`,
      { location: path },
    );
  }
  checkTitlesVersion(statements, path);
  return "current";
}

function unsupportedLayout(path: string, version: number): StorageError<"FORMAT_UNSUPPORTED"> {
  return new StorageError(
    "FORMAT_UNSUPPORTED",
    `expected SQLite layout version ${SQLITE_LAYOUT_VERSION} at ${path}, found ${version}: ${layoutDirection(version, SQLITE_LAYOUT_VERSION)}`,
    { found: version, supported: SQLITE_LAYOUT_VERSION, location: path },
  );
}

let expectedCache: SqliteQueryRows["schemaObjects"][] | undefined;

/** The schema objects a database made by the generated DDL holds. */
function expectedObjects(): SqliteQueryRows["schemaObjects"][] {
  if (expectedCache === undefined) {
    const db = new Database(":memory:");
    try {
      db.exec(SQLITE_DDL);
      expectedCache = new Statements(db).all("schemaObjects", {});
    } finally {
      db.close();
    }
  }
  return expectedCache;
}

function readHeader(path: string): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return header;
}

/** Whether `path` names a database private to one connection (nothing on disk to inspect). */
export function isPrivate(path: string): boolean {
  return path === ":memory:" || path === "";
}

/**
 * A StorageError as it is; an SQLite error that says the file is unreadable as CORRUPT_LOG; a
 * full disk, a refused permission or a read-only file system as STORAGE_REFUSED (see
 * {@link refusedOr}; location: the file).
 */
export function asStorageError(error: unknown, path: string): unknown {
  if (error instanceof StorageError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
    return new StorageError(
      "CORRUPT_LOG",
      `expected a readable SQLite database at ${path}, got ${code}`,
      { location: path },
      { cause: error },
    );
  }
  return refusedOr(error, path, isPrivate(path) ? undefined : path);
}
