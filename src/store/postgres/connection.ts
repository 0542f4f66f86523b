// Where a PostgreSQL store is and how its connections are set up: URL and schema, startup options, int8 parsing.
import { createHash } from "node:crypto";
import { type ClientConfig, TypeOverrides } from "pg";
import { StorageError, show } from "../../errors.js";
import type { Durability } from "../backend.js";
import { redact } from "../open/redact-url.js";
import { type PostgresTimeouts, readTimeouts } from "./timeouts.js";

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
  /** `application_name` of every connection (URL `?application_name=`, default `seedline`). */
  readonly applicationName: string;
  /** The bounds on every wait for the server (see {@link readTimeouts}). */
  readonly timeouts: PostgresTimeouts;
}

/**
 * Reads a `postgres://` / `postgresql://` URL. The schema is `schema` when given, else the URL's
 * `?schema=` parameter, else `seedline`. The timeouts are the URL's (`connect_timeout`,
 * `keepalives`, `keepalives_idle`, `statement_timeout`, `query_timeout`,
 * `idle_in_transaction_session_timeout`) with `timeouts` over them.
 * @throws StorageError INVALID_PARAMS for a URL that does not parse, a schema name that is not
 *   a plain lower-case identifier, or a timeout that is not a number >= 0.
 */
export function resolveTarget(
  url: string,
  schema: string | undefined,
  timeouts: Partial<PostgresTimeouts> = {},
): PostgresTarget {
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
  const applicationName = parsed.searchParams.get("application_name") ?? "seedline";
  parsed.searchParams.delete("schema");
  parsed.searchParams.delete("options");
  parsed.searchParams.delete("application_name");
  const bounds = readTimeouts(parsed.searchParams, timeouts);
  const user = parsed.username === "" ? "" : `${parsed.username}@`;
  return {
    connectionString: parsed.toString(),
    extraOptions,
    schema: chosen,
    location: `${parsed.protocol}//${user}${parsed.host}${parsed.pathname} (schema ${chosen})`,
    applicationName,
    timeouts: bounds,
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
 * The connection settings of every connection of a backend: the search_path set to the schema,
 * synchronous_commit for the durability mode, statement_timeout and
 * idle_in_transaction_session_timeout, all as startup options (so no statement can run before
 * they hold), the application_name (so that pg_stat_activity tells seedline's connections), a
 * connect timeout, TCP keepalive, a client-side query timeout, and int8 parsed to numbers.
 */
export function clientConfig(target: PostgresTarget, durability: Durability): ClientConfig {
  const { timeouts } = target;
  const options = [
    target.extraOptions,
    `-c search_path=${target.schema}`,
    `-c synchronous_commit=${synchronousCommit(durability)}`,
    `-c statement_timeout=${timeouts.statementMs}`,
    `-c idle_in_transaction_session_timeout=${timeouts.idleInTransactionMs}`,
  ];
  return {
    connectionString: target.connectionString,
    application_name: target.applicationName,
    // A server that stops answering fails a connect instead of hanging it; keepalive notices a
    // connection cut while idle (the writer locks' connection is idle most of the time); the
    // query timeout bounds a statement whose answer never comes (the server cannot cancel it
    // when it cannot be reached), and the connection is then dropped.
    ...(timeouts.connectMs > 0 ? { connectionTimeoutMillis: timeouts.connectMs } : {}),
    keepAlive: timeouts.keepAliveMs > 0,
    keepAliveInitialDelayMillis: timeouts.keepAliveMs,
    ...(timeouts.queryMs > 0 ? { query_timeout: timeouts.queryMs } : {}),
    options: options.filter((o) => o !== undefined && o !== "").join(" "),
    types: typeParsers,
  };
}

/**
 * Ends a connection at once, without waiting for the server to say goodbye (a server that cannot
 * be reached never does): its socket is destroyed, the server rolls back and releases whatever it
 * held once it notices.
 */
export function destroyClient(client: { end(): Promise<void> }): void {
  const stream = (client as { connection?: { stream?: { destroy?: () => void } } }).connection
    ?.stream;
  client.end().catch(() => {});
  stream?.destroy?.();
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
