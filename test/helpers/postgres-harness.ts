// The PostgreSQL test server: whether tests run or skip, a fresh schema per harness, raw SQL and tamper hooks.
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { describe } from "vitest";
import { advisoryKey } from "../../src/store/postgres/connection.js";
import {
  PostgresBackend,
  type PostgresBackendOptions,
} from "../../src/store/postgres/postgres-backend.js";
import type { ContractHarness, ContractTamper } from "../../src/testing/index.js";

/** The server the tests use: `SEEDLINE_TEST_POSTGRES_URL`, else the local trust-auth server. */
export const POSTGRES_TEST_URL =
  process.env.SEEDLINE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Why the server cannot be reached, or undefined when it answers. */
async function probe(): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: POSTGRES_TEST_URL,
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const unreachable = await probe();
const ci = process.env.CI !== undefined && process.env.CI !== "";

/**
 * Why the PostgreSQL tests are skipped, or undefined when they run. They skip only when no server
 * is reachable and `CI` is unset; with `CI` set, an unreachable server fails them.
 */
export const POSTGRES_SKIP: string | undefined =
  unreachable !== undefined && !ci
    ? `no PostgreSQL server reachable at ${POSTGRES_TEST_URL.replace(/:[^:@/]*@/, "@")} (${unreachable}); set SEEDLINE_TEST_POSTGRES_URL (with CI set this is a failure)`
    : undefined;

/** `describe`, or `describe.skip` with the reason in its title when there is no server. */
export function describePostgres(title: string, body: () => void): void {
  if (POSTGRES_SKIP === undefined) describe(title, body);
  else describe.skip(`${title} — skipped: ${POSTGRES_SKIP}`, body);
}

/** A fresh schema name, unique across test processes. */
export function freshSchemaName(): string {
  return `seedline_t_${randomBytes(6).toString("hex")}`;
}

/** A connected client for raw SQL, with search_path set to `schema` when given. */
export async function rawClient(schema?: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: POSTGRES_TEST_URL,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  await client.connect();
  return client;
}

/** Runs raw SQL on a connection of its own (another program, for the test). */
export async function sql<T = Record<string, unknown>>(
  text: string,
  params: readonly unknown[] = [],
  schema?: string,
): Promise<T[]> {
  const client = await rawClient(schema);
  try {
    return (await client.query(text, [...params])).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Every relation of a schema and every row of its tables, as text: two dumps are equal when
 * nothing in the schema changed. An absent schema dumps as "".
 */
export async function dumpSchema(schema: string): Promise<string> {
  const client = await rawClient();
  try {
    const relations = await client.query<{ kind: string; name: string }>(
      `SELECT c.relkind::text AS kind, c.relname::text AS name
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 ORDER BY c.relname`,
      [schema],
    );
    const lines: string[] = [];
    for (const { kind, name } of relations.rows) {
      lines.push(`${kind} ${name}`);
      if (kind !== "r") continue;
      const table = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`;
      const rows = await client.query<{ row: string }>(
        `SELECT t::text AS row FROM ${table} t ORDER BY 1`,
      );
      for (const { row } of rows.rows) lines.push(`  ${row}`);
    }
    return lines.join("\n");
  } finally {
    await client.end();
  }
}

/** Drops a schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}

/** A harness over one fresh schema of the test server, with raw SQL on that schema. */
export interface PostgresHarness extends ContractHarness {
  readonly url: string;
  readonly schema: string;
  /** Opens a backend over the harness's schema (again, for the reload cases). */
  open(options?: Omit<PostgresBackendOptions, "schema">): Promise<PostgresBackend>;
  /** Runs raw SQL with search_path set to the harness's schema. */
  sql<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  readonly tamper: ContractTamper;
}

/**
 * A harness for the backend contract and the differential test: `CREATE SCHEMA` of a fresh
 * name (empty: the first backend opened creates the layout in it), backends opened over it (each
 * its own pool and lock connection, so two of them behave as two processes), tamper hooks in raw
 * SQL, and a cleanup that closes what it opened and drops the schema.
 */
export async function makePostgresHarness(): Promise<PostgresHarness> {
  const schema = freshSchemaName();
  await sql(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
  const opened: PostgresBackend[] = [];
  const run = <T = Record<string, unknown>>(text: string, params: readonly unknown[] = []) =>
    sql<T>(text, params, schema);
  const edit = async (text: string, ...params: unknown[]) => {
    await run(text, params);
  };
  return {
    url: POSTGRES_TEST_URL,
    schema,
    open: async (options = {}) => {
      const backend = await PostgresBackend.open(POSTGRES_TEST_URL, { ...options, schema });
      opened.push(backend);
      return backend;
    },
    sql: run,
    tamper: {
      setFormatVersion: (id, version) =>
        edit("UPDATE sessions SET version = $1 WHERE id = $2", version, id),
      tearTail: (id) =>
        edit(
          `INSERT INTO events
           SELECT session_id, seq + 1, 'turn/start', time, '{"turn":', NULL, NULL
           FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`,
          id,
        ),
      garble: (id, seq) =>
        edit(
          "UPDATE events SET data = '#' || substr(data, 2) WHERE session_id = $1 AND seq = $2",
          id,
          seq,
        ),
      setType: (id, seq, type) =>
        edit("UPDATE events SET type = $1 WHERE session_id = $2 AND seq = $3", type, id, seq),
      fingerprint: async () =>
        createHash("sha256")
          .update(await dumpSchema(schema))
          .digest("hex"),
    },
    cleanup: async () => {
      for (const backend of opened.splice(0)) await backend.close();
      await dropSchema(schema);
    },
  };
}

/** Polls `probe` until it returns a value (or fails after `ms`). */
export async function until<T>(probe: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((wait) => setTimeout(wait, 25));
  }
}

/** The server process holding session `id`'s writer lock in `schema`, once one does. */
export function writerLockHolder(schema: string, id: string): Promise<{ pid: number }> {
  const key = BigInt.asUintN(64, BigInt(advisoryKey("seedline-writer", schema, id)));
  return until(async () => {
    const rows = await sql<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
       AND classid = $1 AND objid = $2 AND objsubid = 1`,
      [String(key >> 32n), String(key & 0xffffffffn)],
    );
    return rows[0];
  });
}

/**
 * Ends the server connection that holds session `id`'s writer lock in `schema` (as a network
 * partition or an administrator would) and waits until it is gone.
 */
export async function terminateWriterLock(schema: string, id: string): Promise<void> {
  const holder = await writerLockHolder(schema, id);
  await sql("SELECT pg_terminate_backend($1)", [holder.pid]);
  await until(async () => {
    const rows = await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [holder.pid]);
    return rows.length === 0 ? true : undefined;
  });
}
