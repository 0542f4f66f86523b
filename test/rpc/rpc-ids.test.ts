// Request ids on the wire (issue 14): ids that String() makes equal (7 and "7") and reused ids, in flight together, are
// each answered once under the id as sent; refused messages and $/cancelRequest keep referring to the right request.
//
// Seen failing before the fix (vscode-jsonrpc keyed its queue of undispatched requests by String(id), a later
// request taking an earlier one's slot), in both framings: over memory streams the lookalike test got 3 answers of
// 6 (only "7", "0", "-1") and the reuse test 1 of 3 (only r3), the log saying "N request(s) were never dispatched
// (a reused id?)"; the built server answered 4 of 9. A $/cancelRequest without an id threw a TypeError out of
// the NDJSON reader, which killed the built server (exit 1) and failed the memory ndjson test; with content-length
// the stock reader caught it (that built-server test passed) and the memory test failed on the missing log lines.
// The refused-message test passed before the fix too: it guards the rewriting. The reader test is new with RequestIds.
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import type { Message, NotificationMessage, RequestMessage } from "vscode-jsonrpc";
import { JSONRPC_PROTOCOL_ERRORS } from "../../src/generated.js";
import type { Framing } from "../../src/index.js";
import { CheckedMessageReader } from "../../src/rpc/inbound.js";
import { NdjsonMessageReader } from "../../src/rpc/ndjson-framing.js";
import { RequestIds } from "../../src/rpc/request-ids.js";
import {
  frame,
  memoryServer,
  RawPeer,
  spawnServer,
  tempDir,
  type WireMessage,
} from "../helpers/rpc-fixtures.js";

const FRAMINGS = ["ndjson", "content-length"] as const;

const temp = tempDir("seedline-ids-");
afterAll(() => temp.remove());

