// R3 (docs/performance.md): thousands of generated bad frames against the real spawned server — it never exits or hangs, answers every request with a code from the table, and rejected appends change nothing.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Prng, type SyntheticShape, syntheticTurns } from "../../scripts/bench/synthetic-log.js";
import { JSONRPC_PROTOCOL_ERRORS, RPC_ERROR_CODES } from "../../src/generated.js";
import type { SessionEvent } from "../../src/index.js";
import {
  balancedLog,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { collidingIds } from "../helpers/id-fixtures.js";

const ROOT = join(import.meta.dirname, "..", "..");
const FRAMES_PER_SERVER = 6000;
const root = mkdtempSync(join(tmpdir(), "seedline-r3-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every JSON-RPC error code the error table allows. */
const TABLE: ReadonlySet<number> = new Set([
  ...Object.values(JSONRPC_PROTOCOL_ERRORS),
  ...Object.values(RPC_ERROR_CODES),
]);
const { PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND } = JSONRPC_PROTOCOL_ERRORS;
const C = RPC_ERROR_CODES;

/** How a frame must be answered. */
type Expect =
  /** A response with this frame's id: an error with one of `codes`, or a result when `result` allows it. */
  | { readonly kind: "id"; readonly codes: readonly number[]; readonly result: boolean }
  /** A response with `id: null` and this code (the frame has no usable id). */
  | { readonly kind: "null"; readonly code: number }
  /** No response (a notification). */
  | { readonly kind: "none" };

interface Frame {
  readonly category: string;
  readonly bytes: Buffer;
  readonly id?: number | string;
  readonly expect: Expect;
  /** For a valid append to the canary: the nextSeq it must answer. */
  readonly nextSeq?: number;
}

const ANY_ERROR = [...TABLE];

/** The server entry: the build the global setup made, else the source through tsx. */
function serverArgs(): string[] {
  const built = join(ROOT, "dist", "src", "rpc", "stdio-main.js");
  return existsSync(built)
    ? [built]
    : ["--import", "tsx", join(ROOT, "src", "rpc", "stdio-main.ts")];
}

const SMALL: SyntheticShape = {
  deltaChars: 10,
  resultChars: [0, 60],
  steps: [1, 2],
  chunks: [12, 20],
};

const TRAVERSAL_IDS = [
  "../x",
  "../../etc/passwd",
  "/etc/passwd",
  "a/b",
  "a\\b",
  ".",
  "..",
  "~",
  "~0041",
  "CON",
  "nul",
  "%2e%2e%2f",
  "é/../é",
  "x".repeat(200),
  "Ab",
  "aB",
  ".jsonl",
  "x.lock",
  "x.lck",
  "x.tmp",
  "\u202e",
];
const BAD_IDS: unknown[] = ["", "x".repeat(257), "a\u0000b", "\n", "\u007f", 1, null, [], {}, true];
/** Ids and header text holding lone UTF-16 surrogates: refused, never stored lossily. */
const ILL_FORMED = ["s\udbff", "\udc00x", "a\ud800b", "\ud83d", "canary\udfff"];
/** A long id, and a short one spelling the file name the previous build gave the long one. */
const COLLIDING = collidingIds();
/** Free JSON (`tool/result` meta) with "__proto__" members at several levels. */
const PROTO_META =
  '{"__proto__":{"x":1,"__proto__":[1,{"__proto__":null}]},"y":2,"z":{"__proto__":5}}';

/** One whole turn at `seq` whose tool result's meta is {@link PROTO_META}, as the wire parses it. */
function protoTurn(seq: number, turn: number): unknown[] {
  const call = `call-${turn}`;
  const events = [
    turnStart(seq, turn),
    userMessage(seq + 1, "prompt"),
    stepStart(seq + 2, turn, 1),
    toolCall(seq + 3, turn, 1, call),
    toolResult(seq + 4, turn, 1, call, { sourceEventSeqs: [seq + 3], meta: 0 }),
    stepEnd(seq + 5, turn, 1),
    turnEnd(seq + 6, turn),
  ];
  return events.map((event, i) => {
    const text = JSON.stringify(event);
    return JSON.parse(i === 4 ? text.replace('"meta":0', `"meta":${PROTO_META}`) : text);
  });
}

const METHODS = [
  "initialize",
  "session/create",
  "session/new",
  "session/append",
  "session/fork",
  "session/read",
  "session/list",
  "session/messages",
  "session/export",
  "session/import",
  "session/delete",
  "replay/script",
  "replay/scripts",
  "replay/open",
  "replay/next",
  "replay/close",
];
const UNKNOWN_METHODS = [
  "",
  "session",
  "session/",
  "Session/Append",
  "session/append ",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "rpc.discover",
  "$/cancelRequest",
  "session/../session/read",
  "m".repeat(10_000),
];

/** Whether `text` is JSON. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Nested arrays or objects `depth` deep. */
function deep(depth: number, object: boolean): string {
  return object
    ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
    : `${"[".repeat(depth)}1${"]".repeat(depth)}`;
}

/**
 * Generates the frames: every category of bad input, interleaved with valid appends to a canary
 * session (so that the rejected appends around them must change nothing), in a seeded order.
 */
function generateFrames(
  count: number,
  seed: number,
): { frames: Frame[]; canary: SessionEvent[]; hostile: unknown[] } {
  const rng = new Prng(seed);
  const frames: Frame[] = [];
  let nextId = 1;
  const canaryStream = (function* () {
    for (const turn of syntheticTurns(seed, SMALL)) yield* turn;
  })();
  const canary: SessionEvent[] = [];
  /** What the "hostile-keys" session must hold: whole turns with "__proto__" members. */
  const hostile: unknown[] = [];
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const request = (
    category: string,
    method: string,
    params: unknown,
    expect: Expect,
    extra: Partial<Frame> = {},
  ): Frame => {
    const id = nextId++;
    return {
      category,
      id,
      bytes: json({ jsonrpc: "2.0", id, method, params }),
      expect,
      ...extra,
    };
  };
  const byId = (codes: readonly number[], result = false): Expect => ({
    kind: "id",
    codes,
    result,
  });
  const pickId = () => rng.pick(TRAVERSAL_IDS);
  const anyCall = () => byId(ANY_ERROR, true);

  const makers: { weight: number; make: () => Frame }[] = [
    {
      weight: 3,
      make: () => {
        const junk = [
          "{",
          '{"jsonrpc":"2.0","id":1,"method":"initialize"',
          "nul",
          "{'single':'quotes'}",
          '{"a":1,}',
          "[1,2",
          '"unterminated',
          "NaN",
          "{}}",
          String.fromCharCode(...Array.from({ length: rng.int(1, 80) }, () => rng.int(33, 126))),
        ];
        let text = rng.pick(junk);
        // Random characters can spell JSON ("7", "[]"): that is another category's frame.
        if (parses(text)) text = `${text}}`;
        const bytes = rng.next() < 0.15 ? Buffer.from([0xff, 0xfe, 0x7b, 0xc3]) : Buffer.from(text);
        return { category: "invalid JSON", bytes, expect: { kind: "null", code: PARSE_ERROR } };
      },
    },
    {
      weight: 2,
      make: () => ({
        category: "JSON that is not a request",
        bytes: json(
          rng.pick<unknown>([
            123,
            "str",
            null,
            true,
            [],
            [{ jsonrpc: "2.0", id: 1, method: "initialize" }],
            [1, 2, 3],
          ]),
        ),
        expect: { kind: "null", code: INVALID_REQUEST },
      }),
    },
    {
      weight: 2,
      make: () => ({
        category: "an id that is not a string or number",
        bytes: json({
          jsonrpc: "2.0",
          id: rng.pick<unknown>([null, true, {}, [], [1]]),
          method: rng.pick(METHODS),
          params: {},
        }),
        expect: { kind: "null", code: INVALID_REQUEST },
      }),
    },
    {
      weight: 3,
      make: () => {
        const id = nextId++;
        const shapes: unknown[] = [
          { jsonrpc: "1.0", id, method: "initialize", params: {} },
          { id, method: "session/read", params: { sessionId: "canary" } },
          { jsonrpc: 2, id, method: "initialize" },
          { jsonrpc: "2.0", id, method: 42 },
          { jsonrpc: "2.0", id, method: null },
          { jsonrpc: "2.0", id, method: "session/read", params: ["canary"] },
          { jsonrpc: "2.0", id, method: "session/read", params: "canary" },
          { jsonrpc: "2.0", id, method: "session/read", params: 7 },
          { jsonrpc: "2.0", id },
        ];
        return {
          category: "a malformed request envelope",
          id,
          bytes: json(rng.pick(shapes)),
          expect: byId([INVALID_REQUEST]),
        };
      },
    },
    {
      weight: 2,
      make: () =>
        request("an unknown method", rng.pick(UNKNOWN_METHODS), {}, byId([METHOD_NOT_FOUND])),
    },
    {
      weight: 6,
      make: () => {
        const cases: [string, unknown][] = [
          ["session/read", { sessionId: rng.pick(BAD_IDS) }],
          ["session/read", { sessionId: "canary", fromSeq: rng.pick([-1, 1.5, "0", 1e300, null]) }],
          ["session/read", { sessionId: "canary", limit: rng.pick([0, -5, "10", 0.5, null]) }],
          ["session/read", { sessionId: "canary", extra: 1 }],
          [
            "session/append",
            {
              sessionId: "canary",
              events: rng.pick<unknown>(["x", {}, [1, 2], null, [[]], ["e"]]),
            },
          ],
          ["session/append", { sessionId: rng.pick(BAD_IDS), events: [] }],
          ["session/append", { events: [] }],
          ["session/create", { sessionId: rng.pick(BAD_IDS) }],
          ["session/create", { cwd: rng.pick<unknown>(["relative/path", 123, "", null]) }],
          ["session/create", { seed: rng.pick<unknown>(["x", {}, [1]]) }],
          ["session/create", { meta: { seedLength: -1 } }],
          ["session/create", { meta: { createdAt: "yesterday" } }],
          [
            "session/fork",
            { sessionId: "canary", boundary: rng.pick<unknown>([-1, "a", 1.5, null]) },
          ],
          ["session/fork", { sessionId: "canary", childSessionId: rng.pick(BAD_IDS) }],
          ["session/list", { limit: rng.pick<unknown>([0, -1, "100", 1.5]) }],
          ["session/list", { cwd: rng.pick<unknown>(["", 5, null]) }],
          ["session/export", { sessionId: rng.pick(BAD_IDS) }],
          ["session/import", { log: rng.pick<unknown>([5, null, [], {}]) }],
          ["session/delete", {}],
          ["replay/next", { replayId: 5, callerSessionId: "x" }],
          ["replay/open", { sessionId: "canary", overrides: "x" }],
          ["initialize", { protocolVersion: "one" }],
        ];
        const [method, params] = rng.pick(cases);
        return request("wrong types", method, params, byId([C.INVALID_PARAMS]));
      },
    },
    {
      weight: 2,
      make: () => {
        const size = rng.pick([300, 5_000, 100_000, 1_000_000]);
        const big = "x".repeat(size);
        const cases: [string, unknown, Expect][] = [
          ["session/read", { sessionId: big }, byId([C.INVALID_PARAMS])],
          ["session/create", { sessionId: "huge", cwd: `/${big}` }, anyCall()],
          ["session/list", { cursor: big }, byId([C.INVALID_PARAMS])],
          [
            "session/import",
            { log: big },
            byId([C.CORRUPT_LOG, C.INVALID_PARAMS, C.FORMAT_UNSUPPORTED]),
          ],
          [
            "session/append",
            { sessionId: "canary", events: [userMessage(-1, big)] },
            byId([C.INVALID_EVENT, C.SEQ_CONFLICT, C.INVALID_PARAMS]),
          ],
          [rng.pick(METHODS), { [big]: big }, anyCall()],
        ];
        const [method, params, expect] = rng.pick(cases);
        return request("huge strings", method, params, expect);
      },
    },
    {
      weight: 1,
      make: () => {
        const id = nextId++;
        const depth = rng.pick([100, 1_000, 10_000, 100_000]);
        const object = rng.next() < 0.5;
        const where = rng.int(0, 3);
        const nested = deep(depth, object);
        const text = [
          `{"jsonrpc":"2.0","id":${id},"method":"session/append","params":{"sessionId":"canary","events":[${nested}]}}`,
          `{"jsonrpc":"2.0","id":${id},"method":"session/list","params":{"x":${nested}}}`,
          `{"jsonrpc":"2.0","id":${id},"method":"session/create","params":{"seed":[{"type":"user/message","seq":0,"time":1,"data":${nested},"surfaceOp":"append"}]}}`,
          `{"jsonrpc":"2.0","id":${id},"method":"session/read","params":${nested}}`,
        ][where] as string;
        return { category: "deep nesting", id, bytes: Buffer.from(text), expect: anyCall() };
      },
    },
    {
      weight: 4,
      make: () => {
        const next = canary.length;
        const base = canary.length > 0 ? (canary.at(-1) as SessionEvent) : undefined;
        const seqs = [-1, next + 1, next + 1000, 2 ** 53, 1e308, 0.5, next - 1];
        const seq = rng.pick(seqs);
        // Never identical to a stored event (that would be an acknowledged retry).
        const event = { ...(base ?? userMessage(0, "x")), seq, time: 7 };
        if (rng.next() < 0.3) {
          return request(
            "out-of-range seqs",
            rng.pick(["session/read", "session/fork", "session/messages"]),
            rng.pick<unknown>([
              { sessionId: "canary", fromSeq: 2 ** 53 - 1 },
              { sessionId: "canary", boundary: 2 ** 53 - 1 },
              { sessionId: "canary", boundary: next + 10 },
              { sessionId: "canary", throughSeq: 2 ** 53 - 1 },
            ]),
            byId([C.INVALID_BOUNDARY, C.INVALID_PARAMS, C.OPEN_TURN], true),
          );
        }
        return request(
          "out-of-range seqs",
          "session/append",
          { sessionId: "canary", events: [event] },
          byId([C.SEQ_CONFLICT, C.INVALID_EVENT, C.INVALID_PARAMS]),
        );
      },
    },
    {
      weight: 6,
      make: () => {
        const seq = canary.length;
        const valid = userMessage(seq, "hello");
        const broken: unknown[] = [
          { ...valid, type: "user/unknown" },
          { ...valid, type: 7 },
          { type: "user/message", seq },
          { ...valid, data: { content: "not blocks", source: { kind: "user" } } },
          { ...valid, data: { ...valid.data, extra: true } },
          { ...valid, surfaceOp: undefined },
          { ...valid, surfaceOp: { op: "replace", start: 999_999, end: 1_000_000 } },
          { ...valid, sourceEventSeqs: [seq + 5] },
          { ...valid, time: -5 },
          { ...valid, time: "now" },
          toolResult(seq, 1, 1, "no-such-call"),
          { type: "step/start", seq, time: 1, data: { turn: 999, step: 1 } },
          { type: "turn/end", seq, time: 1, data: { turn: 12345, reason: { kind: "completed" } } },
          {
            type: "assistant/chunk",
            seq,
            time: 1,
            data: { turn: 1, step: 1, chunk: { type: "nope" } },
          },
          { ...valid, ["__proto__"]: { polluted: true } },
          { ...valid, constructor: { prototype: { polluted: true } } },
        ];
        const batch = [rng.pick(broken)];
        // Sometimes the bad event follows good ones: the whole batch must be refused.
        if (rng.next() < 0.3) {
          const good = balancedLog(1).map((e, i) => ({ ...e, seq: seq + i }) as SessionEvent);
          batch.unshift(...good.slice(0, rng.int(1, good.length)));
          (batch[batch.length - 1] as { seq?: number }).seq = seq + batch.length - 1;
        }
        return request(
          "invalid events",
          "session/append",
          { sessionId: "canary", events: batch },
          byId([C.INVALID_EVENT, C.FORMAT_UNSUPPORTED, C.SEQ_CONFLICT, C.INVALID_PARAMS]),
        );
      },
    },
    {
      weight: 3,
      make: () => {
        const sessionId = pickId();
        const method = rng.pick([
          "session/create",
          "session/read",
          "session/export",
          "session/fork",
          "session/delete",
          "replay/script",
        ]);
        const params =
          method === "session/create"
            ? { sessionId, seed: balancedLog(1), cwd: "/r3" }
            : method === "session/fork"
              ? { sessionId, childSessionId: rng.pick(TRAVERSAL_IDS) }
              : { sessionId };
        return request("traversal ids", method, params, anyCall());
      },
    },
    {
      weight: 2,
      make: () => {
        const cases: [string, unknown][] = [
          [
            "session/import",
            { log: '{"type":"session","version":0,"id":"../imp","createdAt":1}\n' },
          ],
          ["session/import", { log: "garbage\n{}\n" }],
          ["session/import", { log: '{"type":"session","version":9,"id":"v9","createdAt":1}\n' }],
          ["session/list", { cursor: "not-a-cursor" }],
          ["session/list", { parentSession: "canary", limit: 1 }],
          ["session/delete", { sessionId: `missing-${rng.int(0, 1e6)}` }],
          ["session/fork", { sessionId: "canary" }],
          ["session/messages", { sessionId: "canary" }],
          ["replay/script", { sessionId: "canary" }],
          ["replay/scripts", { sessionId: "canary" }],
          ["replay/open", { sessionId: "canary" }],
          ["replay/next", { replayId: `nope-${rng.int(0, 1e6)}`, callerSessionId: "x" }],
          ["replay/close", { replayId: "nope" }],
          ["initialize", { protocolVersion: 1, clientInfo: { name: "fuzz" }, mcpServers: [] }],
          ["session/new", { cwd: "/r3", mcpServers: [] }],
        ];
        const [method, params] = rng.pick(cases);
        return request("other methods with odd params", method, params, anyCall());
      },
    },
    {
      weight: 2,
      make: () => ({
        category: "notifications (never answered)",
        bytes: json({
          jsonrpc: "2.0",
          method: rng.pick([...UNKNOWN_METHODS.slice(0, 5), "session/append", "session/delete"]),
          params: rng.pick<unknown>([
            { sessionId: "canary", events: [{ bad: true }] },
            { sessionId: 5 },
            {},
          ]),
        }),
        expect: { kind: "none" },
      }),
    },
    {
      weight: 5,
      make: () => {
        // A valid append to the canary: the state every rejected append must leave alone.
        const batch: SessionEvent[] = [];
        for (let n = rng.int(1, 3); n > 0; n--)
          batch.push(canaryStream.next().value as SessionEvent);
        canary.push(...batch);
        return request(
          "valid canary appends",
          "session/append",
          { sessionId: "canary", events: batch },
          byId([], true),
          { nextSeq: canary.length },
        );
      },
    },
    {
      weight: 1,
      make: () => {
        // A retry of stored events at their seqs is acknowledged and changes nothing.
        const from = rng.int(0, Math.max(0, canary.length - 1));
        const batch = canary.slice(from, from + rng.int(1, 3));
        return request(
          "retries of stored events",
          "session/append",
          { sessionId: "canary", events: batch },
          batch.length === 0 ? byId([C.INVALID_PARAMS], true) : byId([], true),
          { nextSeq: canary.length },
        );
      },
    },
    {
      weight: 2,
      make: () => {
        // Lone surrogates were sent to PostgreSQL as U+FFFD: "s\udbff" and "s\ufffd" were one session.
        const bad = rng.pick(ILL_FORMED);
        const cases: [string, unknown][] = [
          ["session/create", { sessionId: bad, cwd: "/r3" }],
          ["session/create", { cwd: `/r3/${bad}` }],
          ["session/create", { meta: { parentSession: bad } }],
          ["session/read", { sessionId: bad }],
          ["session/delete", { sessionId: bad }],
          ["session/export", { sessionId: bad }],
          ["session/fork", { sessionId: "canary", childSessionId: bad }],
          ["session/new", { cwd: `/${bad}`, mcpServers: [] }],
          [
            "session/import",
            { log: `{"type":"session","version":0,"id":${JSON.stringify(bad)},"createdAt":1}\n` },
          ],
        ];
        const [method, params] = rng.pick(cases);
        return request(
          "ids and header text not well-formed",
          method,
          params,
          byId([C.INVALID_PARAMS]),
        );
      },
    },
    {
      weight: 1,
      make: () => {
        // The short id once named the long id's file: deleting it deleted the other session.
        const method = rng.pick([
          "session/read",
          "session/delete",
          "session/create",
          "session/export",
        ]);
        const params =
          method === "session/create"
            ? { sessionId: COLLIDING.short, cwd: "/r3" }
            : { sessionId: COLLIDING.short };
        return request(
          "the short id spelling a long id's old file name",
          method,
          params,
          anyCall(),
        );
      },
    },
    {
      weight: 2,
      make: () => {
        // A "__proto__" member once became the copy's prototype: dropped from what was stored.
        if (rng.next() < 0.3) {
          // Required members only under "__proto__": never acknowledged.
          // Valid but for where its data is: the next seq, the next turn.
          const seq = hostile.length;
          const valid = JSON.stringify({ ...turnStart(seq, seq / 7 + 1), data: undefined });
          const event = JSON.parse(
            valid.replace(
              /}$/,
              `,"__proto__":${JSON.stringify({ data: turnStart(0, seq / 7 + 1).data })}}`,
            ),
          );
          return request(
            "required members hidden under __proto__",
            "session/append",
            { sessionId: "hostile-keys", events: [event] },
            byId([C.INVALID_EVENT]),
          );
        }
        const turn = hostile.length / 7 + 1;
        const batch = protoTurn(hostile.length, turn);
        hostile.push(...batch);
        return request(
          "__proto__ members in event data",
          "session/append",
          { sessionId: "hostile-keys", events: batch },
          byId([], true),
          { nextSeq: hostile.length },
        );
      },
    },
    {
      weight: 1,
      make: () => {
        // "7" and 7 once shared vscode-jsonrpc's queue key: one of the two was never answered.
        const id = String(nextId++ - 1);
        return {
          category: "string ids spelling numeric ones",
          id,
          bytes: json({
            jsonrpc: "2.0",
            id,
            method: "session/read",
            params: { sessionId: "canary", limit: 1 },
          }),
          expect: byId([], true),
        };
      },
    },
  ];
  const total = makers.reduce((n, m) => n + m.weight, 0);
  // The canary exists before anything else.
  frames.push(
    request("setup", "session/create", { sessionId: "canary", cwd: "/r3" }, byId([], true)),
    request("setup", "session/create", { sessionId: "hostile-keys", cwd: "/r3" }, byId([], true)),
    request(
      "setup",
      "session/create",
      { sessionId: COLLIDING.long, cwd: "/r3", seed: balancedLog(1) },
      byId([], true),
    ),
  );
  while (frames.length < count) {
    let pick = rng.next() * total;
    let maker = makers[0] as (typeof makers)[0];
    for (const candidate of makers) {
      pick -= candidate.weight;
      if (pick < 0) {
        maker = candidate;
        break;
      }
    }
    frames.push(maker.make());
  }
  // Over the 32 MiB limit: refused unparsed, under the id its head names (id null when the id
  // comes after the params).
  const huge = "x".repeat(33 * 1024 * 1024);
  const oversizeId = nextId++;
  frames.push(
    {
      category: "a frame over 32 MiB",
      id: oversizeId,
      bytes: Buffer.from(
        `{"jsonrpc":"2.0","id":${oversizeId},"method":"session/read","params":{"sessionId":"${huge}"}}`,
      ),
      expect: byId([INVALID_REQUEST]),
    },
    {
      category: "a frame over 32 MiB",
      bytes: Buffer.from(
        `{"jsonrpc":"2.0","method":"session/read","params":{"sessionId":"${huge}"},"id":${nextId++}}`,
      ),
      expect: { kind: "null", code: INVALID_REQUEST },
    },
  );
  return { frames, canary, hostile };
}

interface Response {
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: { code?: string } };
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

async function barrage(kind: "jsonl" | "sqlite", seed: number): Promise<void> {
  const base = join(root, kind);
  const store = join(base, "store");
  mkdirSync(store, { recursive: true });
  const url = kind === "sqlite" ? `sqlite:${join(store, "sessions.db")}` : `jsonl:${store}`;
  const { frames, canary, hostile } = generateFrames(FRAMES_PER_SERVER, seed);
  const started = Date.now();
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [...serverArgs(), "--store", url],
    { cwd: base, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderrBytes = 0;
  child.stderr.on("data", (chunk: Buffer) => {
    stderrBytes += chunk.length;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  child.stdin.on("error", () => {});

  const byId = new Map<unknown, Response[]>();
  const nullAnswers: Response[] = [];
  let waiting: (() => void) | undefined;
  let received = 0;
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "") continue;
      const response = JSON.parse(line) as Response;
      received++;
      if (response.id === null) nullAnswers.push(response);
      else byId.set(response.id, [...(byId.get(response.id) ?? []), response]);
    }
    waiting?.();
  });

  for (const frame of frames) {
    if (!child.stdin.write(Buffer.concat([frame.bytes, Buffer.from("\n")]))) {
      await new Promise((resolve) => child.stdin.once("drain", resolve));
    }
  }
  const expectedAnswers = frames.filter((f) => f.expect.kind !== "none").length;
  const deadline = Date.now() + 180_000;
  while (received < expectedAnswers && Date.now() < deadline && !exitedEarly) {
    await new Promise<void>((resolve) => {
      waiting = resolve;
      setTimeout(resolve, 200);
    });
  }
  expect(exitedEarly, "the server exited during the barrage").toBe(false);
  expect(received, "every request answered (none missing, no hang)").toBe(expectedAnswers);

  // Every request with an id: exactly one answer, with an allowed code (or result).
  const codes = new Map<string, number>();
  let internal = 0;
  for (const frame of frames) {
    const { expect: want } = frame;
    if (want.kind !== "id") continue;
    const answers = byId.get(frame.id) ?? [];
    expect(answers, `${frame.category} #${frame.id}`).toHaveLength(1);
    const answer = answers[0] as Response;
    if (answer.error !== undefined) {
      const { code, data } = answer.error;
      expect(TABLE.has(code), `${frame.category} #${frame.id}: code ${code}`).toBe(true);
      expect(
        want.codes,
        `${frame.category} #${frame.id}: ${JSON.stringify(answer.error).slice(0, 300)}`,
      ).toContain(code);
      if (data?.code !== undefined) expect(RPC_ERROR_CODES[data.code as keyof typeof C]).toBe(code);
      if (code === C.INTERNAL) internal++;
      const key = `${code}${data?.code ? ` ${data.code}` : ""}`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
    } else {
      expect(want.result, `${frame.category} #${frame.id}: unexpected result`).toBe(true);
      if (frame.nextSeq !== undefined) {
        expect((answer.result as { nextSeq: number }).nextSeq, frame.category).toBe(frame.nextSeq);
      }
      codes.set("result", (codes.get("result") ?? 0) + 1);
    }
  }
  // Frames without a usable id: one `id: null` answer each, with the code their kind calls for.
  const nullWanted = frames.filter((f) => f.expect.kind === "null");
  const count = (list: { code: number }[], code: number) =>
    list.filter((x) => x.code === code).length;
  const nullCodes = nullAnswers.map((a) => ({ code: a.error?.code ?? 0 }));
  for (const code of [PARSE_ERROR, INVALID_REQUEST]) {
    expect(count(nullCodes, code), `id-null answers with ${code}`).toBe(
      count(
        nullWanted.map((f) => ({ code: (f.expect as { code: number }).code })),
        code,
      ),
    );
  }
  expect(nullAnswers).toHaveLength(nullWanted.length);
  // Bad input is the caller's fault: it is answered with the code that says what was wrong, never
  // INTERNAL. (Values nested 10k+ deep once overflowed the stack and were answered INTERNAL.)
  expect(internal, "INTERNAL answers").toBe(0);

  // Still alive and serving: the canary holds exactly the valid appends.
  const check = frames.length + 1_000_000;
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: check, method: "session/read", params: { sessionId: "canary" } })}\n`,
  );
  while (!byId.has(check) && Date.now() < deadline && !exitedEarly) {
    await new Promise<void>((resolve) => {
      waiting = resolve;
      setTimeout(resolve, 200);
    });
  }
  const read = (byId.get(check)?.[0]?.result ?? {}) as { events?: SessionEvent[] };
  expect(read.events).toEqual(canary);

  // The hostile sessions: "__proto__" members stored as sent; the long id's session untouched by
  // whatever was done to the short id that once shared its file.
  const ask = async (id: number, sessionId: string) => {
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id, method: "session/read", params: { sessionId } })}\n`,
    );
    while (!byId.has(id) && Date.now() < deadline && !exitedEarly) {
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 200);
      });
    }
    return byId.get(id)?.[0] as Response;
  };
  const hostileRead = (await ask(check + 1, "hostile-keys")).result as { events: unknown[] };
  expect(JSON.stringify(hostileRead.events)).toBe(JSON.stringify(hostile));
  const longRead = (await ask(check + 2, COLLIDING.long)).result as {
    header: { id: string };
    events: SessionEvent[];
  };
  expect(longRead.header.id).toBe(COLLIDING.long);
  expect(longRead.events).toEqual(balancedLog(1));

  // Nothing landed outside the store root, whatever the ids said.
  const outside = filesUnder(base).filter((name) => !name.startsWith("store"));
  expect(outside).toEqual([]);
  expect(existsSync(join(root, "etc"))).toBe(false);

  child.stdin.end();
  const code = await exited;
  expect(code, "the server exits 0 when its input ends").toBe(0);
  const categories = new Map<string, number>();
  for (const frame of frames)
    categories.set(frame.category, (categories.get(frame.category) ?? 0) + 1);
  console.log(
    `R3 ${kind}: ${frames.length} frames sent in ${((Date.now() - started) / 1000).toFixed(1)} s, ${received} answers (${nullAnswers.length} with id null), server alive throughout and exited 0; canary intact with ${canary.length} events, ${hostile.length} events with "__proto__" members stored as sent, the long id's session intact; ${internal} INTERNAL; ${filesUnder(store).length} files, all inside the store root\n` +
      `  frames: ${[...categories].map(([k, v]) => `${k} ${v}`).join(", ")}\n` +
      `  answers: ${[...codes]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k}×${v}`)
        .join(", ")}; stderr ${stderrBytes} bytes`,
  );
  expect(relative(root, base)).toBe(kind);
}

describe.concurrent("R3 bad input over the wire", () => {
  it(`answers ${FRAMES_PER_SERVER} generated bad frames on a JSONL store with codes from the table, never exiting or hanging, leaving rejected appends without effect`, async () => {
    await barrage("jsonl", 31);
  }, 300_000);
  it(`answers ${FRAMES_PER_SERVER} generated bad frames on a SQLite store with codes from the table, never exiting or hanging, leaving rejected appends without effect`, async () => {
    await barrage("sqlite", 32);
  }, 300_000);
});
