// R3 and R7 (docs/performance.md) with 8 MiB events: a spawned server over a session of a few big tool outputs answers every
// read method with a page, a part or RESPONSE_TOO_LARGE — a code from the table, never INTERNAL — and keeps serving.
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/store.js";
import { JSONRPC_PROTOCOL_ERRORS, RPC_ERROR_CODES } from "../../src/generated.js";
import { RpcResponseError, type SeedlineClient } from "../../src/index.js";
import { BIG_OUTPUT, bigOutputTurn, MiB } from "../helpers/big-events.js";
import { simpleTurn } from "../helpers/builders.js";
import { spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";

/** Four outputs of 8 MiB: a session of a frame's worth in a few events. */
const OUTPUTS = 4;
const temp = tempDir("seedline-r3-big-");
afterAll(() => temp.remove());

/** Every JSON-RPC error code the error table allows. */
const TABLE: ReadonlySet<number> = new Set([
  ...Object.values(JSONRPC_PROTOCOL_ERRORS),
  ...Object.values(RPC_ERROR_CODES),
]);

/** How one request was answered: "ok", or the error's data.code (its number when it has none). */
async function outcome(request: Promise<unknown>): Promise<string> {
  try {
    await request;
    return "ok";
  } catch (error) {
    if (!(error instanceof RpcResponseError)) throw error;
    expect(TABLE.has(error.code), `expected a code from the table, got ${error.code}`).toBe(true);
    return error.dataCode ?? String(error.code);
  }
}

/** Every read method of the server over session `id`, by name, each a request to send. */
function readRequests(client: SeedlineClient, id: string): [string, () => Promise<unknown>][] {
  const seq = 4;
  return [
    ["session/read", () => client.sessionRead({ sessionId: id })],
    ["session/read limit", () => client.sessionRead({ sessionId: id, limit: 10_000 })],
    ["session/read at a big event", () => client.sessionRead({ sessionId: id, fromSeq: seq + 2 })],
    ["session/messages", () => client.sessionMessages({ sessionId: id })],
    ["session/messages throughSeq", () => client.sessionMessages({ sessionId: id, throughSeq: 7 })],
    ["session/export whole", () => client.sessionExport({ sessionId: id })],
    ["session/export part", () => client.sessionExport({ sessionId: id, fromSeq: 0 })],
    ["replay/script", () => client.replayScript({ sessionId: id })],
    ["replay/scripts", () => client.replayScripts({ sessionId: id })],
    ["session/search", () => client.sessionSearch({ query: "output" })],
    ["session/list", () => client.sessionList({})],
    ["session/load (ACP)", () => client.sessionLoad({ sessionId: id, cwd: "/", mcpServers: [] })],
    [
      "session/watch from 0",
      async () => {
        const watch = client.watch(id, { fromSeq: 0 });
        let seen = 0;
        for await (const batch of watch) {
          seen += batch.events.length;
          if (seen >= 2 * OUTPUTS) break;
        }
      },
    ],
  ];
}

describe("R3/R7: 8 MiB events over the wire", () => {
  for (const kind of ["sqlite", "jsonl"] as const) {
    // Fails without the fix: the page without limit from the tool calls held the first 8 MiB
    // output too (the server read the rest of the log, then cut it to 16 MiB on its way out);
    // past V8's longest string (75 such events) session/read answered INTERNAL and
    // session/messages a bare -32603.
    it(`${kind}: every read method answers a page, a part or a code from the table (never INTERNAL), and the server keeps serving`, async () => {
      const url = kind === "sqlite" ? `sqlite:${temp.dir}/r3.db` : `jsonl:${temp.dir}/r3-jsonl`;
      const events = bigOutputTurn(OUTPUTS);
      const store = await openStore(url);
      try {
        await store.create({ id: "big", seed: events });
      } finally {
        await store.close();
      }
      const { client, stderr } = spawnedClient(url, "ndjson");
      try {
        const answers: Record<string, string> = {};
        for (const [name, request] of readRequests(client, "big")) {
          answers[name] = await outcome(request());
        }
        console.log(
          `R3 ${kind}: ${events.length} events, ${OUTPUTS} of ${BIG_OUTPUT / MiB} MiB; answers ${JSON.stringify(answers)}`,
        );
        expect(Object.values(answers)).not.toContain("INTERNAL");
        expect(answers["session/read"]).toBe("ok");
        expect(answers["session/read limit"]).toBe("ok");
        expect(answers["session/read at a big event"]).toBe("ok");
        expect(answers["session/messages"]).toBe("RESPONSE_TOO_LARGE");
        // A page without limit holds 4 MiB of events at most, or one event: it stops before the
        // first output, and the next page is that output alone.
        const calls = await client.sessionRead({ sessionId: "big", fromSeq: 4 });
        expect(calls.events.map((e) => e.type)).toEqual(["tool/call", "tool/call"]);
        const output = await client.sessionRead({ sessionId: "big", fromSeq: calls.nextSeq });
        expect(output.events.map((e) => e.type)).toEqual(["tool/result"]);
        // The server keeps serving: a write and a read of another session.
        await client.sessionCreate({ sessionId: "after" });
        const turn = simpleTurn(0, 1);
        expect(await client.sessionAppend({ sessionId: "after", events: turn })).toEqual({
          nextSeq: turn.length,
        });
        const read = await client.sessionRead({ sessionId: "after" });
        expect(read.events).toEqual(turn);
        expect(stderr()).not.toContain("INTERNAL");
      } finally {
        await client.close();
      }
    }, 180_000);
  }
});
