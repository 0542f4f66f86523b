// The storage-condition classifier: errno codes, SQLite codes and SQLSTATEs to STORAGE_REFUSED conditions, and the wire form.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { DatabaseError } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { StorageError, StorageRefusedError } from "../../src/errors.js";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import { toResponseError } from "../../src/rpc/error-mapping.js";
import {
  refusalCondition,
  refusedOr,
  storageRefused,
} from "../../src/store/errors/storage-refusal.js";
import { refusedByServer } from "../../src/store/postgres/pg-errors.js";

const dir = mkdtempSync(join(tmpdir(), "seedline-refusal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A system error as Node makes them: an Error with an errno code. */
function errno(code: string, path?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: refused`), { code, ...(path ? { path } : {}) });
}

function pgError(code: string): DatabaseError {
  const error = new DatabaseError("refused by the server", 0, "error");
  error.code = code;
  return error;
}

describe("refusalCondition", () => {
  it.each([
    ["ENOSPC", "no-space"],
    ["EDQUOT", "no-space"],
    ["EACCES", "no-permission"],
    ["EPERM", "no-permission"],
    ["EROFS", "read-only"],
    ["SQLITE_FULL", "no-space"],
    ["SQLITE_PERM", "no-permission"],
    ["SQLITE_READONLY", "read-only"],
    ["SQLITE_READONLY_CANTINIT", "read-only"],
    ["53100", "no-space"],
    ["42501", "no-permission"],
    ["25006", "read-only"],
  ] as const)("classifies %s as %s", (code, condition) => {
    expect(refusalCondition(errno(code))).toBe(condition);
  });

  it.each([
    "ENOENT",
    "EIO",
    "EEXIST",
    "SQLITE_CORRUPT",
    "SQLITE_IOERR_WRITE",
    "SQLITE_READONLY_DBMOVED",
    "SQLITE_CANTOPEN",
    "23505",
    "08006",
  ])("leaves %s alone (not a storage condition)", (code) => {
    expect(refusalCondition(errno(code))).toBeUndefined();
    expect(refusedOr(errno(code), "/somewhere")).toBeInstanceOf(Error);
    expect(refusedOr(errno(code), "/somewhere")).not.toBeInstanceOf(StorageRefusedError);
  });

  it("leaves non-errors, code-less errors and seedline's own errors alone", () => {
    expect(refusalCondition(undefined)).toBeUndefined();
    expect(refusalCondition("ENOSPC")).toBeUndefined();
    expect(refusalCondition(new Error("ENOSPC"))).toBeUndefined();
    const own = new StorageError("SESSION_BUSY", "busy", { sessionId: "a" });
    expect(refusalCondition(own)).toBeUndefined();
  });

  it("classifies a real SQLITE_READONLY (a read-only connection) as read-only", () => {
    const path = join(dir, "ro.db");
    new Database(path).close();
    const db = new Database(path, { readonly: true });
    let error: unknown;
    try {
      db.exec("CREATE TABLE t (x)");
    } catch (caught) {
      error = caught;
    } finally {
      db.close();
    }
    expect((error as { code?: string }).code).toBe("SQLITE_READONLY");
    expect(refusalCondition(error, path)).toBe("read-only");
  });

  it("asks the file system why SQLITE_CANTOPEN when given the file: a writable place is no condition", () => {
    const path = join(dir, "fine.db");
    writeFileSync(path, "");
    expect(refusalCondition(errno("SQLITE_CANTOPEN"), path)).toBeUndefined();
    expect(refusalCondition(errno("SQLITE_CANTOPEN"), join(dir, "missing", "x.db"))).toBe(
      undefined,
    );
  });
});

describe("storageRefused", () => {
  it("carries condition, location, the cause, and a message with what happened and what to do", () => {
    const cause = errno("ENOSPC");
    const error = storageRefused(cause, "/data/sessions/a.jsonl");
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect(error?.code).toBe("STORAGE_REFUSED");
    expect(error?.condition).toBe("no-space");
    expect(error?.location).toBe("/data/sessions/a.jsonl");
    expect(error?.details).toEqual({ condition: "no-space", location: "/data/sessions/a.jsonl" });
    expect(error?.cause).toBe(cause);
    expect(error?.message).toMatch(/^expected the storage at \/data\/sessions\/a\.jsonl/);
    expect(error?.message).toMatch(/got ENOSPC/);
    expect(error?.message).toMatch(/free space/);
    expect(error?.message).toMatch(/retry the same request/);
  });

  it("PostgreSQL: SQLSTATEs of the server become STORAGE_REFUSED at the store's location", () => {
    const location = "postgres://u@h/db (schema s)";
    const full = refusedByServer(pgError("53100"), location) as StorageRefusedError;
    expect(full).toBeInstanceOf(StorageRefusedError);
    expect(full.details).toEqual({ condition: "no-space", location });
    expect((refusedByServer(pgError("42501"), location) as StorageRefusedError).condition).toBe(
      "no-permission",
    );
    expect((refusedByServer(pgError("25006"), location) as StorageRefusedError).condition).toBe(
      "read-only",
    );
    const unique = pgError("23505");
    expect(refusedByServer(unique, location)).toBe(unique);
    // Only the server's errors: a socket's EACCES is not the database refusing.
    const socket = errno("EACCES");
    expect(refusedByServer(socket, location)).toBe(socket);
  });

  it("reaches the wire as STORAGE_REFUSED with its data, never INTERNAL", () => {
    const logs: string[] = [];
    const wire = toResponseError(storageRefused(errno("EROFS"), "/ro/sessions"), (line) =>
      logs.push(line),
    );
    expect(wire.code).toBe(RPC_ERROR_CODES.STORAGE_REFUSED);
    expect(wire.data).toEqual({
      code: "STORAGE_REFUSED",
      condition: "read-only",
      location: "/ro/sessions",
    });
    expect(logs).toEqual([]);
  });
});
