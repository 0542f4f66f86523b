// The PostgreSQL side of the benchmarks: whether a server answers, a schema of its own per benchmark, raw connections and rows for the floors.

import { randomBytes } from "node:crypto";
import pg from "pg";
import { POSTGRES_QUERIES, type POSTGRES_QUERY_PARAMS } from "../../src/generated.js";
import {
  type Durability,
  PostgresBackend,
  type SessionEvent,
  type SessionHeader,
} from "../../src/index.js";
import { derivedTitle } from "../../src/log/session-title.js";
import { clientConfig, resolveTarget } from "../../src/store/postgres/connection.js";

/** The server: `SEEDLINE_BENCH_POSTGRES_URL`, else the tests' `SEEDLINE_TEST_POSTGRES_URL`, else the local one. */
export const BENCH_POSTGRES_URL =
  process.env.SEEDLINE_BENCH_POSTGRES_URL ??
  process.env.SEEDLINE_TEST_POSTGRES_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

let probed: Promise<string | undefined> | undefined;

/** Why the PostgreSQL rows cannot run (no server answers), or undefined when they can. */
export function postgresUnavailable(): Promise<string | undefined> {
  probed ??= (async () => {
    const client = new pg.Client({
      connectionString: BENCH_POSTGRES_URL,
      connectionTimeoutMillis: 3000,
    });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return undefined;
    } catch (error) {
      const reason = error instanceof Error ? error.message || error.name : String(error);
      return `no PostgreSQL server reachable at ${BENCH_POSTGRES_URL.replace(/:[^:@/]*@/, "@")} (${reason}); set SEEDLINE_BENCH_POSTGRES_URL`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return probed;
}

/** A schema of the benchmark server that exists for one benchmark; `drop` removes it and closes what it opened. */
export interface BenchSchema {
  readonly schema: string;
  /** Opens a backend over the schema (the first one creates the layout). */
  open(durability?: Durability): Promise<PostgresBackend>;
  /**
   * A raw connection with the backend's own connection settings (search_path, synchronous_commit
   * for `durability`, int8 as numbers): the floors' connection.
   */
  raw(durability?: Durability): Promise<pg.Client>;
  drop(): Promise<void>;
}

/** Creates a fresh schema `seedline_bench_<label>_<random>` with the generated layout in it. */
export async function benchSchema(label: string): Promise<BenchSchema> {
  const schema = `seedline_bench_${label}_${randomBytes(4).toString("hex")}`;
  const backends: PostgresBackend[] = [];
  const clients: pg.Client[] = [];
  const open = async (durability: Durability = "fsync") => {
    const backend = await PostgresBackend.open(BENCH_POSTGRES_URL, { schema, durability });
    backends.push(backend);
    return backend;
  };
  // Creates the schema and its layout.
  await (await open("process")).close();
  return {
    schema,
    open,
    raw: async (durability: Durability = "fsync") => {
      const client = new pg.Client(
        clientConfig(resolveTarget(BENCH_POSTGRES_URL, schema), durability),
      );
      await client.connect();
      clients.push(client);
      return client;
    },
    drop: async () => {
      for (const backend of backends.splice(0)) await backend.close();
      for (const client of clients.splice(0)) await client.end().catch(() => {});
      const admin = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A generated statement as a named prepared statement, with its values in `$n` order. */
export function prepared(
  name: keyof typeof POSTGRES_QUERY_PARAMS,
  values: readonly unknown[],
): pg.QueryConfig {
  return { name: `bench_${name}`, text: POSTGRES_QUERIES[name], values: [...values] };
}

/** The insertSession values of a header, written out by hand. */
export function rawSessionValues(header: SessionHeader): unknown[] {
  return [
    header.id,
    header.version,
    header.createdAt,
    header.cwd ?? null,
    header.parentSession ?? null,
    header.seedLength ?? null,
  ];
}

/**
 * The refreshSummary values of a session (its derived title, its id), written out by hand: run
 * after its events, it makes the catalog's summary from them as the backend does after a fork.
 */
export function rawSummaryValues(
  header: SessionHeader,
  events: readonly SessionEvent[],
): unknown[] {
  return [derivedTitle(events) ?? null, header.id];
}

/** The insertEvents values of a batch (one array per column), written out by hand. */
export function rawEventValues(sessionId: string, events: readonly SessionEvent[]): unknown[] {
  const seqs: number[] = [];
  const types: string[] = [];
  const times: number[] = [];
  const datas: string[] = [];
  const sources: (string | null)[] = [];
  const surfaceOps: (string | null)[] = [];
  for (const event of events) {
    const e = event as SessionEvent & { sourceEventSeqs?: unknown; surfaceOp?: unknown };
    seqs.push(e.seq);
    types.push(e.type);
    times.push(e.time);
    datas.push(JSON.stringify(e.data));
    sources.push(e.sourceEventSeqs === undefined ? null : JSON.stringify(e.sourceEventSeqs));
    surfaceOps.push(e.surfaceOp === undefined ? null : JSON.stringify(e.surfaceOp));
  }
  return [sessionId, seqs, types, times, datas, sources, surfaceOps];
}

/** Rows per insert when filling: bounds one bind message. */
const FILL_CHUNK = 5000;

/**
 * Writes sessions straight into the schema with raw inserts (no validation, synchronous_commit
 * off, many sessions per transaction): for building large stores to read from quickly.
 */
export async function fillPostgres(
  store: BenchSchema,
  logs: Iterable<{ header: SessionHeader; events: readonly SessionEvent[] }>,
): Promise<void> {
  const client = await store.raw("process");
  let pending = 0;
  await client.query("BEGIN");
  for (const { header, events } of logs) {
    await client.query(prepared("insertSession", rawSessionValues(header)));
    for (let at = 0; at < events.length; at += FILL_CHUNK) {
      const chunk = events.slice(at, at + FILL_CHUNK);
      await client.query(prepared("insertEvents", rawEventValues(header.id, chunk)));
    }
    await client.query(prepared("refreshSummary", rawSummaryValues(header, events)));
    pending += events.length + 1;
    if (pending >= 50_000) {
      await client.query("COMMIT");
      await client.query("BEGIN");
      pending = 0;
    }
  }
  await client.query("COMMIT");
  await client.query("ANALYZE sessions");
  await client.query("ANALYZE events");
}
