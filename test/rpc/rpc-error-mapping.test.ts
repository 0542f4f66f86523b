// Proves the one error-mapping function: every row of the error table, INTERNAL for anything else (details logged,
// never sent), and the protocol errors.
import { describe, expect, it } from "vitest";
import {
  JSONRPC_PROTOCOL_ERRORS,
  RPC_ERROR_CODE_NAMES,
  RPC_ERROR_CODES,
  type RpcErrorData,
} from "../../src/generated.js";
import {
  InvalidEventError,
  ReplayError,
  type RpcErrorCode,
  SeedlineError,
  SessionForkError,
  StorageError,
  StorageUnavailableError,
} from "../../src/index.js";
import { INTERNAL_MESSAGE, ProtocolError, toResponseError } from "../../src/rpc/error-mapping.js";

/** Example details of every domain error but INTERNAL (typed by the error table). */
const DETAILS: { [C in Exclude<RpcErrorCode, "INTERNAL">]: Omit<RpcErrorData[C], "code"> } = {
  INVALID_PARAMS: { errors: [{ instancePath: "/sessionId", message: "must be string" }] },
  SESSION_NOT_FOUND: { sessionId: "s" },
  SESSION_ALREADY_EXISTS: { sessionId: "s" },
  INVALID_BOUNDARY: { boundary: 9, lastSeq: 3 },
  OPEN_TURN: { boundary: 2, turn: 1 },
  SEQ_CONFLICT: { expectedSeq: 4 },
  INVALID_EVENT: {
    seq: 4,
    index: 0,
    rule: "schema",
    instancePath: "/events/0/data",
    problems: [
      { seq: 4, index: 0, rule: "schema", instancePath: "/events/0/data", message: "m" },
      { seq: 5, index: 1, rule: "json-value", instancePath: "/events/1/data", message: "m" },
    ],
    problemCount: 2,
  },
  FORMAT_UNSUPPORTED: { found: 1, supported: 0, location: "imported log" },
  CORRUPT_LOG: { location: "session s", line: 3, seq: 1, rule: "turn-order" },
  SESSION_BUSY: { sessionId: "s" },
  STORAGE_UNAVAILABLE: {
    location: "postgres://u@db:5432/x (schema seedline)",
    commitUnknown: false,
  },
  WATCH_OVERFLOW: { sessionId: "s", lastSeq: 41 },
  STORAGE_REFUSED: { condition: "no-space", location: "/var/seedline/sessions" },
  RESPONSE_TOO_LARGE: { limit: 33554432, size: 40000000 },
  AMBIGUOUS_ID: { prefix: "abcd", candidates: ["abcd1", "abcd2"], count: 2 },
  WATCH_LIMIT: { limit: 1000 },
  REPLAY_INCOMPLETE: { sessionId: "s", turn: 1, step: 2 },
  REPLAY_EXHAUSTED: { sessionId: "s", callerSessionId: "c" },
  REPLAY_UNEXPECTED_SESSION: { callerSessionId: "c" },
  REPLAY_NOT_FOUND: { replayId: "r" },
  REPLAY_LIMIT: { limit: 100 },
  RECORD_REFUSED: { sessionId: "s", index: 1, expected: "an open step", found: "none" },
};

function mapped(error: unknown) {
  const lines: string[] = [];
  const response = toResponseError(error, (line) => lines.push(line));
  return { response, json: response.toJson(), lines };
}

