// Opens a backend from a store URL: `sqlite:PATH`, `jsonl:DIR`, `memory:`, `postgres://…`.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { StorageError, show } from "../errors.js";
import type { Durability, SessionBackend } from "./backend.js";
import { JsonlBackend } from "./jsonl/jsonl-backend.js";
import { MemoryBackend } from "./memory-backend.js";
import { SqliteBackend } from "./sqlite/sqlite-backend.js";
import { refusedOr } from "./storage-refusal.js";

/** The store a server or CLI opens when none is given: an embedded SQLite file. */
export const DEFAULT_STORE_URL = "sqlite:.seedline/sessions.db";

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
 * `postgresql://` URL opens the PostgreSQL backend (loaded only then, so that `pg` is not loaded
 * for the other stores), in the schema `?schema=` names (default `seedline`).
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
    case "postgresql": {
      const { PostgresBackend } = await import("./postgres/postgres-backend.js");
      return PostgresBackend.open(url, durability);
    }
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

/** Creates `dir` and its parents when missing. @throws StorageRefusedError STORAGE_REFUSED. */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw refusedOr(error, dir);
  }
}
