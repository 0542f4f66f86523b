// A server on a PostgreSQL store whose connections are terminated or partitioned mid-request: it answers, keeps serving, and never writes without its lock.

import { afterEach, expect, it } from "vitest";
import type { SeedlineClient } from "../../../src/client/seedline-client.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { advisoryKey } from "../../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../../src/store/postgres/postgres-backend.js";
import { simpleTurn } from "../../helpers/builders.js";
import {
  appName,
  connectionsOf,
  outcome,
  storeUrl,
  terminateAll,
} from "../../helpers/postgres-fault-tools.js";
import {
  describePostgres,
  makePostgresHarness,
  POSTGRES_TEST_URL,
  type PostgresHarness,
  rawClient,
  sql,
} from "../../helpers/postgres-harness.js";
import { spawnedClient } from "../../helpers/rpc-fixtures.js";
import { TcpProxy } from "../../helpers/tcp-proxy.js";
import { waitUntil, within } from "../../helpers/waits.js";

const TURN = simpleTurn(0, 1).length;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function harness(): Promise<PostgresHarness> {
  const h = await makePostgresHarness();
  cleanups.push(() => h.cleanup());
  // The first open creates the layout.
  await (await h.open()).close();
  return h;
}

/** A spawned server on `store`, closed after the test. */
function server(store: string): { client: SeedlineClient; stderr: () => string } {
  const spawned = spawnedClient(store, "ndjson");
  cleanups.push(() => spawned.client.close());
  return spawned;
}

