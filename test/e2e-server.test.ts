// The real built server process (dist/src/rpc/stdio-main.js) for both framings and both durable stores: every method,
// every error code a client can provoke, protocol errors, the raw NDJSON wire format, stdin close and SIGTERM.
import { afterAll, describe, expect, it } from "vitest";
import {
  type Framing,
  openBackend,
  RPC_ERROR_CODE_NAMES,
  SeedlineClient,
  SessionStore,
} from "../src/index.js";
import { balancedLog, simpleTurn } from "./builders.js";
import {
  everyErrorScenario,
  everyMethodScenario,
  expectCode,
  frame,
  spawnedClient,
  spawnServer,
  tempDir,
  type WireMessage,
} from "./rpc-fixtures.js";

const temp = tempDir("seedline-e2e-");
afterAll(() => temp.remove());

const STORES = {
  jsonl: (name: string) => `jsonl:${temp.dir}/${name}`,
  sqlite: (name: string) => `sqlite:${temp.dir}/${name}.db`,
} as const;

const COMBINATIONS = (["ndjson", "content-length"] as const).flatMap((framing) =>
  (["jsonl", "sqlite"] as const).map((store) => [framing, store] as const),
);

let stores = 0;
/** A fresh store URL of `kind`. */
function freshStore(kind: keyof typeof STORES): string {
  stores++;
  return STORES[kind](`store-${stores}`);
}

