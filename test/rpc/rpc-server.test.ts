// The server over an in-memory stream pair, driven by SeedlineClient.connect: every method, params validation,
// per-session ordering, idle unloading, INTERNAL, and graceful close.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { serverEntry } from "../../src/client/seedline-client.js";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import {
  ConnectionClosedError,
  hasCode,
  JsonlBackend,
  MemoryBackend,
  RpcResponseError,
  SeedlineClient,
  type SerializedEvent,
  SessionStore,
  serve,
} from "../../src/index.js";
import { INTERNAL_MESSAGE } from "../../src/rpc/error-mapping.js";
import { balancedLog, simpleTurn } from "../helpers/builders.js";
import {
  CORPUS_TREE,
  everyErrorScenario,
  everyMethodScenario,
  expectCode,
  memoryServer,
  RawPeer,
  responseError,
  tempDir,
} from "../helpers/rpc-fixtures.js";
import { waitUntil } from "../helpers/waits.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A memory server closed after the test. */
function started(...args: Parameters<typeof memoryServer>) {
  const running = memoryServer(...args);
  cleanups.push(async () => {
    if (args[1] !== false) await running.client.close();
    else running.toServer.end();
    await running.server.closed;
  });
  return running;
}

/** A memory backend whose appends wait for the test to open a gate, per session. */
class GatedBackend extends MemoryBackend {
  readonly #gates = new Map<string, Promise<void>>();
  readonly #opens = new Map<string, () => void>();
  readonly arrived = new Map<string, () => void>();

  /** Holds the next appends to `id` until `open(id)`; resolves once one has arrived. */
  hold(id: string): Promise<void> {
    this.#gates.set(id, new Promise((resolve) => this.#opens.set(id, resolve)));
    return new Promise((resolve) => this.arrived.set(id, resolve));
  }

  open(id: string): void {
    this.#opens.get(id)?.();
    this.#gates.delete(id);
  }

  override async append(id: string, fromSeq: number, events: readonly SerializedEvent[]) {
    const gate = this.#gates.get(id);
    if (gate !== undefined) {
      this.arrived.get(id)?.();
      await gate;
    }
    return super.append(id, fromSeq, events);
  }
}

describe("the server over memory streams", () => {
  it("answers every method of the table with results its schema accepts", async () => {
    const { client } = started();
    await everyMethodScenario(client, "mem");
  });

  it("answers every domain error a client can provoke with its code, number and data", async () => {
    const { client } = started();
    const seen = await everyErrorScenario(client, "mem");
    expect(seen.size).toBe(14);
  });

  it("reports the store kind it was given, else the backend's", async () => {
    const given = started({ storeKind: "sqlite" });
    const init = await given.client.initialize({ protocolVersion: 1 });
    expect(init.agentCapabilities._meta.seedline).toMatchObject({
      store: "sqlite",
      formatVersion: 0,
      sqliteSchemaVersion: 4,
    });
    const own = started();
    expect(
      (await own.client.initialize({ protocolVersion: 1 })).agentCapabilities._meta.seedline.store,
    ).toBe("memory");
  });

  it("re-points an INVALID_EVENT of a seed under /seed/<i>", async () => {
    const { client } = started();
    const seed = simpleTurn(0, 1);
    const error = await expectCode(
      client.sessionCreate({ seed: [seed[0], { ...seed[1], data: 5 }] as never }),
      "INVALID_EVENT",
    );
    expect(error.data).toMatchObject({ index: 1, instancePath: "/seed/1/data" });
  });

  it("refuses a throughSeq past the last event as INVALID_PARAMS at /throughSeq", async () => {
    const { client } = started();
    await client.sessionCreate({ sessionId: "m", seed: simpleTurn(0, 1) });
    const error = await expectCode(
      client.sessionMessages({ sessionId: "m", throughSeq: 7 }),
      "INVALID_PARAMS",
    );
    expect(error.data).toMatchObject({ errors: [{ instancePath: "/throughSeq" }] });
  });

  it("lists params errors with instancePath and message, and takes absent params as {}", async () => {
    const { toServer, toClient } = started(undefined, false);
    const peer = new RawPeer("ndjson", toClient, toServer);
    peer.send({ jsonrpc: "2.0", id: 1, method: "session/read", params: { sessionId: 5 } });
    peer.send({ jsonrpc: "2.0", id: 2, method: "session/list" });
    peer.send({ jsonrpc: "2.0", id: 3, method: "initialize" });
    const answers = await peer.byId(3);
    expect(answers.get(1)?.error).toEqual({
      code: RPC_ERROR_CODES.INVALID_PARAMS,
      message: expect.any(String),
      data: {
        code: "INVALID_PARAMS",
        errors: [{ instancePath: "/sessionId", message: "must be string" }],
      },
    });
    expect(answers.get(2)?.result).toEqual({ sessions: [] });
    expect(answers.get(3)?.error?.data).toMatchObject({
      errors: [{ instancePath: "", message: "must have required property 'protocolVersion'" }],
    });
  });

  it("answers SESSION_BUSY when another writer holds the session, in one process", async () => {
    const temp = tempDir();
    cleanups.push(temp.remove);
    const other = new SessionStore({ backend: new JsonlBackend(temp.dir) });
    cleanups.push(() => other.close());
    await other.create({ id: "held", seed: simpleTurn(0, 1) });
    const { client } = started({
      store: new SessionStore({ backend: new JsonlBackend(temp.dir) }),
    });
    const busy = await expectCode(
      client.sessionAppend({ sessionId: "held", events: simpleTurn(7, 2) }),
      "SESSION_BUSY",
    );
    expect(busy.data).toEqual({ code: "SESSION_BUSY", sessionId: "held" });
  });
});

