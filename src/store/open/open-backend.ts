// Opens a backend from a store URL: `sqlite:PATH`, `jsonl:DIR`, `memory:`, `postgres://…`.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { StorageError, StorageUnavailableError, show } from "../../errors.js";
import type { Durability, SessionBackend } from "../backend.js";
import { refusedOr } from "../errors/storage-refusal.js";
import { JsonlBackend } from "../jsonl/jsonl-backend.js";
import { MemoryBackend } from "../memory/memory-backend.js";
import type * as postgres from "../postgres/postgres-backend.js";
import type * as sqlite from "../sqlite/sqlite-backend.js";
import { redact } from "./redact-url.js";

/** The store a server or CLI opens when none is given: an embedded SQLite file. */
export const DEFAULT_STORE_URL = "sqlite:.seedline/sessions.db";

/** A store in one SQLite database, as {@link SqliteBackend.open} gives it. */
export type SqliteBackend = sqlite.SqliteBackend;

/**
 * Opens SQLite stores. Its module, and with it the native better-sqlite3, is loaded on the first
 * open (and kept): a process that opens no SQLite store does not load it.
 */
export const SqliteBackend = {
  /**
   * Opens (or creates) the database at `path` (`:memory:` for a private one); see
   * docs/persistence.md for the layout and its version policy.
   * @throws StorageError FORMAT_UNSUPPORTED (another layout version, or a database that is not
   *   seedline's), CORRUPT_LOG (an unreadable file); StorageRefusedError STORAGE_REFUSED when the
   *   file or its folder may not be read or written.
   */
  async open(path: string, options?: sqlite.SqliteBackendOptions): Promise<SqliteBackend> {
    const { SqliteBackend } = await import("../sqlite/sqlite-backend.js");
    return SqliteBackend.open(path, options);
  },
};

/** A store in one PostgreSQL schema, as {@link PostgresBackend.open} gives it. */
export type PostgresBackend = postgres.PostgresBackend;

/**
 * Opens PostgreSQL stores. Its module, and with it `pg` (an optional peer dependency: installed by
 * whoever opens such a store), is loaded on the first open (and kept): a process that opens no
 * PostgreSQL store does not load it.
 */
export const PostgresBackend = {
  /**
   * Opens the store at a `postgres://` URL, in the schema `options.schema` or `?schema=` names
   * (default `seedline`); see docs/persistence.md#postgresql.
   * @throws StorageError INVALID_PARAMS (a bad URL or schema name), FORMAT_UNSUPPORTED (another
   *   layout version, or a schema that is not seedline's); StorageUnavailableError
   *   STORAGE_UNAVAILABLE when the server cannot be reached, or `pg` is not installed.
   */
  async open(url: string, options?: postgres.PostgresBackendOptions): Promise<PostgresBackend> {
    let loaded: typeof postgres;
    try {
      loaded = await import("../postgres/postgres-backend.js");
    } catch (error) {
      if (!isMissingPackage(error, "pg")) throw error;
      const location = redact(url);
      throw new StorageUnavailableError(
        "STORAGE_UNAVAILABLE",
        `expected the package pg to be installed to open the PostgreSQL store ${location}, found none: run \`npm install pg\` in your project (seedline takes it as an optional peer dependency)`,
        { location, commitUnknown: false },
        { cause: error },
      );
    }
    return loaded.PostgresBackend.open(url, options);
  },
};

/** How `openBackend` opens a store. */
export interface OpenBackendOptions {
  readonly durability?: Durability;
}

/** The URL schemes `openBackend` knows, for help texts. */
export const STORE_URL_FORMS = [
  "sqlite:PATH",
  "jsonl:DIR",
  "memory:",
  "postgres://USER@HOST:PORT/DATABASE[?schema=NAME]",
] as const;

/**
 * Opens the backend a store URL names. Relative paths are taken from the working directory; the
 * parent folder of a SQLite file and a JSONL root are created when missing. A `postgres://` or
 * `postgresql://` URL opens the PostgreSQL backend, in the schema `?schema=` names (default
 * `seedline`). The SQLite and PostgreSQL backends, and their drivers, are loaded only then.
 * @throws StorageError INVALID_PARAMS for a URL of no known form; the backend's own errors
 *   (a SQLite file or PostgreSQL schema at another layout version is FORMAT_UNSUPPORTED);
 *   StorageRefusedError STORAGE_REFUSED when the folder cannot be made (no space, no
 *   permission, a read-only file system).
 */
export async function openBackend(
  url: string,
  options: OpenBackendOptions = {},
): Promise<SessionBackend> {
  const colon = url.indexOf(":");
  const scheme = colon < 0 ? "" : url.slice(0, colon);
  const rest = colon < 0 ? "" : url.slice(colon + 1);
  const durability = options.durability === undefined ? {} : { durability: options.durability };
  switch (scheme) {
    case "sqlite": {
      if (rest === "") break;
      if (rest !== ":memory:") makeFolder(dirname(resolve(rest)));
      return SqliteBackend.open(rest === ":memory:" ? rest : resolve(rest), durability);
    }
    case "jsonl": {
      if (rest === "") break;
      makeFolder(resolve(rest));
      return new JsonlBackend(resolve(rest), durability);
    }
    case "memory":
      return new MemoryBackend();
    case "postgres":
    case "postgresql":
      return PostgresBackend.open(url, durability);
    default:
      break;
  }
  throw new StorageError(
    "INVALID_PARAMS",
    `expected a store URL of the form ${STORE_URL_FORMS.join(", ")}, got ${show(url)}`,
    {
      errors: [
        { instancePath: "/store", message: `expected one of ${STORE_URL_FORMS.join(", ")}` },
      ],
    },
  );
}

/** Whether `error` is Node's failure to find the package `name` (not a module inside it, nor one it imports). */
function isMissingPackage(error: unknown, name: string): boolean {
  return (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" &&
    error.message.startsWith(`Cannot find package '${name}' `)
  );
}

/** Creates `dir` and its parents when missing. @throws StorageRefusedError STORAGE_REFUSED. */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw refusedOr(error, dir);
  }
}