describe.each(COMBINATIONS)("the built server (%s framing, %s store)", (framing, kind) => {
  it("answers every method of the table, then exits 0 when its input ends", async () => {
    const { client, stderr } = spawnedClient(freshStore(kind), framing);
    await everyMethodScenario(client, "e2e");
    await client.close();
    expect(await client.exited).toEqual({ code: 0, signal: null });
    expect(stderr()).toBe("");
  });

  it("answers every error code a client can provoke", async () => {
    const url = freshStore(kind);
    const { client } = spawnedClient(url, framing);
    const seen = await everyErrorScenario(client, "e2e");

    // SESSION_BUSY: a second server process on the same store, for a session the first holds.
    await client.sessionCreate({ sessionId: "shared", seed: simpleTurn(0, 1) });
    const second = spawnedClient(url, framing).client;
    const busy = await expectCode(
      second.sessionAppend({ sessionId: "shared", events: simpleTurn(7, 2) }),
      "SESSION_BUSY",
    );
    expect(busy.data).toEqual({ code: "SESSION_BUSY", sessionId: "shared" });
    seen.add("SESSION_BUSY");
    await Promise.all([client.close(), second.close()]);

    const protocol = await protocolErrors(url, framing);
    expect([...seen, "INTERNAL"].sort()).toEqual([...RPC_ERROR_CODE_NAMES].sort());
    expect(protocol).toEqual({ parse: -32700, batch: -32600, notRequest: -32600, unknown: -32601 });
  });

  it("answers every request it read when stdin closes, then exits 0", async () => {
    const url = freshStore(kind);
    const { peer, child, exited, stderr } = spawnServer(url, framing);
    const count = 12;
    let text = "";
    for (let i = 0; i < count; i++) {
      const params = { sessionId: `close-${i}`, seed: balancedLog(1, { chunksPerStep: 3 }) };
      text += frame(
        framing,
        JSON.stringify({ jsonrpc: "2.0", id: i, method: "session/create", params }),
      );
    }
    peer.sendRaw(text);
    child.stdin.end();
    const answers = await peer.byId(count);
    await peer.ended();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect([...answers.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    for (const answer of answers.values()) expect(answer.error).toBeUndefined();
    expect(peer.garbage).toEqual([]);
    expect(stderr()).toBe("");
    await expectStored(url, count, "close");
  });

  it("finishes and answers the requests in flight on SIGTERM, then exits 0", async () => {
    const url = freshStore(kind);
    const { peer, child, exited } = spawnServer(url, framing);
    const count = 12;
    let text = "";
    for (let i = 0; i < count; i++) {
      const params = { sessionId: `term-${i}`, seed: balancedLog(1, { chunksPerStep: 3 }) };
      text += frame(
        framing,
        JSON.stringify({ jsonrpc: "2.0", id: i, method: "session/create", params }),
      );
    }
    peer.sendRaw(text);
    await peer.next();
    child.kill("SIGTERM");
    const rest = await peer.byId(count - 1);
    await peer.ended();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(rest.size).toBe(count - 1);
    expect(peer.garbage).toEqual([]);
    await expectStored(url, count, "term");
  });
});

describe("the built server's wire format", () => {
  it("speaks NDJSON byte for byte to a hand-written client", async () => {
    const { peer, child, exited, stderr } = spawnServer(STORES.jsonl("raw"), "ndjson");
    peer.sendRaw(
      '{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"sessionId":"w","cwd":"/w","meta":{"createdAt":5}}}\n',
    );
    const created = await peer.next();
    expect(peer.frames[0]).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"w","header":{"version":0,"id":"w","createdAt":5,"cwd":"/w"}}}',
    );
    expect(created.id).toBe(1);
    // A request split across writes, then two in one write, one of them with a string id.
    peer.sendRaw('{"jsonrpc":"2.0","id":2,"method":"session/rea');
    peer.sendRaw(
      'd","params":{"sessionId":"w"}}\n{"jsonrpc":"2.0","id":"x","method":"session/delete",',
    );
    peer.sendRaw('"params":{"sessionId":"w"}}\n');
    expect(await peer.next()).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: {
        header: { version: 0, id: "w", createdAt: 5, cwd: "/w" },
        events: [],
        nextSeq: 0,
        done: true,
      },
    });
    expect(await peer.next()).toEqual({ jsonrpc: "2.0", id: "x", result: {} });
    // A notification is not run and not answered; it is logged on stderr, not stdout.
    peer.sendRaw('{"jsonrpc":"2.0","method":"session/list","params":{}}\n');
    peer.sendRaw('{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}\n');
    expect(await peer.next()).toEqual({ jsonrpc: "2.0", id: 3, result: { sessions: [] } });
    child.stdin.end();
    await peer.ended();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(peer.frames).toHaveLength(4);
    expect(peer.garbage).toEqual([]);
    expect(stderr()).toContain("ignored notification");
  });

  it("refuses a line over 32 MiB without parsing it, then keeps serving", async () => {
    const { peer, child, exited } = spawnServer(STORES.jsonl("big"), "ndjson");
    const big = Buffer.alloc(33 * 1024 * 1024, "a");
    peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"session/import","params":{"log":"');
    peer.sendRaw(big);
    peer.sendRaw('"}}\n{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n');
    const refused = await peer.next(30_000);
    expect(refused).toMatchObject({ id: null, error: { code: -32600 } });
    expect(refused.error).not.toHaveProperty("data");
    expect(await peer.next(30_000)).toMatchObject({ id: 2, result: { sessions: [] } });
    child.stdin.end();
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it("starts the package's own server with SeedlineClient.spawn defaults", async () => {
    const client = SeedlineClient.spawn({
      store: STORES.sqlite("defaults"),
      framing: "content-length",
      stderr: "pipe",
    });
    const init = await client.initialize({ protocolVersion: 1 });
    expect(init.agentCapabilities._meta.seedline.store).toBe("sqlite");
    await client.close();
    expect(await client.exited).toEqual({ code: 0, signal: null });
  });

  it("unloads an idle session, releasing its lock while it keeps running", async () => {
    const url = STORES.jsonl("idle");
    const first = spawnedClient(url, "ndjson", ["--idle-ms", "1500"]).client;
    await first.sessionCreate({ sessionId: "handover", seed: simpleTurn(0, 1) });
    const second = spawnedClient(url, "ndjson").client;
    await expectCode(
      second.sessionAppend({ sessionId: "handover", events: simpleTurn(7, 2) }),
      "SESSION_BUSY",
    );
    // Unused for 1.5 s, swept every 0.75 s: gone within 2.25 s of the create.
    await sleep(3_000);
    // The first server is still running, but has let the session go.
    const third = spawnedClient(url, "ndjson").client;
    expect(await third.sessionAppend({ sessionId: "handover", events: simpleTurn(7, 2) })).toEqual({
      nextSeq: 14,
    });
    expect((await first.sessionRead({ sessionId: "handover" })).nextSeq).toBe(14);
    await Promise.all([first.close(), second.close(), third.close()]);
  });
});

/** Sends a parse error, a batch, a non-request and an unknown method, then a valid request. */
async function protocolErrors(url: string, framing: Framing) {
  const { peer, child, exited } = spawnServer(url, framing);
  peer.send("{not json");
  const parse = await peer.next();
  expect(parse).toMatchObject({ jsonrpc: "2.0", id: null });
  expect(parse.error).not.toHaveProperty("data");
  peer.send([{ jsonrpc: "2.0", id: 1, method: "session/list", params: {} }]);
  const batch = await peer.next();
  expect(batch).toMatchObject({ id: null, error: { message: expect.stringContaining("batch") } });
  peer.send({ jsonrpc: "2.0", id: 7, params: {} });
  const notRequest = await peer.next();
  expect(notRequest.id).toBe(7);
  peer.send({ jsonrpc: "2.0", id: 8, method: "session/frobnicate", params: {} });
  const unknown = await peer.next();
  expect(unknown).toMatchObject({ id: 8, error: { data: { method: "session/frobnicate" } } });
  // Still serving after all of that.
  peer.send({ jsonrpc: "2.0", id: 9, method: "session/list", params: { limit: 1 } });
  const served = (await peer.next()) as WireMessage;
  expect(served).toMatchObject({ id: 9, result: { sessions: expect.any(Array) } });
  child.stdin.end();
  expect(await exited).toEqual({ code: 0, signal: null });
  expect(peer.garbage).toEqual([]);
  return {
    parse: parse.error?.code,
    batch: batch.error?.code,
    notRequest: notRequest.error?.code,
    unknown: unknown.error?.code,
  };
}

/** Every acknowledged create is in the store after the server exited. */
async function expectStored(url: string, count: number, prefix: string): Promise<void> {
  const store = new SessionStore({ backend: await openBackend(url) });
  try {
    for (let i = 0; i < count; i++) {
      const session = await store.load(`${prefix}-${i}`);
      expect(session.nextSeq).toBe(balancedLog(1, { chunksPerStep: 3 }).length);
    }
  } finally {
    await store.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
