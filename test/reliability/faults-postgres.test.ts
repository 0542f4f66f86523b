// R7 (docs/performance.md), PostgreSQL: a server whose connections are terminated or partitioned mid-request, round after round, answers each request, keeps serving and loses nothing it acknowledged.
import { expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { simpleTurn } from "../helpers/builders.js";
import { appName, outcome, storeUrl, terminateAll } from "../helpers/postgres-fault-tools.js";
import {
  describePostgres,
  makePostgresHarness,
  POSTGRES_TEST_URL,
} from "../helpers/postgres-harness.js";
import { spawnedClient } from "../helpers/rpc-fixtures.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import { within } from "../helpers/waits.js";

const ROUNDS = 40;
const SESSIONS = 3;
/** The timeouts the server runs with: small, so that many partitions fit in a run. */
const QUERY_TIMEOUT_MS = 2000;
const BOUNDS = `&connect_timeout=1&statement_timeout=1500&query_timeout=${QUERY_TIMEOUT_MS}&keepalives_idle=1`;
/**
 * No request may go unanswered longer than this: a partition lasts at most 2.5 s, and an answer
 * then takes at most a connect timeout and a query timeout more; the rest is margin for a loaded
 * machine.
 */
const ANSWER_BOUND_MS = 15_000;
/** Codes a fault may answer: the store is unavailable, or (briefly) the old lock is still held. */
const STORAGE_CODES = new Set(["STORAGE_UNAVAILABLE", "SESSION_BUSY"]);

/** A small deterministic generator, so that a failing run can be repeated. */
function prng(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

describePostgres("R7 faults: PostgreSQL", () => {
  it(`answers every request through ${ROUNDS} rounds of terminated and partitioned connections, and loses no acknowledged batch`, async () => {
    // Before the fix (run against d7a1030): after the first termination a session's lock was
    // lost for good, every later append SESSION_BUSY "…load it again" ("attempts at one batch of
    // r7-1: expected 100 to be less than 100").
    const h = await makePostgresHarness();
    await (await h.open()).close();
    const proxy = await TcpProxy.start(
      "127.0.0.1",
      Number(new URL(POSTGRES_TEST_URL).port || 5432),
    );
    const app = appName();
    const { client, stderr } = spawnedClient(storeUrl(h.schema, app, proxy.port, BOUNDS), "ndjson");
    const random = prng(0x7e57);
    const started = Date.now();
    const ids = Array.from({ length: SESSIONS }, (_, i) => `r7-${i}`);
    /** What each session must hold: the seed, then every acknowledged batch in order. */
    const expected = new Map<string, SessionEvent[]>();
    const turns = new Map<string, number>();
    const codes = new Map<string, number>();
    let commitUnknown = 0;
    let acknowledged = 0;
    let retries = 0;
    let readFailures = 0;
    let slowest = 0;
    let terminations = 0;
    let partitions = 0;
    const count = (code: string) => codes.set(code, (codes.get(code) ?? 0) + 1);
    try {
      for (const id of ids) {
        await client.sessionCreate({ sessionId: id, seed: simpleTurn(0, 1) });
        expected.set(id, simpleTurn(0, 1));
        turns.set(id, 1);
      }
      for (let round = 0; round < ROUNDS; round++) {
        // Every session's next batch in flight, and a read, when the fault strikes.
        const inFlight = ids.map((id) => sendUntilAcknowledged(id));
        const read = outcome(client.sessionRead({ sessionId: ids[0] as string }));
        await new Promise((resolve) => setTimeout(resolve, random(40)));
        if (round % 2 === 0) {
          terminations++;
          await terminateAll(app);
        } else {
          partitions++;
          proxy.blackhole();
          await new Promise((resolve) => setTimeout(resolve, 200 + random(2300)));
          proxy.heal();
        }
        const readAnswer = await within(read, "an answer to the read", ANSWER_BOUND_MS);
        if ("code" in readAnswer) {
          readFailures++;
          // Seen failing in 2 of 5 runs before pooled connections carried their own 'error'
          // listener: "NO ANSWER: ConnectionClosedError", the server's stderr showing an unhandled
          // 'error' event ("terminating connection due to administrator command") from a
          // connection terminated while checked out between two queries.
          expect(readAnswer.code, `server stderr: ${stderr().slice(-3000)}`).toBe(
            "STORAGE_UNAVAILABLE",
          );
        }
        const settled = await Promise.allSettled(inFlight);
        for (const result of settled) if (result.status === "rejected") throw result.reason;
      }
      // The server still serves: every session reads back exactly what was acknowledged.
      for (const id of ids) {
        const read = await client.sessionRead({ sessionId: id });
        expect(read.events).toEqual(expected.get(id));
      }
    } finally {
      await client.close();
      await proxy.close();
    }
    // A fresh backend, straight to the server, holds every acknowledged batch and nothing else.
    const fresh = await h.open();
    let events = 0;
    for (const id of ids) {
      const stored = await fresh.load(id);
      expect(stored?.tornTail).toBe(false);
      expect(stored?.events).toEqual(expected.get(id));
      events += stored?.events.length ?? 0;
    }
    await h.cleanup();
    expect(stderr()).not.toMatch(/Uncaught|unhandled|FATAL/i);
    const answered = [...codes].map(([code, n]) => `${n} ${code}`).join(", ") || "no error";
    console.log(
      `R7 postgres: ${ROUNDS} rounds (${terminations} terminations of every connection, ${partitions} partitions of 0.2-2.5 s), ` +
        `${acknowledged} batches acknowledged (${events} events) all present after reload; ${retries} appends answered ${answered} ` +
        `(${commitUnknown} commitUnknown) and sent again, ${readFailures} of ${ROUNDS} reads STORAGE_UNAVAILABLE, 0 INTERNAL, slowest answer ${slowest} ms (query_timeout ${QUERY_TIMEOUT_MS} ms, bound ${ANSWER_BOUND_MS} ms), ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    /** Sends the next batch of `id` until it is acknowledged, retrying after each storage code. */
    async function sendUntilAcknowledged(id: string): Promise<void> {
      const log = expected.get(id) as SessionEvent[];
      const turnCount = 1 + random(40);
      const batch: SessionEvent[] = [];
      let turn = turns.get(id) as number;
      for (let i = 0; i < turnCount; i++) {
        batch.push(...simpleTurn(log.length + batch.length, ++turn, { prompt: `${id}:${turn}` }));
      }
      for (let attempt = 0; ; attempt++) {
        const sent = Date.now();
        const answer = await within(
          outcome(client.sessionAppend({ sessionId: id, events: batch })),
          `an answer to the append to ${id}`,
          ANSWER_BOUND_MS,
        );
        slowest = Math.max(slowest, Date.now() - sent);
        if ("ok" in answer) {
          expect(answer.ok).toEqual({ nextSeq: log.length + batch.length });
          log.push(...batch);
          turns.set(id, turn);
          acknowledged++;
          return;
        }
        const code = String(answer.code);
        count(code);
        // Never INTERNAL, never a conflict: a storage code, and the same batch again (an
        // identical retry of a batch that landed unacknowledged is acknowledged).
        expect(
          STORAGE_CODES.has(code),
          `${code} ${JSON.stringify(answer.data)}; server stderr: ${stderr().slice(-3000)}`,
        ).toBe(true);
        if (answer.data.commitUnknown === true) commitUnknown++;
        expect(attempt, `attempts at one batch of ${id}`).toBeLessThan(100);
        retries++;
        await new Promise((resolve) => setTimeout(resolve, 50 + random(200)));
      }
    }
  }, 900_000);
});
