// Where a PostgreSQL store is and how its connections are set up: URL and schema, startup options, int8 parsing.
import { createHash } from "node:crypto";
import { type ClientConfig, TypeOverrides } from "pg";
import { StorageError, show } from "../../errors.js";
import type { Durability } from "../backend.js";

/** The PostgreSQL schema a store lives in when neither the URL nor the options name one. */
export const DEFAULT_SCHEMA = "seedline";

/**
 * Schema names this backend accepts: plain lower-case identifiers, so that the name means the same
 * in `search_path`, in the catalog and in messages. `pg_` is reserved by PostgreSQL.
 */
const SCHEMA_NAME = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/;

/** A PostgreSQL store: the connection settings, the schema, and how messages name it. */
export interface PostgresTarget {
  /** The URL as given, without `schema` and `options` (they are applied separately). */
  readonly connectionString: string;
  /** `options` from the URL (extra startup options), kept ahead of the backend's own. */
  readonly extraOptions: string | undefined;
  readonly schema: string;
  /** The URL without password or query, plus the schema: what messages and `location` show. */
  readonly location: string;
}

/**
 * Reads a `postgres://` / `postgresql://` URL. The schema is `schema` when given, else the URL's
 * `?schema=` parameter, else `seedline`.
 * @throws StorageError INVALID_PARAMS for a URL that does not parse or a schema name that is not
 *   a plain lower-case identifier.
 */
export function resolveTarget(url: string, schema: string | undefined): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidStore(
      `expected a postgres://USER@HOST:PORT/DATABASE URL, got ${show(redact(url))}`,
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw invalidStore(`expected a postgres:// or postgresql:// URL, got ${show(redact(url))}`);
  }
  const chosen = schema ?? parsed.searchParams.get("schema") ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(chosen)) {
    throw invalidStore(
      `expected a schema name of lower-case letters, digits and _ (at most 63, not starting with a digit or pg_), got ${show(chosen)}`,
    );
  }
  const extraOptions = parsed.searchParams.get("options") ?? undefined;
  parsed.searchParams.delete("schema");
  parsed.searchParams.delete("options");
  const user = parsed.username === "" ? "" : `${parsed.username}@`;
  return {
    connectionString: parsed.toString(),
    extraOptions,
    schema: chosen,
    location: `${parsed.protocol}//${user}${parsed.host}${parsed.pathname} (schema ${chosen})`,
  };
}

/** The synchronous_commit setting of each durability mode. */
const SYNCHRONOUS_COMMIT: Readonly<Record<Durability, "on" | "off">> = {
  // A commit is acknowledged once its WAL is flushed to disk on the server.
  fsync: "on",
  // Acknowledged once the server has it in memory: survives this process, not a server crash.
  process: "off",
};

/** The synchronous_commit value a connection in `durability` mode runs with. */
export function synchronousCommit(durability: Durability): "on" | "off" {
  return SYNCHRONOUS_COMMIT[durability];
}

const INT8_OID = 20;
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * int8 values as numbers: every bigint column holds a safe integer (seq, time, createdAt…). A
 * value beyond that stays a string, which the row checks then refuse as damage.
 */
function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

const typeParsers = new TypeOverrides();
typeParsers.setTypeParser(INT8_OID, parseInt8);

/**
 * The connection settings of every connection of a backend: the search_path set to the schema
 * and synchronous_commit for the durability mode, both as startup options (so no statement can
 * run before they hold), application_name `seedline`, a connect timeout, TCP keepalive, and int8
 * parsed to numbers.
 */
export function clientConfig(target: PostgresTarget, durability: Durability): ClientConfig {
  const options = [
    target.extraOptions,
    `-c search_path=${target.schema}`,
    `-c synchronous_commit=${synchronousCommit(durability)}`,
  ];
  return {
    connectionString: target.connectionString,
    application_name: "seedline",
    // A server that stops answering fails a connect instead of hanging it; keepalive notices a
    // connection cut while idle (the writer locks' connection is idle most of the time).
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    options: options.filter((o) => o !== undefined && o !== "").join(" "),
    types: typeParsers,
  };
}

/**
 * A 64-bit advisory lock key (as the decimal text PostgreSQL binds to bigint) for `parts`:
 * the first 8 bytes of their SHA-256. Computed here rather than by a server hash function, so
 * that every client and every server version agrees on it.
 */
export function advisoryKey(...parts: readonly string[]): string {
  const digest = createHash("sha256").update(parts.join("\0"), "utf8").digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * The LISTEN/NOTIFY channel of the store in `schema`: `seedline_changes_` and 16 hex digits of
 * the schema name's SHA-256 (33 bytes, within the 63 of an identifier, whatever the schema's
 * length), so that stores in other schemas of one database never hear each other's writes.
 */
export function changeChannel(schema: string): string {
  const digest = createHash("sha256").update(schema, "utf8").digest("hex");
  return `seedline_changes_${digest.slice(0, 16)}`;
}

function invalidStore(message: string): StorageError<"INVALID_PARAMS"> {
  return new StorageError("INVALID_PARAMS", message, {
    errors: [{ instancePath: "/store", message }],
  });
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1@");
}
