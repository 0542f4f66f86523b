// The PostgreSQL backend beyond the shared contract: corpus, version policy, durability, locks, concurrency, lost connections, readers and change notifications.

import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_DDL } from "../../../generated/postgres-layout.gen.js";
import { POSTGRES_QUERIES } from "../../../generated/postgres-queries.gen.js";
import type { SessionEvent, SessionHeader } from "../../../src/generated.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { openBackend } from "../../../src/store/open/open-backend.js";
import {
  advisoryKey,
  changeChannel,
  clientConfig,
  resolveTarget,
} from "../../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../../src/store/postgres/postgres-backend.js";
import { SessionStore } from "../../../src/store/session-store.js";
import { balancedLog, simpleTurn, TIME } from "../../helpers/builders.js";
import { corpusLogs } from "../../helpers/corpus.js";
import {
  describePostgres,
  dropSchema,
  dumpSchema,
  freshSchemaName,
  makePostgresHarness,
  POSTGRES_TEST_URL,
  type PostgresHarness,
  rawClient,
  sql,
  terminateWriterLock,
  until,
  writerLockHolder,
} from "../../helpers/postgres-harness.js";
import { within } from "../../helpers/waits.js";

const TURN = simpleTurn(0, 1).length;

function header(id: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return { version: 0, id, createdAt: TIME, ...extra };
}

/** The URL with `?schema=` set. */
function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("schema", schema);
  return parsed.toString();
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol("pending");
  const result = await Promise.race([
    promise.then(
      () => "settled",
      () => "settled",
    ),
    new Promise((done) => setTimeout(() => done(marker), ms)),
  ]);
  return result === marker;
}

/**
 * Change calls in the order they came, each under the label of its subscriber, and a promise that
 * waits for the calls to satisfy a condition (rejecting, with what came, after a generous `ms`).
 */
class CallLog {
  readonly calls: string[] = [];
  readonly #waiters = new Set<() => void>();