describe("request ordering", () => {
  it("runs requests on one session in arrival order and other sessions meanwhile", async () => {
    const backend = new GatedBackend();
    const { client } = started({ store: new SessionStore({ backend }) });
    // Runs before the server's cleanup, so a failing assertion cannot leave the append stuck.
    cleanups.push(() => backend.open("a"));
    await client.sessionCreate({ sessionId: "a", seed: [] });
    await client.sessionCreate({ sessionId: "b", seed: balancedLog(1) });
    const log = balancedLog(1);
    const order: string[] = [];
    const arrived = backend.hold("a");
    const append = client.sessionAppend({ sessionId: "a", events: log }).then((r) => {
      order.push("append a");
      return r;
    });
    await arrived;
    // Without the per-session queue this read would see the live session before the append.
    const read = client.sessionRead({ sessionId: "a" }).then((r) => {
      order.push("read a");
      return r;
    });
    const other = await client.sessionRead({ sessionId: "b" });
    order.push("read b");
    expect(other.events).toHaveLength(log.length);
    expect(order).toEqual(["read b"]);
    backend.open("a");
    expect((await append).nextSeq).toBe(log.length);
    expect((await read).events).toEqual(log);
    expect(order).toEqual(["read b", "append a", "read a"]);
  });

  it("queues replay/next calls of one replay in arrival order", async () => {
    const { client } = started();
    for (const log of CORPUS_TREE.logs) await client.sessionImport({ log });
    const { replayId } = await client.replayOpen({ sessionId: CORPUS_TREE.primary });
    const answers = await Promise.all(
      [0, 1, 2].map(() => client.replayNext({ replayId, callerSessionId: "c" })),
    );
    expect(answers.map((a) => a.index)).toEqual([0, 1, 2]);
  });
});

describe("idle unloading", () => {
  it("unloads a session unused for idleMs, releasing its writer lock", async () => {
    const temp = tempDir();
    cleanups.push(temp.remove);
    const store = new SessionStore({ backend: new JsonlBackend(temp.dir) });
    const { client } = started({ store, idleMs: 40 });
    await client.sessionCreate({ sessionId: "idle", seed: simpleTurn(0, 1) });
    await client.sessionAppend({ sessionId: "idle", events: simpleTurn(7, 2) });
    expect(store.liveIds()).toContain("idle");
    const other = new SessionStore({ backend: new JsonlBackend(temp.dir) });
    cleanups.push(() => other.close());
    const busy = await other.append("idle", simpleTurn(14, 3)).catch((error: unknown) => error);
    expect(hasCode(busy, "SESSION_BUSY")).toBe(true);
    await other.unload("idle");

    await waitFor(() => !store.liveIds().includes("idle"));
    expect(await other.append("idle", simpleTurn(14, 3))).toBe(21);
    await other.unload("idle");
    // The server loads it again on the next request and sees the other writer's turn.
    expect((await client.sessionRead({ sessionId: "idle" })).nextSeq).toBe(21);
  });

  it("keeps a session that requests keep naming", async () => {
    const store = new SessionStore();
    const { client } = started({ store, idleMs: 60 });
    await client.sessionCreate({ sessionId: "busy", seed: simpleTurn(0, 1) });
    for (let i = 0; i < 6; i++) {
      await client.sessionRead({ sessionId: "busy" });
      await sleep(20);
    }
    expect(store.liveIds()).toContain("busy");
  });
});

