// Storage conditions that are not bugs — a full disk, no permission, a read-only file system — classified as STORAGE_REFUSED.
import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import { type RefusalCondition, StorageError, StorageRefusedError } from "../../errors.js";

/**
 * The codes that always mean one condition: Node's errno codes (file systems), SQLite's result
 * codes, and PostgreSQL's SQLSTATEs (disk_full, insufficient_privilege,
 * read_only_sql_transaction). None of the three spellings can be mistaken for another's.
 */
const CONDITIONS: ReadonlyMap<string, RefusalCondition> = new Map([
  ["ENOSPC", "no-space"],
  ["EDQUOT", "no-space"],
  ["EACCES", "no-permission"],
  ["EPERM", "no-permission"],
  ["EROFS", "read-only"],
  ["SQLITE_FULL", "no-space"],
  ["SQLITE_PERM", "no-permission"],
  ["53100", "no-space"],
  ["42501", "no-permission"],
  ["25006", "read-only"],
]);

/** What each condition asks of the operator before the same request is retried. */
const ADVICE: Readonly<Record<RefusalCondition, string>> = {
  "no-space": "free space on its file system (or raise the quota)",
  "no-permission": "give the server's user read and write access to it and to its folder",
  "read-only": "make it writable again (remount the file system read-write)",
};

const WHAT: Readonly<Record<RefusalCondition, string>> = {
  "no-space": "no space left",
  "no-permission": "no permission",
  "read-only": "a read-only file system or database",
};

/**
 * The condition a storage error reports, or undefined when it is none of them (a bug, damage, a
 * lost connection…). `error.code` is read: an errno (ENOSPC, EDQUOT → no-space; EACCES, EPERM →
 * no-permission; EROFS → read-only), an SQLite code (SQLITE_FULL → no-space; SQLITE_PERM →
 * no-permission) or a PostgreSQL SQLSTATE (53100 → no-space, 42501 → no-permission, 25006 →
 * read-only). SQLite's SQLITE_READONLY* and SQLITE_CANTOPEN* do not say why; with `probePath`
 * (the database file) the file and its folder are asked for write access, and the errno that
 * refuses it decides (EROFS → read-only, EACCES or EPERM → no-permission); SQLITE_READONLY* with
 * nothing refused is `read-only`, SQLITE_CANTOPEN* is then no condition (a missing folder, say).
 * SQLITE_READONLY_DBMOVED is never one: the file was removed under the connection.
 */
export function refusalCondition(error: unknown, probePath?: string): RefusalCondition | undefined {
  if (error instanceof StorageError || typeof error !== "object" || error === null)
    return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  const direct = CONDITIONS.get(code);
  if (direct !== undefined) return direct;
  const readonly = code.startsWith("SQLITE_READONLY") && code !== "SQLITE_READONLY_DBMOVED";
  if (!readonly && !code.startsWith("SQLITE_CANTOPEN")) return undefined;
  const probed = probePath === undefined ? undefined : probeWrite(probePath);
  return probed ?? (readonly ? "read-only" : undefined);
}

/**
 * `error` as a {@link StorageRefusedError} at `location` when it reports a condition (see
 * {@link refusalCondition}), else undefined.
 */
export function storageRefused(
  error: unknown,
  location: string,
  probePath?: string,
): StorageRefusedError | undefined {
  const condition = refusalCondition(error, probePath);
  if (condition === undefined) return undefined;
  const code = String((error as { code: unknown }).code);
  return new StorageRefusedError(
    "STORAGE_REFUSED",
    `expected the storage at ${location} to allow the operation, got ${code} (${WHAT[condition]}); nothing of the operation was stored and the log is intact: ${ADVICE[condition]}, then retry the same request`,
    { condition, location },
    { cause: error },
  );
}

/** `error` as a {@link StorageRefusedError} when it reports a condition, else `error` as it is. */
export function refusedOr(error: unknown, location: string, probePath?: string): unknown {
  return storageRefused(error, location, probePath) ?? error;
}

/** The condition that refuses writing `path` (or creating files beside it), if any. */
function probeWrite(path: string): RefusalCondition | undefined {
  for (const target of [path, dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const condition = refusalCondition(error);
      if (condition !== undefined) return condition;
    }
  }
  return undefined;
}