  /** A subscriber that records its calls under `label`. */
  recorder(label: string): () => void {
    return () => {
      this.calls.push(label);
      for (const waiter of [...this.#waiters]) waiter();
    };
  }

  /** Resolves once `holds(calls)` is true. */
  until(holds: (calls: readonly string[]) => boolean, ms = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!holds(this.calls)) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out waiting for change calls; got ${JSON.stringify(this.calls)}`));
      }, ms);
      this.#waiters.add(check);
      check();
    });
  }

  /** The calls after the first `mark`. */
  since(mark: number): string[] {
    return this.calls.slice(mark);
  }
}

/** Whether every label has been called at least once. */
function calledAll(...labels: string[]): (calls: readonly string[]) => boolean {
  return (calls) => labels.every((label) => calls.includes(label));
}

describe("PostgreSQL store URLs", () => {
  it("takes the schema from the options, else ?schema=, else seedline, and never shows the password", () => {
    const url = "postgres://me:secret@db.example:5432/agents?schema=team_a&sslmode=disable";
    const target = resolveTarget(url, undefined);
    expect(target.schema).toBe("team_a");
    expect(target.location).toBe("postgres://me@db.example:5432/agents (schema team_a)");
    expect(target.connectionString).not.toContain("schema=");
    expect(target.connectionString).toContain("sslmode=disable");
    expect(resolveTarget(url, "other").schema).toBe("other");
    expect(resolveTarget("postgresql://h/db", undefined).schema).toBe("seedline");
  });

  it("bounds every wait by default, takes libpq-named timeouts from the URL (removed from what the driver sees), options over both", () => {
    const plain = resolveTarget("postgres://h/db", undefined);
    expect(plain.timeouts).toEqual({
      connectMs: 10_000,
      keepAliveMs: 10_000,
      statementMs: 30_000,
      queryMs: 35_000,
      idleInTransactionMs: 30_000,
    });
    expect(plain.applicationName).toBe("seedline");
    const url =
      "postgres://h/db?connect_timeout=2&keepalives_idle=3&statement_timeout=400&idle_in_transaction_session_timeout=500&application_name=mine&sslmode=disable";
    const target = resolveTarget(url, undefined);
    expect(target.timeouts).toEqual({
      connectMs: 2000,
      keepAliveMs: 3000,
      statementMs: 400,
      queryMs: 5400,
      idleInTransactionMs: 500,
    });
    expect(target.applicationName).toBe("mine");
    expect(target.connectionString).toBe("postgres://h/db?sslmode=disable");
    const config = clientConfig(target, "fsync");
    expect(config).toMatchObject({
      application_name: "mine",
      connectionTimeoutMillis: 2000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 3000,
      query_timeout: 5400,
    });
    expect(config.options).toContain("-c statement_timeout=400");
    expect(config.options).toContain("-c idle_in_transaction_session_timeout=500");
    const off = resolveTarget("postgres://h/db?keepalives=0&query_timeout=0", undefined, {
      statementMs: 100,
    });
    expect(off.timeouts).toMatchObject({ keepAliveMs: 0, statementMs: 100, queryMs: 0 });
    expect(resolveTarget(url, undefined, { queryMs: 9 }).timeouts.queryMs).toBe(9);
    for (const bad of ["connect_timeout=x", "statement_timeout=-1", "query_timeout="]) {
      expect(() => resolveTarget(`postgres://h/db?${bad}`, undefined), bad).toThrow(
        expect.objectContaining({ code: "INVALID_PARAMS" }),
      );
    }
  });

  it("refuses a schema name that is not a plain lower-case identifier (INVALID_PARAMS)", () => {
    for (const schema of ["Team", "a-b", "1a", "pg_x", "x".repeat(64), 'a"b']) {
      expect(() => resolveTarget("postgres://h/db", schema), schema).toThrow(
        expect.objectContaining({ code: "INVALID_PARAMS" }),
      );
    }
  });

  it("derives a change channel per schema that is a plain identifier of at most 63 bytes", () => {
    const channel = changeChannel("seedline");
    expect(channel).toMatch(/^seedline_changes_[0-9a-f]{16}$/);
    expect(changeChannel("seedline")).toBe(channel);
    expect(changeChannel("other")).not.toBe(channel);
    expect(Buffer.byteLength(changeChannel("x".repeat(63)))).toBeLessThanOrEqual(63);
  });

  it("derives stable 64-bit advisory keys, distinct per schema and session", () => {
    const key = advisoryKey("seedline-writer", "seedline", "s1");
    expect(key).toBe(advisoryKey("seedline-writer", "seedline", "s1"));
    expect(BigInt(key)).toBeGreaterThanOrEqual(-(2n ** 63n));
    expect(BigInt(key)).toBeLessThan(2n ** 63n);
    expect(new Set([key, advisoryKey("seedline-writer", "other", "s1")]).size).toBe(2);
  });
});