describe("open replays", () => {
  /** A memory server with the corpus tree imported, so replays can be opened. */
  async function withTree(...args: Parameters<typeof memoryServer>) {
    const running = started(...args);
    for (const log of CORPUS_TREE.logs) await running.client.sessionImport({ log });
    return running;
  }

  // Before the fix: the third replay/open succeeded (there was no cap), so expectCode failed with
  // "expected an error response, got a result".
  it("refuses a replay past maxReplays with REPLAY_LIMIT, and closing one frees a slot", async () => {
    const { client, server } = await withTree({ maxReplays: 2 });
    const first = await client.replayOpen({ sessionId: CORPUS_TREE.primary });
    const second = await client.replayOpen({ sessionId: CORPUS_TREE.primary });
    const refused = await expectCode(
      client.replayOpen({ sessionId: CORPUS_TREE.primary }),
      "REPLAY_LIMIT",
    );
    expect(refused.data).toEqual({ code: "REPLAY_LIMIT", limit: 2 });
    expect(refused.message).toContain("replay/close");
    expect(server.openReplays).toBe(2);

    await client.replayClose({ replayId: first.replayId });
    const third = await client.replayOpen({ sessionId: CORPUS_TREE.primary });
    expect(server.openReplays).toBe(2);
    for (const { replayId } of [second, third]) {
      expect(await client.replayNext({ replayId, callerSessionId: "c" })).toMatchObject({
        index: 0,
      });
    }
  });

  // Before the fix: both concurrent opens succeeded (no cap at all).
  it("counts replays opened concurrently against the cap", async () => {
    const { client, server } = await withTree({ maxReplays: 1 });
    const outcomes = await Promise.allSettled([
      client.replayOpen({ sessionId: CORPUS_TREE.primary }),
      client.replayOpen({ sessionId: CORPUS_TREE.child }),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const reasons = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
    expect(reasons.map((r) => r instanceof RpcResponseError && r.dataCode)).toEqual([
      "REPLAY_LIMIT",
    ]);
    expect(server.openReplays).toBe(1);
  });

  // Before the fix: the replay never expired, so waitUntil failed with "expected the unused
  // replay to expire within 20000 ms" (and openReplays did not exist on the server).
  it("expires a replay unused by replay/next for replayIdleMs, answering REPLAY_NOT_FOUND that says so", async () => {
    const { client, server } = await withTree({ replayIdleMs: 50, maxReplays: 1 });
    const { replayId } = await client.replayOpen({ sessionId: CORPUS_TREE.primary });
    await client.replayNext({ replayId, callerSessionId: "c" });
    await waitUntil(() => server.openReplays === 0, "the unused replay to expire");

    const gone = await expectCode(
      client.replayNext({ replayId, callerSessionId: "c" }),
      "REPLAY_NOT_FOUND",
    );
    expect(gone.data).toEqual({ code: "REPLAY_NOT_FOUND", replayId });
    expect(gone.message).toContain("expired");
    const unknown = await expectCode(
      client.replayNext({ replayId: "never-opened", callerSessionId: "c" }),
      "REPLAY_NOT_FOUND",
    );
    expect(unknown.message).not.toContain("expired");
    // The expired replay no longer counts against the cap.
    await client.replayOpen({ sessionId: CORPUS_TREE.primary });
  });

  // Before the fix: `server.openReplays` did not exist (undefined, not 3 then 0); the map itself
  // was already cleared by shutdown, which this pins down now that it can be observed.
  it("drops every replay of the connection when the connection closes", async () => {
    const running = memoryServer();
    for (const log of CORPUS_TREE.logs) await running.client.sessionImport({ log });
    for (let i = 0; i < 3; i++) await running.client.replayOpen({ sessionId: CORPUS_TREE.primary });
    expect(running.server.openReplays).toBe(3);
    await running.client.close();
    await running.server.closed;
    expect(running.server.openReplays).toBe(0);
  });
});

describe("INTERNAL", () => {
  it("answers a bug with the generic message and logs the details", async () => {
    class BrokenBackend extends MemoryBackend {
      // The listing starts from the stored ids (the memory backend keeps no catalog).
      override async ids(): Promise<never> {
        throw new TypeError("secret detail: the cursor table is gone");
      }
    }
    const { client, logs } = started({ store: new SessionStore({ backend: new BrokenBackend() }) });
    const error = await responseError(client.sessionList());
    expect(error.code).toBe(RPC_ERROR_CODES.INTERNAL);
    expect(error.message).toBe(INTERNAL_MESSAGE);
    expect(error.data).toEqual({ code: "INTERNAL" });
    expect(JSON.stringify(error)).not.toContain("secret");
    expect(logs.join("\n")).toContain("secret detail: the cursor table is gone");
  });
});

describe("shutdown", () => {
  it("answers the requests in flight when the input ends, then ends its output", async () => {
    const backend = new GatedBackend();
    const running = memoryServer({ store: new SessionStore({ backend }) });
    await running.client.sessionCreate({ sessionId: "slow", seed: [] });
    const arrived = backend.hold("slow");
    const append = running.client.sessionAppend({ sessionId: "slow", events: balancedLog(1) });
    await arrived;
    const closing = running.client.close();
    let closed = false;
    void running.server.closed.then(() => {
      closed = true;
    });
    await sleep(20);
    expect(closed).toBe(false);
    backend.open("slow");
    expect((await append).nextSeq).toBe(balancedLog(1).length);
    await closing;
    await running.server.closed;
    expect(running.toClient.readableEnded || running.toClient.writableEnded).toBe(true);
  });

  it("close() answers what is in flight and ignores later input", async () => {
    const backend = new GatedBackend();
    const running = memoryServer({ store: new SessionStore({ backend }) }, false);
    const peer = new RawPeer("ndjson", running.toClient, running.toServer);
    peer.send({
      jsonrpc: "2.0",
      id: 1,
      method: "session/create",
      params: { sessionId: "s", seed: [] },
    });
    expect((await peer.next()).id).toBe(1);
    const arrived = backend.hold("s");
    peer.send({
      jsonrpc: "2.0",
      id: 2,
      method: "session/append",
      params: { sessionId: "s", events: balancedLog(1) },
    });
    await arrived;
    const closing = running.server.close();
    peer.send({ jsonrpc: "2.0", id: 3, method: "session/list", params: {} });
    backend.open("s");
    await closing;
    await peer.ended();
    expect(peer.frames.map((f) => JSON.parse(f).id)).toEqual([1, 2]);
    expect((await running.store.load("s")).nextSeq).toBe(balancedLog(1).length);
  });
});

describe("the terminal hint", () => {
  it("prints one line to the log when the input is a terminal, none otherwise", async () => {
    const plain = started();
    await plain.client.sessionList();
    expect(plain.logs).toEqual([]);
    const logs: string[] = [];
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    const server = serve({
      store: new SessionStore(),
      input,
      output,
      storeUrl: "sqlite:x.db",
      log: (line) => logs.push(line),
    });
    input.end();
    await server.closed;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain("sqlite:x.db");
    expect(logs[0]).toContain('"method":"initialize"');
    expect(await output.toArray()).toEqual([]);
  });
});

describe("SeedlineClient", () => {
  it("rejects a request left unanswered when the connection closes", async () => {
    const fromServer = new PassThrough();
    const toServer = new PassThrough();
    const client = SeedlineClient.connect(fromServer, toServer);
    const pending = client.sessionList();
    fromServer.end();
    await expect(pending).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(client.sessionList()).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it("spawns the built CLI's serve when there is one, else the bare stdio entry", () => {
    const temp = tempDir();
    cleanups.push(temp.remove);
    expect(serverEntry(temp.dir)).toEqual([join(temp.dir, "dist/src/rpc/stdio-main.js")]);
    mkdirSync(join(temp.dir, "dist/src/cli"), { recursive: true });
    writeFileSync(join(temp.dir, "dist/src/cli/main.js"), "");
    expect(serverEntry(temp.dir)).toEqual([join(temp.dir, "dist/src/cli/main.js"), "serve"]);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await sleep(10);
  }
}