/** The backend pid holding the writer lock of session `id` in `schema`, once one does. */
async function lockHolder(schema: string, id: string): Promise<number> {
  const key = BigInt.asUintN(64, BigInt(advisoryKey("seedline-writer", schema, id)));
  let pid: number | undefined;
  await waitUntilAsync(async () => {
    const rows = await sql<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
       AND classid = $1 AND objid = $2 AND objsubid = 1`,
      [String(key >> 32n), String(key & 0xffffffffn)],
    );
    pid = rows[0]?.pid;
    return pid !== undefined;
  }, `a holder of the writer lock of ${id}`);
  return pid as number;
}

async function waitUntilAsync(predicate: () => Promise<boolean>, what: string): Promise<void> {
  let done = false;
  const poll = async () => {
    while (!done) {
      done = await predicate();
      if (!done) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await within(poll(), what);
}

const rowsOf = (h: PostgresHarness, id: string) =>
  h.sql<{ seq: number; text: string | null }>(
    `SELECT seq::int AS seq, data::json -> 'content' -> 0 ->> 'text' AS text
     FROM events WHERE session_id = $1 ORDER BY seq`,
    [id],
  );

describePostgres("PostgreSQL faults under a spawned server", () => {
  it("answers every in-flight request when its connections are terminated, and serves the next on fresh ones", async () => {
    // Seen failing before the fix (run against d7a1030): see the comment at the end.
    const h = await harness();
    const app = appName();
    const { client, stderr } = server(storeUrl(h.schema, app));
    await client.sessionCreate({ sessionId: "busy", seed: simpleTurn(0, 1) });
    await client.sessionCreate({ sessionId: "bulk", seed: simpleTurn(0, 1) });
    // Another program holds the row of "busy": its append waits on a seedline connection.
    const holder = await rawClient(h.schema);
    cleanups.push(() => holder.end());
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM sessions WHERE id = 'busy' FOR UPDATE");
    const bulk = Array.from({ length: 400 }, (_, i) => simpleTurn(TURN * (i + 1), i + 2)).flat();
    const inFlight = [
      outcome(client.sessionAppend({ sessionId: "busy", events: simpleTurn(TURN, 2) })),
      outcome(client.sessionAppend({ sessionId: "bulk", events: bulk })),
      outcome(client.sessionList({})),
      outcome(client.sessionRead({ sessionId: "bulk" })),
    ];
    await waitUntilAsync(async () => {
      const blocked = await sql(
        "SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        [(await holder.query("SELECT pg_backend_pid() AS pid")).rows[0].pid],
      );
      return blocked.length > 0;
    }, "the append to busy waiting on the row lock");
    const terminated = await terminateAll(app);
    expect(terminated.length).toBeGreaterThan(0);
    const answers = await within(Promise.all(inFlight), "an answer to every in-flight request");
    await holder.query("ROLLBACK");
    // The waiting append broke before its COMMIT: unavailable, and known not stored.
    expect(answers[0]).toMatchObject({
      code: "STORAGE_UNAVAILABLE",
      data: { commitUnknown: false, location: expect.stringContaining(h.schema) },
    });
    for (const answer of answers) {
      if ("code" in answer) expect(answer.code).toBe("STORAGE_UNAVAILABLE");
    }
    // The server is alive and the next requests work, on fresh connections.
    const next = await within(
      client.sessionAppend({ sessionId: "busy", events: simpleTurn(TURN, 2) }),
      "the next append",
    );
    expect(next.nextSeq).toBe(2 * TURN);
    expect((await client.sessionRead({ sessionId: "busy" })).events).toHaveLength(2 * TURN);
    expect(stderr()).not.toMatch(/Error: terminating connection|Uncaught|unhandled/i);
    // Before the fix (run against d7a1030, pg 8.23.1): the in-flight requests were answered
    // STORAGE_UNAVAILABLE (this pg-pool keeps its own 'error' listener on a checked-out client, so
    // the process did not die here), but the next append was refused for good: SESSION_BUSY
    // "…it was lost with its connection: … load it again".
    console.log(
      `terminated ${terminated.length} connections under 4 in-flight requests: ${answers
        .map((a) => ("code" in a ? a.code : "ok"))
        .join(", ")}; the next append was stored`,
    );
  });

  it("stops a writer whose lock connection died unheard: nothing stored without the lock, another writer goes first, then it takes the lock again", async () => {
    // Seen failing before the fix (run against d7a1030): see the comment at the first append.
    const h = await harness();
    const proxy = await TcpProxy.start(
      "127.0.0.1",
      Number(new URL(POSTGRES_TEST_URL).port || 5432),
    );
    cleanups.push(() => proxy.close());
    const app = appName();
    const a = server(storeUrl(h.schema, app, proxy.port)).client;
    await a.sessionCreate({ sessionId: "held", seed: simpleTurn(0, 1) });
    // The lock connection is cut without a word (its bytes held by the proxy), then ended on the
    // server: the lock is free there, while the writer still believes it holds it.
    const pid = await lockHolder(h.schema, "held");
    const port = (await connectionsOf(app)).find((c) => c.pid === pid)?.port;
    expect(port).toBeDefined();
    expect(proxy.blackholePort(port as number)).toBe(true);
    await sql("SELECT pg_terminate_backend($1)", [pid]);
    // A second writer takes the session meanwhile (here: its advisory lock, from raw SQL).
    const key = advisoryKey("seedline-writer", h.schema, "held");
    const other = await rawClient(h.schema);
    cleanups.push(() => other.end());
    await waitUntilAsync(
      async () =>
        (await other.query("SELECT pg_try_advisory_lock($1::bigint) AS locked", [key])).rows[0]
          .locked === true,
      "the second writer taking the lock",
    );
    // Before the fix (run against d7a1030) this append was acknowledged ({ nextSeq: 14 }) and
    // stored while another writer held the lock.
    const first = await within(
      outcome(
        a.sessionAppend({ sessionId: "held", events: simpleTurn(TURN, 2, { prompt: "a1" }) }),
      ),
      "the answer to the append after the loss",
    );
    expect(first).toMatchObject({ code: "STORAGE_UNAVAILABLE", data: { commitUnknown: false } });
    expect(await rowsOf(h, "held")).toHaveLength(TURN);
    // While the other writer holds it, the session is busy, not lost for good.
    const busy = await outcome(
      a.sessionAppend({ sessionId: "held", events: simpleTurn(TURN, 2, { prompt: "a1" }) }),
    );
    expect(busy).toMatchObject({ code: "SESSION_BUSY" });
    // The other writer (a second server) writes a turn, then lets go.
    await other.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
    const b = spawnedClient(storeUrl(h.schema, appName()), "ndjson").client;
    await b.sessionAppend({ sessionId: "held", events: simpleTurn(TURN, 2, { prompt: "b" }) });
    await b.close();
    // The first takes the lock again and reads what was stored meanwhile: its stale batch is a
    // conflict, never an overwrite; a batch after the other's is stored.
    const stale = await within(
      outcome(
        a.sessionAppend({ sessionId: "held", events: simpleTurn(TURN, 2, { prompt: "a1" }) }),
      ),
      "the stale append",
    );
    expect(stale).toMatchObject({ code: "SEQ_CONFLICT" });
    const after = await a.sessionAppend({
      sessionId: "held",
      events: simpleTurn(2 * TURN, 3, { prompt: "a2" }),
    });
    expect(after.nextSeq).toBe(3 * TURN);
    const texts = (await rowsOf(h, "held")).filter((r) => r.seq % TURN === 1).map((r) => r.text);
    expect(texts).toEqual(["prompt of turn 1", "b", "a2"]);
    proxy.heal();
    console.log(
      `lost lock: first append ${(first as { code: string }).code}, then ${(busy as { code: string }).code} while held elsewhere, ${(stale as { code: string }).code} for the stale batch, then stored after re-taking`,
    );
  });

  it("answers STORAGE_UNAVAILABLE within the configured bound when the network is partitioned, and works once it heals", async () => {
    // Seen failing before the fix (run against d7a1030): see the comment at the bound.
    const h = await harness();
    const proxy = await TcpProxy.start(
      "127.0.0.1",
      Number(new URL(POSTGRES_TEST_URL).port || 5432),
    );
    cleanups.push(() => proxy.close());
    const app = appName();
    const bounds = "&connect_timeout=1&statement_timeout=1000&query_timeout=1500&keepalives_idle=1";
    const { client } = server(storeUrl(h.schema, app, proxy.port, bounds));
    await client.sessionCreate({ sessionId: "cut", seed: simpleTurn(0, 1) });
    await client.sessionAppend({ sessionId: "cut", events: simpleTurn(TURN, 2) });
    proxy.blackhole();
    // Bound: query_timeout (1.5 s) for the statement in flight, or connect_timeout (1 s) for a new
    // connection; 10 s leaves a loaded machine its margin. Before the fix (run against d7a1030) the
    // list below got no answer within 10 s ("expected the list during the partition within
    // 10000 ms": no connect timeout from the URL, 10 s fixed); the append was answered only
    // because node-postgres itself read query_timeout from the URL.
    const started = Date.now();
    const cut = await within(
      outcome(client.sessionAppend({ sessionId: "cut", events: simpleTurn(2 * TURN, 3) })),
      "the append during the partition",
      10_000,
    );
    const appendMs = Date.now() - started;
    expect(cut).toMatchObject({
      code: "STORAGE_UNAVAILABLE",
      data: { location: expect.stringContaining(h.schema) },
    });
    const listed = await within(
      outcome(client.sessionList({})),
      "the list during the partition",
      10_000,
    );
    expect(listed).toMatchObject({ code: "STORAGE_UNAVAILABLE" });
    proxy.heal();
    // An append cut during its COMMIT may have landed: the same batch is retried (an identical
    // retry is acknowledged), as a client does.
    const healed = await within(
      client.sessionAppend({ sessionId: "cut", events: simpleTurn(2 * TURN, 3) }),
      "the append after healing",
    );
    expect(healed.nextSeq).toBe(3 * TURN);
    expect(await rowsOf(h, "cut")).toHaveLength(3 * TURN);
    console.log(
      `partition: the append was answered ${(cut as { code: string }).code} after ${appendMs} ms (query_timeout 1500 ms); stored after healing`,
    );
  });

  it("makes the LISTEN connection again when a partition cuts it without a word, and hears the next write", async () => {
    // Before the fix (run against d7a1030) nothing probed the idle LISTEN connection: no error
    // was heard during the partition ("expected the listener to hear the partition within
    // 20000 ms").
    const h = await harness();
    const proxy = await TcpProxy.start(
      "127.0.0.1",
      Number(new URL(POSTGRES_TEST_URL).port || 5432),
    );
    cleanups.push(() => proxy.close());
    const errors: unknown[] = [];
    const listening = await PostgresBackend.open(storeUrl(h.schema, appName(), proxy.port), {
      timeouts: { keepAliveMs: 200, queryMs: 500, connectMs: 500 },
      onListenError: (error) => errors.push(error),
    });
    cleanups.push(() => listening.close());
    const writer = await h.open();
    await writer.create({ version: 0, id: "heard", createdAt: 1 }, []);
    let heard = 0;
    const unsubscribe = listening.subscribe("heard", () => {
      heard++;
    });
    cleanups.push(async () => unsubscribe());
    // Listening: a write from another backend is heard.
    await writer.append("heard", 0, serializeEvents(simpleTurn(0, 1)));
    await waitUntil(() => heard > 0, "the first write heard");
    proxy.blackhole();
    await waitUntil(() => errors.length > 0, "the listener to hear the partition");
    proxy.heal();
    const before = heard;
    // Once it listens again it tells every subscriber to read again, and hears new writes.
    await waitUntil(() => heard > before, "the listener listening again");
    const again = heard;
    await writer.append("heard", TURN, serializeEvents(simpleTurn(TURN, 2)));
    await waitUntil(() => heard > again, "the write after healing heard");
    console.log(
      `listener partitioned: heard ${String((errors[0] as Error)?.message)}, listening again after healing`,
    );
  });
});