describePostgres("PostgreSQL backend", () => {
  const harnesses: PostgresHarness[] = [];
  const schemas: string[] = [];
  const clients: pg.Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    for (const harness of harnesses.splice(0)) await harness.cleanup();
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  async function harness(): Promise<PostgresHarness> {
    const h = await makePostgresHarness();
    harnesses.push(h);
    return h;
  }

  async function client(schema?: string): Promise<pg.Client> {
    const c = await rawClient(schema);
    clients.push(c);
    return c;
  }

  /** A schema holding the generated layout with its version record set to `version`, and a session. */
  async function schemaAtVersion(version: number): Promise<string> {
    const schema = freshSchemaName();
    schemas.push(schema);
    await sql(`CREATE SCHEMA ${schema}`);
    await sql(`BEGIN; ${POSTGRES_DDL} COMMIT;`, [], schema);
    await sql("UPDATE seedline_layout SET version = $1", [version], schema);
    await sql("INSERT INTO sessions (id, version, created_at) VALUES ('kept', 0, 1)", [], schema);
    return schema;
  }

  it("reaches the test server (with CI set, an unreachable server fails here)", async () => {
    expect(await sql("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("imports every corpus log and exports it byte-identical", async () => {
    const h = await harness();
    const store = new SessionStore({ backend: await h.open() });
    const logs = corpusLogs();
    expect(logs.length).toBeGreaterThan(30);
    let events = 0;
    for (const log of logs) {
      const stored = await store.importLog(log.text);
      expect(await store.exportLog(stored.id), log.name).toBe(log.text);
      const loaded = await store.load(stored.id);
      expect(await loaded.readEvents(), log.name).toEqual(log.events);
      events += (await loaded.readEvents()).length;
      // Some corpus logs share an id (placeholder ids); each is checked on its own.
      await store.delete(stored.id);
    }
    await store.close();
    console.log(`corpus: ${logs.length} logs, ${events} events byte-identical through PostgreSQL`);
  });

  it("creates a missing schema with the layout and its version record, then opens it as current", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    const first = await PostgresBackend.open(POSTGRES_TEST_URL, { schema });
    await first.close();
    expect(await sql("SELECT version FROM seedline_layout", [], schema)).toEqual([{ version: 4 }]);
    const again = await PostgresBackend.open(POSTGRES_TEST_URL, { schema });
    expect(await again.has("nothing")).toBe(false);
    await again.close();
  });

  it("lets creators race on a new schema: every one opens, one layout and one record result", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    const opened = await Promise.all(
      [0, 1, 2, 3, 4].map(() => PostgresBackend.open(POSTGRES_TEST_URL, { schema })),
    );
    for (const backend of opened) await backend.close();
    expect(await sql("SELECT version FROM seedline_layout", [], schema)).toEqual([{ version: 4 }]);
  });

  for (const [version, direction] of [
    [3, "no layout is migrated"],
    [5, "seedline export --store OLD ID"],
    [6, "upgrade seedline"],
  ] as const) {
    it(`refuses a schema at layout ${version} (FORMAT_UNSUPPORTED) and writes nothing to it`, async () => {
      const schema = await schemaAtVersion(version);
      if (version === 5) {
        // What the builds that kept summaries in the layout made: layout 4 plus this table.
        await sql(
          "CREATE TABLE session_summaries (session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, updated_at bigint NOT NULL, title text, derived_title text, PRIMARY KEY (session_id))",
          [],
          schema,
        );
      }
      const before = await dumpSchema(schema);
      const error = await openBackend(withSchema(POSTGRES_TEST_URL, schema)).catch((e) => e);
      expect(error).toMatchObject({
        code: "FORMAT_UNSUPPORTED",
        details: { found: version, supported: 4 },
      });
      expect(error.details.location).toContain(`schema ${schema}`);
      expect(error.details.location).toContain("127.0.0.1");
      expect(error.message).toContain(direction);
      expect(await dumpSchema(schema)).toBe(before);
      expect(before).toContain("kept");
    });
  }

  it("refuses a schema that holds unrelated tables and no layout record, and leaves it as it was", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    await sql(`CREATE SCHEMA ${schema}`);
    await sql("CREATE TABLE notes (id integer PRIMARY KEY, body text)", [], schema);
    await sql("INSERT INTO notes VALUES (1, 'mine')", [], schema);
    const before = await dumpSchema(schema);
    const error = await PostgresBackend.open(POSTGRES_TEST_URL, { schema }).catch((e) => e);
    expect(error).toMatchObject({
      code: "FORMAT_UNSUPPORTED",
      details: { found: 0, supported: 4 },
    });
    expect(error.message).toContain("not a seedline store");
    expect(await dumpSchema(schema)).toBe(before);
  });

  it("reports layout 4 with relations not its own, or two version records, as CORRUPT_LOG", async () => {
    const extra = await schemaAtVersion(4);
    await sql("CREATE TABLE stray (x integer)", [], extra);
    await expect(PostgresBackend.open(POSTGRES_TEST_URL, { schema: extra })).rejects.toMatchObject({
      code: "CORRUPT_LOG",
    });
    const twice = await schemaAtVersion(4);
    await sql("INSERT INTO seedline_layout VALUES (6)", [], twice);
    await expect(PostgresBackend.open(POSTGRES_TEST_URL, { schema: twice })).rejects.toMatchObject({
      code: "CORRUPT_LOG",
    });
  });

  it("opens a layout-4 schema another build wrote (no catalog): the catalog made from its logs, its tables and version untouched", async () => {
    const schema = freshSchemaName();
    schemas.push(schema);
    await sql(`CREATE SCHEMA ${schema}`);
    await sql(`BEGIN; ${POSTGRES_DDL} COMMIT;`, [], schema);
    await sql("INSERT INTO sessions (id, version, created_at) VALUES ('old', 0, 1)", [], schema);
    await sql("INSERT INTO sessions (id, version, created_at) VALUES ('quiet', 0, 2)", [], schema);
    const data = JSON.stringify({
      content: [{ type: "text", text: "Hello\n  world 🚀" }],
      source: { kind: "user" },
    });
    await sql(
      "INSERT INTO events (session_id, seq, type, time, data, surface_op) VALUES ('old', 0, 'user/message', 50, $1, '\"append\"')",
      [data],
      schema,
    );
    const canonical = "SELECT * FROM sessions ORDER BY id";
    const before = [
      await sql(canonical, [], schema),
      await sql("SELECT * FROM events", [], schema),
    ];
    const backend = await PostgresBackend.open(POSTGRES_TEST_URL, { schema });
    try {
      const page = await backend.catalog.list({ limit: 10, order: "activity" });
      expect(page.sessions.map((s) => [s.header.id, s.updatedAt, s.title])).toEqual([
        ["old", 50, "Hello world 🚀"],
        ["quiet", 2, undefined],
      ]);
    } finally {
      await backend.close();
    }
    expect(await sql("SELECT version FROM seedline_layout", [], schema)).toEqual([{ version: 4 }]);
    expect(await sql("SELECT version FROM catalog_version", [], schema)).toEqual([{ version: 2 }]);
    expect([
      await sql(canonical, [], schema),
      await sql("SELECT * FROM events", [], schema),
    ]).toEqual(before);
  });

  it("reports an unreachable server as STORAGE_UNAVAILABLE naming the store", async () => {
    const error = await PostgresBackend.open("postgres://nobody@127.0.0.1:1/none").catch((e) => e);
    expect(error).toMatchObject({ name: "StorageUnavailableError", code: "STORAGE_UNAVAILABLE" });
    expect(error.message).toContain("postgres://nobody@127.0.0.1:1/none (schema seedline)");
  });

  it("opens through openBackend for postgres:// and postgresql:// URLs", async () => {
    const h = await harness();
    for (const scheme of ["postgres", "postgresql"]) {
      const url = withSchema(POSTGRES_TEST_URL.replace(/^postgres(ql)?/, scheme), h.schema);
      const backend = await openBackend(url, { durability: "process" });
      expect(backend.kind).toBe("postgres");
      await backend.close();
    }
  });

  it("runs synchronous_commit on for durability fsync (the default) and off for process", async () => {
    const h = await harness();
    const durable = await h.open();
    expect(await durable.settings()).toMatchObject({
      synchronousCommit: "on",
      currentSchema: h.schema,
    });
    const fast = await h.open({ durability: "process" });
    expect(await fast.settings()).toMatchObject({ synchronousCommit: "off" });
  });

  it("maps a taken id, a stale seq and a missing session to their codes", async () => {
    const backend = await (await harness()).open();
    await backend.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    await expect(backend.create(header("x"), [])).rejects.toMatchObject({
      code: "SESSION_ALREADY_EXISTS",
    });
    await expect(backend.append("x", 0, serializeEvents(simpleTurn(0, 2)))).rejects.toMatchObject({
      code: "SEQ_CONFLICT",
      details: { expectedSeq: TURN },
    });
    await expect(
      backend.append("nope", 0, serializeEvents(simpleTurn(0, 1))),
    ).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
    await expect(backend.fork("nope", 0, header("y"))).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
    await expect(backend.fork("x", 0, header("x"))).rejects.toMatchObject({
      code: "SESSION_ALREADY_EXISTS",
    });
    expect((await backend.load("x"))?.events).toEqual(simpleTurn(0, 1));
  });

  it("forks by copying the prefix rows inside the database, byte for byte", async () => {
    const h = await harness();
    const backend = await h.open();
    const log = balancedLog(2, { toolCallsPerStep: 1 });
    await backend.create(header("parent"), serializeEvents(log));
    await backend.fork(
      "parent",
      TURN - 1,
      header("kid", { parentSession: "parent", seedLength: TURN }),
    );
    const rowsOf = (id: string) =>
      h.sql(
        "SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = $1 ORDER BY seq",
        [id],
      );
    expect(await rowsOf("kid")).toEqual((await rowsOf("parent")).slice(0, TURN));
    expect((await backend.forkPoint("parent", TURN + 2))?.marker).toMatchObject({
      type: "turn/start",
      turn: 2,
    });
  });

  it("repairs a torn tail when opened for writing: deletes the damaged row and keeps the intact log", async () => {
    const h = await harness();
    const store = new SessionStore({ backend: await h.open() });
    await store.create({ id: "torn", seed: balancedLog(2) });
    await store.close();
    await h.tamper.tearTail("torn");
    const count = async () =>
      h.sql<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE session_id = 'torn'");
    const reopened = new SessionStore({ backend: await h.open() });
    // Readers see the log as stored; crash repair is the writer's job (docs/readers.md).
    expect(await (await reopened.load("torn")).readEvents()).toEqual(balancedLog(2));
    expect(await count()).toEqual([{ n: balancedLog(2).length + 1 }]);
    expect(await (await reopened.openForWriting("torn")).readEvents()).toEqual(balancedLog(2));
    expect(await count()).toEqual([{ n: balancedLog(2).length }]);
    await reopened.close();
  });

  it("never makes an append to one session wait for a transaction that holds another", async () => {
    const h = await harness();
    const backend = await h.open();
    await backend.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    await backend.create(header("y"), serializeEvents(simpleTurn(0, 1)));
    const side = await client(h.schema);
    await side.query("BEGIN");
    await side.query("SELECT 1 FROM sessions WHERE id = 'x' FOR UPDATE");
    const started = Date.now();
    await backend.append("y", TURN, serializeEvents(simpleTurn(TURN, 2)));
    const tookMs = Date.now() - started;
    expect(tookMs).toBeLessThan(2000);
    const blocked = backend.append("x", TURN, serializeEvents(simpleTurn(TURN, 2)));
    expect(await pendingAfter(blocked, 400)).toBe(true);
    await side.query("COMMIT");
    await blocked;
    expect((await backend.load("x"))?.events).toHaveLength(2 * TURN);
    console.log(`different sessions: append to y took ${tookMs} ms while x was locked`);
  });

  it("reports a connection lost mid-append as STORAGE_UNAVAILABLE, with no event of the batch stored", async () => {
    const h = await harness();
    const backend = await h.open();
    await backend.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    const batch = simpleTurn(TURN, 2);
    // Another transaction holds an uncommitted row at a seq inside the batch, so the append's
    // insert stops there, after the rows before it, until that transaction ends.
    const side = await client(h.schema);
    const sidePid = (await side.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]
      ?.pid;
    await side.query("BEGIN");
    await side.query(
      "INSERT INTO events (session_id, seq, type, time, data) VALUES ('x', $1, 'turn/start', 0, '{}')",
      [TURN + 3],
    );
    const append = backend.append("x", TURN, serializeEvents(batch));
    const settled = append.catch((e) => e);
    const blockedPid = await until(async () => {
      const rows = await sql<{ pid: number; query: string }>(
        "SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        [sidePid],
      );
      return rows[0];
    });
    // The append's one statement (appendEvents; pg_stat_activity keeps its first 1 KiB), held by
    // a transaction that holds no session row: on its insert.
    expect(POSTGRES_QUERIES.appendEvents.startsWith(blockedPid.query.slice(0, 200))).toBe(true);
    await sql("SELECT pg_terminate_backend($1)", [blockedPid.pid]);
    const error = await settled;
    expect(error).toMatchObject({ code: "STORAGE_UNAVAILABLE", commitUnknown: false });
    expect(error.message).toContain("rolled the transaction back");
    expect(error.message).toContain(`schema ${h.schema}`);
    await side.query("ROLLBACK");
    const seqs = await h.sql<{ seq: number }>(
      "SELECT seq::int AS seq FROM events WHERE session_id = 'x' ORDER BY seq",
    );
    expect(seqs.map((r) => r.seq)).toEqual(Array.from({ length: TURN }, (_, i) => i));
    // The pool dropped the broken connection: the same append now lands.
    await backend.append("x", TURN, serializeEvents(batch));
    expect((await backend.load("x"))?.events).toEqual([
      ...simpleTurn(0, 1),
      ...batch,
    ] as SessionEvent[]);
  });

  it("refuses writes once its writer lock went with its connection (STORAGE_UNAVAILABLE), lets another writer take it, then takes it again", async () => {
    // Before the fix (run against d7a1030): the append was SESSION_BUSY "…load it again", and so
    // was every later one, the lock never taken again.
    const h = await harness();
    const backend = await h.open();
    const store = new SessionStore({ backend });
    const session = await store.create({ id: "held", seed: simpleTurn(0, 1) });
    await terminateWriterLock(h.schema, "held");
    // The client hears the server's goodbye right after; give its event a moment.
    await new Promise((wait) => setTimeout(wait, 200));
    // The backend stores nothing without its lock.
    const error = await backend
      .append("held", TURN, serializeEvents(simpleTurn(TURN, 2)))
      .catch((e) => e);
    expect(error).toMatchObject({ code: "STORAGE_UNAVAILABLE", details: { commitUnknown: false } });
    expect(error.message).toContain("lost with its connection");
    expect(backend.lockLost("held")).toBe(true);
    expect((await h.sql("SELECT seq FROM events WHERE session_id = 'held'")).length).toBe(TURN);
    // Another writer can take the session meanwhile: the store's append, which takes the lock
    // again, is SESSION_BUSY while it holds it…
    const other = await h.open();
    const release = await other.lock("held");
    await expect(session.append(simpleTurn(TURN, 2))).rejects.toMatchObject({
      code: "SESSION_BUSY",
    });
    await release();
    // …and once it lets go, the writer takes it again and appends: not refused for good.
    expect(await store.append("held", simpleTurn(TURN, 2))).toBe(2 * TURN);
    expect((await h.sql("SELECT seq FROM events WHERE session_id = 'held'")).length).toBe(2 * TURN);
    expect(backend.lockLost("held")).toBe(false);
    await store.close();
  });

  it("makes a new lock holder wait for a write that checked the old holder's lock before it went, so it reads that write", async () => {
    // Before the fix (run against d7a1030) the new holder got the lock at once, while the old
    // holder's append was still in flight: "expected the new holder to wait" failed (locked true).
    const h = await harness();
    const store = new SessionStore({ backend: await h.open() });
    await store.create({ id: "race", seed: simpleTurn(0, 1) });
    const app = `seedline_t_${Date.now().toString(36)}`;
    const b = await PostgresBackend.open(
      `${POSTGRES_TEST_URL}${POSTGRES_TEST_URL.includes("?") ? "&" : "?"}application_name=${app}`,
      { schema: h.schema },
    );
    // Another program's uncommitted row at the next seq holds the append after its lock check.
    const blocker = await rawClient(h.schema);
    try {
      await blocker.query("BEGIN");
      await blocker.query(
        `INSERT INTO events VALUES ('race', $1, 'turn/start', 1, '{}', NULL, NULL)`,
        [TURN],
      );
      const appended = store.append("race", simpleTurn(TURN, 2));
      const blockerPid = (await blocker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      await until(async () => {
        const rows = await sql(
          "SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
          [blockerPid],
        );
        return rows.length > 0 ? true : undefined;
      });
      // The writer's lock connection dies; another backend takes the lock.
      const holder = await writerLockHolder(h.schema, "race");
      await sql("SELECT pg_terminate_backend($1)", [holder.pid]);
      // pg_terminate_backend only signals: until that backend has exited it still holds the
      // advisory lock, and a take in between is SESSION_BUSY (seen once in CI: "timed out
      // waiting", with that SESSION_BUSY unhandled).
      await until(async () =>
        (await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [holder.pid])).length === 0
          ? true
          : undefined,
      );
      let locked = false;
      const taking = b.lock("race").then((release) => {
        locked = true;
        return release;
      });
      // It waits for the write in flight (its lock connection blocked on the session row).
      await until(async () => {
        if (locked) return true;
        const rows = await sql(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND cardinality(pg_blocking_pids(pid)) > 0",
          [app],
        );
        return rows.length > 0 ? true : undefined;
      });
      expect(locked, "expected the new holder to wait").toBe(false);
      await blocker.query("ROLLBACK");
      // The write checked the lock while it was held: it is acknowledged, and the new holder,
      // once it has the lock, reads it.
      expect(await appended).toBe(2 * TURN);
      const release = await taking;
      expect((await b.load("race"))?.events).toHaveLength(2 * TURN);
      await release();
    } finally {
      await blocker.end();
      await b.close();
      await store.close();
    }
  });

  it("answers STORAGE_UNAVAILABLE with the location when a statement runs past statement_timeout, and the connection serves on", async () => {
    // Before the fix (run against d7a1030) no statement_timeout was set: the append waited on the
    // row lock until the holder let go ("expected the append past statement_timeout within
    // 20000 ms").
    const h = await harness();
    const backend = await h.open({ timeouts: { statementMs: 300 } });
    await backend.create(header("slow"), serializeEvents(simpleTurn(0, 1)));
    const holder = await rawClient(h.schema);
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM sessions WHERE id = 'slow' FOR UPDATE");
      const error = await within(
        backend.append("slow", TURN, serializeEvents(simpleTurn(TURN, 2))).catch((e: unknown) => e),
        "the append past statement_timeout",
      );
      expect(error).toMatchObject({
        code: "STORAGE_UNAVAILABLE",
        details: { commitUnknown: false, location: backend.location },
      });
      expect((error as Error).message).toContain("statement_timeout (300 ms)");
      await holder.query("ROLLBACK");
    } finally {
      await holder.end();
    }
    await backend.append("slow", TURN, serializeEvents(simpleTurn(TURN, 2)));
    expect((await backend.load("slow"))?.events).toHaveLength(2 * TURN);
  });

  /** The pid of the connection LISTENing on the change channel of `schema`, once there is one. */
  async function listenerPid(schema: string, not?: number): Promise<number> {
    const found = await until(async () => {
      const rows = await sql<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE query = $1 AND pid <> pg_backend_pid() AND pid IS DISTINCT FROM $2`,
        [`LISTEN "${changeChannel(schema)}";`, not ?? null],
      );
      return rows[0];
    }, 20_000);
    return found.pid;
  }

  // Each regression case below was seen failing against the finished backend with one part of it
  // taken out, as its comment says (and, before this work, for want of loadFrom and subscribe).

  it("stores a session created without events at once: listed with eventCount 0, appended from seq 0, forked at -1", async () => {
    // A check rather than a regression: create(header, []) already stored the header row.
    const h = await harness();
    const a = await h.open();
    const b = await h.open();
    await a.create(header("empty", { cwd: "/w" }), []);
    expect((await b.catalog.list({ limit: 10 })).sessions).toEqual([
      {
        header: header("empty", { cwd: "/w" }),
        eventCount: 0,
        updatedAt: header("empty").createdAt,
      },
    ]);
    expect(await b.loadFrom("empty", 0)).toEqual({
      header: header("empty", { cwd: "/w" }),
      events: [],
      tornTail: false,
      from: 0,
    });
    await b.fork("empty", -1, header("kid", { parentSession: "empty", seedLength: 0 }));
    await a.append("empty", 0, serializeEvents(simpleTurn(0, 1)));
    expect((await b.load("empty"))?.events).toEqual(simpleTurn(0, 1));
    expect((await a.load("kid"))?.events).toEqual([]);
    const listed = (await a.catalog.list({ limit: 10, parentSession: "empty" })).sessions;
    expect(listed.map((s) => [s.header.id, s.eventCount])).toEqual([["kid", 0]]);
  });

  it("loadFrom reads what another instance appended from the asked seq on, nothing at the end, and a torn tail", async () => {
    // Seen failing with loadFrom reading from seq 0 whatever was asked (events and `from` wrong).
    const h = await harness();
    const a = await h.open();
    const b = await h.open();
    expect(await b.loadFrom("x", 0)).toBeUndefined();
    await a.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    expect(await b.loadFrom("x", 0)).toEqual({
      header: header("x"),
      events: simpleTurn(0, 1),
      tornTail: false,
      from: 0,
    });
    await a.append("x", TURN, serializeEvents(simpleTurn(TURN, 2)));
    expect(await b.loadFrom("x", TURN)).toEqual({
      header: header("x"),
      events: simpleTurn(TURN, 2),
      tornTail: false,
      from: TURN,
    });
    expect(await b.loadFrom("x", 2 * TURN)).toEqual({
      header: header("x"),
      events: [],
      tornTail: false,
      from: 2 * TURN,
    });
    await h.tamper.tearTail("x");
    expect(await b.loadFrom("x", 2 * TURN)).toMatchObject({ events: [], tornTail: true });
  });

  it("loadFrom answers with the whole log from 0 after the session was deleted and created again, shorter", async () => {
    // Seen failing with the proof row left out (rows from fromSeq on only): it answered `from`
    // the old length with no events, hiding the new log.
    const h = await harness();
    const a = await h.open();
    const b = await h.open();
    await a.create(header("x"), serializeEvents(balancedLog(2)));
    const length = balancedLog(2).length;
    expect((await b.loadFrom("x", length))?.events).toEqual([]);
    await a.delete("x");
    expect(await b.loadFrom("x", length)).toBeUndefined();
    await a.create(header("x", { cwd: "/again" }), serializeEvents(simpleTurn(0, 1)));
    expect(await b.loadFrom("x", length)).toEqual({
      header: header("x", { cwd: "/again" }),
      events: simpleTurn(0, 1),
      tornTail: false,
      from: 0,
    });
  });

  it("calls another instance's subscribers after appends and deletes, for their id only, and not after unsubscribe", async () => {
    // Seen failing with the listener never started (ChangeHub without onFirst): no call came
    // from the other instance and the first wait timed out.
    const h = await harness();
    const a = await h.open();
    const b = await h.open();
    await a.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    await a.create(header("y"), serializeEvents(simpleTurn(0, 1)));
    const log = new CallLog();
    const stopFirst = b.subscribe("x", log.recorder("x1"));
    const stopSecond = b.subscribe("x", log.recorder("x2"));
    const stopY = b.subscribe("y", log.recorder("y"));
    // Once it listens, the backend calls every subscriber (writes before may have been missed).
    await log.until(calledAll("x1", "x2", "y"));
    const mark = log.calls.length;
    await a.append("x", TURN, serializeEvents(simpleTurn(TURN, 2)));
    await log.until((calls) => calls.slice(mark).includes("x2"));
    expect((await b.loadFrom("x", TURN))?.events).toEqual(simpleTurn(TURN, 2));
    stopFirst();
    stopFirst();
    await a.delete("y");
    await log.until((calls) => calls.slice(mark).includes("y"));
    expect(await b.loadFrom("y", TURN)).toBeUndefined();
    await a.append("x", 2 * TURN, serializeEvents(simpleTurn(2 * TURN, 3)));
    await log.until((calls) => calls.slice(mark).filter((c) => c === "x2").length === 2);
    // Notifications arrive in commit order: x's append, y's delete, x's second append.
    expect(log.since(mark)).toEqual(["x1", "x2", "y", "x2"]);
    // The listening connection goes once the last subscriber leaves.
    const pid = await listenerPid(h.schema);
    stopSecond();
    stopY();
    await until(async () => {
      const rows = await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
      return rows.length === 0 ? true : undefined;
    }, 20_000);
  });

  it("hears no write to a store in another schema of the same database", async () => {
    // Seen failing with one channel for every schema (changeChannel returning a constant): the
    // other schema's create of "x" called x's subscriber, giving ["x", "w"].
    const h = await harness();
    const other = await harness();
    const a = await h.open();
    const b = await h.open();
    const c = await other.open();
    const log = new CallLog();
    b.subscribe("x", log.recorder("x"));
    b.subscribe("w", log.recorder("w"));
    await log.until(calledAll("x", "w"));
    const mark = log.calls.length;
    await c.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    await a.create(header("w"), serializeEvents(simpleTurn(0, 1)));
    await log.until((calls) => calls.slice(mark).includes("w"));
    expect(log.since(mark)).toEqual(["w"]);
  });

  it("listens again after its connection is terminated, reports the loss, and still hears later appends", async () => {
    // Seen failing with the retry taken out (no reconnect after a loss): after the terminate no
    // call came and the wait for the listener's return timed out.
    const h = await harness();
    const a = await h.open();
    const errors: unknown[] = [];
    const b = await h.open({ onListenError: (error) => errors.push(error) });
    await a.create(header("x"), serializeEvents(simpleTurn(0, 1)));
    const log = new CallLog();
    b.subscribe("x", log.recorder("x"));
    await log.until(calledAll("x"));
    const first = await listenerPid(h.schema);
    await sql("SELECT pg_terminate_backend($1)", [first]);
    // Listening again, it calls the subscriber: changes may have been missed meanwhile.
    await log.until((calls) => calls.length >= 2);
    const second = await listenerPid(h.schema, first);
    expect(second).not.toBe(first);
    expect(errors).toContainEqual(expect.objectContaining({ code: "57P01" }));
    const mark = log.calls.length;
    await a.append("x", TURN, serializeEvents(simpleTurn(TURN, 2)));
    await log.until((calls) => calls.length > mark);
    expect((await b.loadFrom("x", TURN))?.events).toEqual(simpleTurn(TURN, 2));
    await b.close();
    await until(async () => {
      const rows = await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [second]);
      return rows.length === 0 ? true : undefined;
    }, 20_000);
  });
});