/** A session/create request as JSON text; `id` is raw JSON, so `5.0` stays as written. */
function create(id: string, sessionId: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"session/create","params":{"sessionId":"${sessionId}"}}`;
}

/** Requests whose ids are distinct JSON values but equal under String(). */
const LOOKALIKES: readonly [string, string | number, string][] = [
  ["7", 7, "n7"],
  ['"7"', "7", "s7"],
  ["0", 0, "n0"],
  ['"0"', "0", "s0"],
  ["-1", -1, "n-1"],
  ['"-1"', "-1", "s-1"],
];

/** One id sent three times (5.0 is the same JSON number as 5). */
const REUSED: readonly [string, string | number, string][] = [
  ["5", 5, "r1"],
  ["5", 5, "r2"],
  ["5.0", 5, "r3"],
];

/** Sends `lines` to a memory server in one write, ends the input, and returns every answer. */
async function exchange(framing: Framing, lines: readonly string[]) {
  const { server, toServer, toClient, logs } = memoryServer({ framing }, false);
  const peer = new RawPeer(framing, toClient, toServer);
  peer.sendRaw(lines.map((line) => frame(framing, line)).join(""));
  toServer.end();
  await peer.ended();
  await server.closed;
  expect(peer.garbage).toEqual([]);
  return { answers: peer.frames.map((text) => JSON.parse(text) as WireMessage), logs };
}

/** Each answer as `{id, sessionId}` (sessionId of a session/create result), in a stable order. */
function pairs(answers: readonly WireMessage[]) {
  return answers
    .map((a) => ({ id: a.id, sessionId: (a.result as { sessionId?: string })?.sessionId }))
    .sort((a, b) => String(a.sessionId).localeCompare(String(b.sessionId)));
}

function expected(requests: readonly (readonly [string, string | number, string])[]) {
  return pairs(
    requests.map(([, id, sessionId]) => ({ jsonrpc: "2.0", id, result: { sessionId } })),
  );
}

describe.each(FRAMINGS)("request ids over memory streams (%s)", (framing) => {
  it('answers requests 7 and "7" (and 0/"0", -1/"-1") sent together, each under its own id', async () => {
    const { answers, logs } = await exchange(
      framing,
      LOOKALIKES.map(([id, , sessionId]) => create(id, sessionId)),
    );
    // toEqual tells 7 from "7", so each answer carries its id with its JSON type.
    expect(pairs(answers)).toEqual(expected(LOOKALIKES));
    expect(logs).toEqual([]);
  });

  it("answers each request of an id reused while the first is in flight, once, under that id", async () => {
    const { answers, logs } = await exchange(
      framing,
      REUSED.map(([id, , sessionId]) => create(id, sessionId)),
    );
    expect(pairs(answers)).toEqual(expected(REUSED));
    expect(logs).toEqual([]);
  });

  it("answers refused messages with their own ids while requests with other ids are in flight", async () => {
    // Passes before the fix too: it pins that rewriting request ids leaves refused messages alone
    // (the first request's internal id and the refused message's id are both the number 1).
    const { answers } = await exchange(framing, [
      create('"a"', "a"),
      '{"jsonrpc":"1.0","id":1,"method":"session/list"}',
      "{not json",
      '{"jsonrpc":"2.0","id":null,"method":"session/list"}',
      create("2", "b"),
    ]);
    expect(answers).toHaveLength(5);
    const byKind = answers.map((a) => [a.id, a.error?.code ?? (a.result as { sessionId: string })]);
    expect(byKind).toEqual(
      expect.arrayContaining([
        ["a", expect.objectContaining({ sessionId: "a" })],
        [1, JSONRPC_PROTOCOL_ERRORS.INVALID_REQUEST],
        [null, JSONRPC_PROTOCOL_ERRORS.PARSE_ERROR],
        [null, JSONRPC_PROTOCOL_ERRORS.INVALID_REQUEST],
        [2, expect.objectContaining({ sessionId: "b" })],
      ]),
    );
  });

  it("ignores a $/cancelRequest without a usable id or naming no request in flight", async () => {
    const { answers, logs } = await exchange(framing, [
      '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}',
      '{"jsonrpc":"2.0","method":"$/cancelRequest"}',
      '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":null}}',
      '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}',
      create("1", "c"),
    ]);
    expect(pairs(answers)).toEqual([{ id: 1, sessionId: "c" }]);
    expect(logs.filter((line) => line.includes("$/cancelRequest"))).toHaveLength(4);
  });
});

describe("CheckedMessageReader", () => {
  it("hands on each request under a unique id and points $/cancelRequest at the requests it names", async () => {
    const input = new PassThrough();
    const ids = new RequestIds();
    const logs: string[] = [];
    const reader = new CheckedMessageReader(
      new NdjsonMessageReader(input),
      (l) => logs.push(l),
      ids,
    );
    const seen: Message[] = [];
    reader.listen((message) => seen.push(message));
    const cancel = (id: string) =>
      `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":${id}}}`;
    input.write(
      [create("7", "a"), create('"7"', "b"), create("7", "c"), cancel('"7"'), cancel("7"), ""].join(
        "\n",
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const requests = seen.slice(0, 3) as RequestMessage[];
    const internal = requests.map((r) => r.id as number);
    expect(new Set(internal).size).toBe(3);
    expect(seen.slice(3).map((m) => (m as NotificationMessage).params)).toEqual([
      { id: internal[1] },
      { id: internal[0] },
      { id: internal[2] },
    ]);
    // Answering releases each internal id to the client's; then a cancel names nothing in flight.
    expect(internal.map((id) => ids.release(id))).toEqual([7, "7", 7]);
    expect(ids.size).toBe(0);
    input.write(`${cancel('"7"')}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toHaveLength(6);
    expect(logs).toEqual([expect.stringContaining("$/cancelRequest")]);
    reader.dispose();
  });
});

describe.each(FRAMINGS)("request ids against the built server (%s)", (framing) => {
  it("answers lookalike and reused ids sent in one write, each once under its own id", async () => {
    const { peer, child, exited, stderr } = spawnServer(`jsonl:${temp.dir}/${framing}`, framing);
    const requests = [...LOOKALIKES, ...REUSED];
    peer.sendRaw(
      requests.map(([id, , sessionId]) => frame(framing, create(id, sessionId))).join(""),
    );
    child.stdin.end();
    await peer.ended();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(pairs(peer.frames.map((text) => JSON.parse(text) as WireMessage))).toEqual(
      expected(requests),
    );
    expect(peer.garbage).toEqual([]);
    expect(stderr()).toBe("");
  });

  it("keeps serving after a $/cancelRequest without an id", async () => {
    const { peer, child, exited } = spawnServer(`jsonl:${temp.dir}/${framing}-cancel`, framing);
    peer.sendRaw(
      frame(framing, '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}') +
        frame(framing, create("1", "c")),
    );
    child.stdin.end();
    await peer.ended();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(pairs(peer.frames.map((text) => JSON.parse(text) as WireMessage))).toEqual([
      { id: 1, sessionId: "c" },
    ]);
  });
});