describe("toResponseError", () => {
  it("has an example for every domain code of the table but INTERNAL", () => {
    expect(Object.keys(DETAILS)).toEqual(RPC_ERROR_CODE_NAMES.filter((c) => c !== "INTERNAL"));
  });

  it.each(
    Object.entries(DETAILS) as [Exclude<RpcErrorCode, "INTERNAL">, Record<string, unknown>][],
  )("maps %s to its number, its message and data {code, ...details}", (code, details) => {
    const { json, lines } = mapped(
      new SeedlineError(code, `expected x, got y (${code})`, details as never),
    );
    expect(json).toEqual({
      code: RPC_ERROR_CODES[code],
      message: `expected x, got y (${code})`,
      data: { code, ...details },
    });
    expect(lines).toEqual([]);
  });

  it("maps the SDK's error subclasses by their code", () => {
    const cases: [SeedlineError, RpcErrorCode][] = [
      [new StorageError("SEQ_CONFLICT", "m", { expectedSeq: 1 }), "SEQ_CONFLICT"],
      [new SessionForkError("OPEN_TURN", "m", { boundary: 1, turn: 1 }), "OPEN_TURN"],
      [new ReplayError("REPLAY_NOT_FOUND", "m", { replayId: "r" }), "REPLAY_NOT_FOUND"],
      [
        new InvalidEventError("INVALID_EVENT", "m", {
          seq: 0,
          index: 0,
          rule: "schema",
          problems: [{ seq: 0, index: 0, rule: "schema", instancePath: "", message: "m" }],
          problemCount: 1,
        }),
        "INVALID_EVENT",
      ],
    ];
    for (const [error, code] of cases) {
      const { json } = mapped(error);
      expect(json.code, code).toBe(RPC_ERROR_CODES[code]);
      expect((json.data as { code: string }).code).toBe(code);
    }
  });

  it("maps a lost store connection to STORAGE_UNAVAILABLE with where and whether a commit was in flight", () => {
    const lost = new StorageUnavailableError(
      "STORAGE_UNAVAILABLE",
      "expected a working connection, got: Connection terminated unexpectedly",
      { location: "postgres://u@db:5432/x (schema s)", commitUnknown: true },
      { cause: new Error("Connection terminated unexpectedly") },
    );
    expect(lost).toBeInstanceOf(StorageError);
    expect(lost).toMatchObject({
      location: "postgres://u@db:5432/x (schema s)",
      commitUnknown: true,
    });
    const { json, lines } = mapped(lost);
    expect(json).toEqual({
      code: RPC_ERROR_CODES.STORAGE_UNAVAILABLE,
      message: lost.message,
      data: {
        code: "STORAGE_UNAVAILABLE",
        location: "postgres://u@db:5432/x (schema s)",
        commitUnknown: true,
      },
    });
    expect(lines).toEqual([]);
  });

  it.each([
    ["a plain Error", new TypeError("secret: cannot read x of undefined")],
    [
      "a SeedlineError with INTERNAL",
      new SeedlineError("INTERNAL", "secret: invariant broken", {}),
    ],
    [
      "a SeedlineError with a local-only code",
      new SeedlineError("SESSION_NOT_LIVE", "secret: stale session", { sessionId: "s" }),
    ],
    ["a thrown string", "secret: a string"],
    ["a thrown object", { secret: "an object" }],
  ])("maps %s to INTERNAL with the generic message, logging the details", (_, error) => {
    const { json, lines } = mapped(error);
    expect(json).toEqual({
      code: RPC_ERROR_CODES.INTERNAL,
      message: INTERNAL_MESSAGE,
      data: { code: "INTERNAL" },
    });
    expect(JSON.stringify(json)).not.toContain("secret");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("secret");
  });

  it("logs the stack of an unexpected Error", () => {
    const { lines } = mapped(new Error("boom"));
    expect(lines[0]).toMatch(/Error: boom\n\s+at /);
  });

  it("maps the protocol errors to their numbers, with data only for METHOD_NOT_FOUND", () => {
    const parse = mapped(new ProtocolError("PARSE_ERROR", "not JSON", undefined)).json;
    expect(parse).toEqual({ code: JSONRPC_PROTOCOL_ERRORS.PARSE_ERROR, message: "not JSON" });
    expect(Object.hasOwn(parse, "data")).toBe(false);
    const invalid = mapped(new ProtocolError("INVALID_REQUEST", "a batch", undefined)).json;
    expect(invalid).toEqual({ code: JSONRPC_PROTOCOL_ERRORS.INVALID_REQUEST, message: "a batch" });
    const unknown = mapped(
      new ProtocolError("METHOD_NOT_FOUND", "no such method", { method: "x/y" }),
    );
    expect(unknown.json).toEqual({
      code: JSONRPC_PROTOCOL_ERRORS.METHOD_NOT_FOUND,
      message: "no such method",
      data: { method: "x/y" },
    });
    expect(unknown.lines).toEqual([]);
  });

  it("uses the fixed numbers of docs/rpc.md", () => {
    const numbers = Object.fromEntries(
      RPC_ERROR_CODE_NAMES.map((code) => [code, mapped(errorFor(code)).json.code]),
    );
    expect(numbers).toEqual({
      INVALID_PARAMS: -32602,
      SESSION_NOT_FOUND: -32002,
      AMBIGUOUS_ID: -32022,
      WATCH_LIMIT: -32023,
      SESSION_ALREADY_EXISTS: -32010,
      INVALID_BOUNDARY: -32011,
      OPEN_TURN: -32012,
      SEQ_CONFLICT: -32013,
      INVALID_EVENT: -32014,
      FORMAT_UNSUPPORTED: -32015,
      CORRUPT_LOG: -32016,
      SESSION_BUSY: -32017,
      STORAGE_UNAVAILABLE: -32018,
      WATCH_OVERFLOW: -32019,
      STORAGE_REFUSED: -32020,
      RESPONSE_TOO_LARGE: -32021,
      REPLAY_INCOMPLETE: -32030,
      REPLAY_EXHAUSTED: -32031,
      REPLAY_UNEXPECTED_SESSION: -32032,
      REPLAY_NOT_FOUND: -32033,
      REPLAY_LIMIT: -32034,
      RECORD_REFUSED: -32040,
      INTERNAL: -32603,
    });
  });
});

function errorFor(code: RpcErrorCode): unknown {
  if (code === "INTERNAL") return new Error("bug");
  return new SeedlineError(code, "m", DETAILS[code] as never);
}
