// Proves the JSON-RPC method and error tables match docs/rpc.md, that their generator rejects broken
// tables, and that the params schemas enforce the envelope rules (ids, paths, ranges, ACP extras).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import {
  JSONRPC_PROTOCOL_ERRORS,
  RPC_ERROR_CODE_NAMES,
  RPC_ERROR_CODES,
} from "../../generated/rpc-errors.gen.js";
import { RPC_METHOD, RPC_NOTIFICATIONS } from "../../generated/rpc-methods.gen.js";
import { loadSchemaSet, type SchemaSet, schemaFile } from "../../scripts/lib/schema-set.js";
import {
  readRpcTables,
  renderRpcClient,
  renderRpcErrors,
  renderRpcFiles,
  renderRpcMethods,
} from "../../scripts/render-rpc.js";
import { ajvForSchemaSet } from "../../scripts/render-validators.js";

const ROOT = join(import.meta.dirname, "..", "..");
const SET = loadSchemaSet(join(ROOT, "schema"));

/** The methods of docs/rpc.md (the handshake first), with the titles of their params and result schemas. */
const SPEC_METHODS: readonly [method: string, params: string, result: string][] = [
  ["initialize", "InitializeParams", "InitializeResult"],
  ["session/create", "SessionCreateParams", "SessionCreateResult"],
  ["session/new", "SessionNewParams", "SessionNewResult"],
  ["session/append", "SessionAppendParams", "SessionAppendResult"],
  ["session/fork", "SessionForkParams", "SessionForkResult"],
  ["session/load", "SessionLoadParams", "SessionLoadResult"],
  ["session/read", "SessionReadParams", "SessionReadResult"],
  ["session/list", "SessionListParams", "SessionListResult"],
  ["session/messages", "SessionMessagesParams", "SessionMessagesResult"],
  ["session/export", "SessionExportParams", "SessionExportResult"],
  ["session/import", "SessionImportParams", "SessionImportResult"],
  ["session/delete", "SessionDeleteParams", "SessionDeleteResult"],
  ["replay/script", "ReplayScriptParams", "ReplayScriptResult"],
  ["replay/scripts", "ReplayScriptsParams", "ReplayScriptsResult"],
  ["replay/open", "ReplayOpenParams", "ReplayOpenResult"],
  ["replay/next", "ReplayNextParams", "ReplayNextResult"],
  ["replay/close", "ReplayCloseParams", "ReplayCloseResult"],
  ["session/watch", "SessionWatchParams", "SessionWatchResult"],
  ["session/unwatch", "SessionUnwatchParams", "SessionUnwatchResult"],
  ["session/set_title", "SessionSetTitleParams", "SessionSetTitleResult"],
  ["session/search", "SessionSearchParams", "SessionSearchResult"],
  ["session/record", "SessionRecordParams", "SessionRecordResult"],
  ["session/open", "SessionOpenParams", "SessionOpenResult"],
];

/** The error table (docs/rpc.md), written out literally: the independent check of the fixed numbers. */
const SPEC_DOMAIN_ERRORS = {
  INVALID_PARAMS: -32602,
  SESSION_NOT_FOUND: -32002,
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
  AMBIGUOUS_ID: -32022,
  WATCH_LIMIT: -32023,
  REPLAY_INCOMPLETE: -32030,
  REPLAY_EXHAUSTED: -32031,
  REPLAY_UNEXPECTED_SESSION: -32032,
  REPLAY_NOT_FOUND: -32033,
  REPLAY_LIMIT: -32034,
  RECORD_REFUSED: -32040,
  INTERNAL: -32603,
};
const SPEC_PROTOCOL_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
};

/** The error table's extra `data` members per code (`?` marks optional ones); `code` is on every domain error. */
const SPEC_ERROR_DATA: Record<string, string[]> = {
  INVALID_PARAMS: ["errors"],
  SESSION_NOT_FOUND: ["sessionId"],
  SESSION_ALREADY_EXISTS: ["sessionId"],
  INVALID_BOUNDARY: ["boundary", "lastSeq?"],
  OPEN_TURN: ["boundary", "turn", "before?", "after?"],
  SEQ_CONFLICT: ["expectedSeq"],
  INVALID_EVENT: ["seq", "index", "rule", "instancePath?", "problems", "problemCount"],
  FORMAT_UNSUPPORTED: ["found", "supported", "location?"],
  CORRUPT_LOG: ["location", "line?", "seq?", "rule?"],
  SESSION_BUSY: ["sessionId"],
  STORAGE_UNAVAILABLE: ["location", "commitUnknown"],
  WATCH_OVERFLOW: ["sessionId", "lastSeq"],
  STORAGE_REFUSED: ["condition", "location"],
  RESPONSE_TOO_LARGE: ["limit", "size"],
  AMBIGUOUS_ID: ["prefix", "candidates", "count"],
  WATCH_LIMIT: ["limit"],
  REPLAY_INCOMPLETE: ["sessionId", "turn", "step"],
  REPLAY_EXHAUSTED: ["sessionId", "callerSessionId"],
  REPLAY_UNEXPECTED_SESSION: ["callerSessionId"],
  REPLAY_NOT_FOUND: ["replayId"],
  REPLAY_LIMIT: ["limit"],
  RECORD_REFUSED: ["sessionId", "index", "expected", "found"],
  INTERNAL: [],
};

/** The parts of methods.json and errors.json the rejection tests edit. */
interface MethodsDoc {
  methods: ({ errors: string[]; params: string; orderingKey?: string } & Record<string, unknown>)[];
}
interface ErrorsDoc {
  domainErrors: { jsonrpcCode: number; data: { properties: Record<string, unknown> } }[];
}

/** A copy of `set` whose document at `path` is replaced by `edit` applied to a deep copy of it. */
function editedSet<T>(set: SchemaSet, path: string, edit: (doc: T) => void): SchemaSet {
  const doc = structuredClone(schemaFile(set, path)) as T;
  edit(doc);
  return { dir: set.dir, files: new Map(set.files).set(path, doc) };
}

function removed(set: SchemaSet, path: string): SchemaSet {
  const files = new Map(set.files);
  files.delete(path);
  return { dir: set.dir, files };
}

/** The message of what `run` throws (or rejects with); fails the test when it does not throw. */
async function failure(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a failure, got none");
}

function nth<T>(items: readonly T[], i: number): T {
  const item = items[i];
  if (item === undefined)
    throw new Error(`expected an item at index ${i}, got ${items.length} items`);
  return item;
}

describe("the generated RPC tables", () => {
  it("equal what the generator renders from the schema", async () => {
    for (const file of await renderRpcFiles(SET)) {
      expect(readFileSync(join(ROOT, "generated", file.path), "utf8"), file.path).toBe(
        file.content,
      );
    }
  });

  it("render the same bytes twice", async () => {
    expect(renderRpcMethods(SET)).toBe(renderRpcMethods(SET));
    expect(await renderRpcErrors(SET)).toBe(await renderRpcErrors(SET));
    expect(renderRpcClient(SET)).toBe(renderRpcClient(SET));
  });
});

describe("the typed client renderer", () => {
  const { methods } = readRpcTables(SET);
  const client = renderRpcClient(SET);
  /** Each rendered method: its name, whether params are optional, and the wire name it forwards. */
  const rendered = [
    ...client.matchAll(
      /\n {2}(\w+)\(\s*params: RpcMethods\["([^"]+)"\]\["params"\]( = \{\})?,?\s*\): Promise<RpcMethods\["([^"]+)"\]\["result"\]> \{\n {4}return this\.request\("([^"]+)", params\);/g,
    ),
  ].map((m) => ({
    name: m[1],
    params: m[2],
    optional: m[3] !== undefined,
    result: m[4],
    wire: m[5],
  }));

  it("renders one typed method per table row, named by its clientName, forwarding its wire name", () => {
    expect(rendered.map((r) => [r.name, r.wire, r.params, r.result])).toEqual(
      methods.map((m) => [m.clientName, m.method, m.method, m.method]),
    );
  });

  it("documents each method with its summary", () => {
    for (const m of methods) expect(client).toContain(`  /** ${m.summary} */\n  ${m.clientName}(`);
  });

  it("makes params optional exactly where the params schema requires nothing", () => {
    const optional = rendered.filter((r) => r.optional).map((r) => r.wire);
    expect(optional).toEqual(["session/create", "session/list"]);
  });

  it("declares one abstract request over the method table's types", () => {
    expect(client).toContain("export abstract class RpcClientMethods {");
    expect(client).toContain(
      'protected abstract request<M extends RpcMethodName>(\n    method: M,\n    params: RpcMethods[M]["params"],\n  ): Promise<RpcMethods[M]["result"]>;',
    );
  });

  it("names every method's wire string by its client name in RPC_METHOD", () => {
    expect(Object.entries(RPC_METHOD)).toEqual(methods.map((m) => [m.clientName, m.method]));
  });
});

describe("the method table", () => {
  const { methods } = readRpcTables(SET);

  it("lists every method of docs/rpc.md in the table's order, with its params and result titles", () => {
    expect(methods.map((m) => [m.method, m.paramsTitle, m.resultTitle])).toEqual(SPEC_METHODS);
  });

  it("lists the server's notifications with their params titles and validators", () => {
    const { notifications } = readRpcTables(SET);
    expect(notifications.map((n) => [n.method, n.paramsTitle])).toEqual([
      ["session/events", "SessionEventsParams"],
      ["session/update", "SessionUpdateParams"],
    ]);
    const spec = RPC_NOTIFICATIONS["session/events"];
    expect(spec.validateParams({ watchId: "w", sessionId: "s", events: [], nextSeq: 0 })).toBe(
      true,
    );
    expect(
      spec.validateParams({ watchId: "w", sessionId: "s", events: [], nextSeq: 0, end: {} }),
    ).toBe(false);
  });

  it("names the typed client's methods in camelCase", () => {
    const names = Object.fromEntries(methods.map((m) => [m.method, m.clientName]));
    expect(names["session/create"]).toBe("sessionCreate");
    expect(names["replay/scripts"]).toBe("replayScripts");
    expect(names.initialize).toBe("initialize");
  });

  it("gives every method only error codes of the table, INVALID_PARAMS and INTERNAL included", () => {
    for (const m of methods) {
      for (const code of m.errors) expect(RPC_ERROR_CODE_NAMES, m.method).toContain(code);
      expect(m.errors, m.method).toContain("INVALID_PARAMS");
      expect(m.errors, m.method).toContain("INTERNAL");
    }
  });

  it("orders requests by the session they name, or by the replay", () => {
    const keys = Object.fromEntries(methods.map((m) => [m.method, m.orderingKey]));
    expect(keys["session/append"]).toBe("sessionId");
    expect(keys["session/fork"]).toBe("sessionId");
    expect(keys["replay/next"]).toBe("replayId");
    expect(keys["replay/close"]).toBe("replayId");
    expect(keys["session/list"]).toBeUndefined();
    expect(keys["session/new"]).toBeUndefined();
  });

  it("maps the storage and replay failures to the methods that can meet them", () => {
    const errors = Object.fromEntries(methods.map((m) => [m.method, m.errors]));
    expect(errors["session/append"]).toEqual(
      expect.arrayContaining([
        "SEQ_CONFLICT",
        "INVALID_EVENT",
        "SESSION_BUSY",
        "SESSION_NOT_FOUND",
      ]),
    );
    expect(errors["session/fork"]).toEqual(
      expect.arrayContaining(["SESSION_ALREADY_EXISTS", "INVALID_BOUNDARY", "OPEN_TURN"]),
    );
    expect(errors["replay/next"]).toEqual(
      expect.arrayContaining(["REPLAY_EXHAUSTED", "REPLAY_UNEXPECTED_SESSION", "REPLAY_NOT_FOUND"]),
    );
    expect(errors["replay/open"]).toContain("REPLAY_INCOMPLETE");
    expect(errors["replay/open"]).toContain("REPLAY_LIMIT");
    expect(errors["session/delete"]).toContain("SESSION_BUSY");
    const touchStore = methods
      .filter((m) => m.method.startsWith("session/") && m.method !== "session/unwatch")
      .map((m) => m.method);
    for (const method of [...touchStore, "replay/script", "replay/scripts", "replay/open"]) {
      expect(errors[method], method).toContain("STORAGE_UNAVAILABLE");
    }
    for (const method of ["initialize", "replay/next", "replay/close", "session/unwatch"]) {
      expect(errors[method], method).not.toContain("STORAGE_UNAVAILABLE");
    }
  });
});

describe("the error table", () => {
  const { errors } = readRpcTables(SET);

  it("has exactly docs/rpc.md's domain codes and numbers", () => {
    expect({ ...RPC_ERROR_CODES }).toEqual(SPEC_DOMAIN_ERRORS);
    expect(Object.fromEntries(errors.domainErrors.map((e) => [e.code, e.jsonrpcCode]))).toEqual(
      SPEC_DOMAIN_ERRORS,
    );
    expect(RPC_ERROR_CODE_NAMES).toEqual(Object.keys(SPEC_DOMAIN_ERRORS));
  });

  it("has exactly the JSON-RPC protocol errors", () => {
    expect({ ...JSONRPC_PROTOCOL_ERRORS }).toEqual(SPEC_PROTOCOL_ERRORS);
    const withData = errors.protocolErrors.filter((e) => e.data !== undefined);
    expect(withData.map((e) => [e.name, Object.keys(e.data?.properties ?? {})])).toEqual([
      ["METHOD_NOT_FOUND", ["method"]],
    ]);
  });

  it("gives each domain error its data members, plus its code", () => {
    for (const e of errors.domainErrors) {
      const members = Object.keys(e.data.properties).map((name) =>
        e.data.required.includes(name) ? name : `${name}?`,
      );
      expect(members, e.code).toEqual(["code", ...(SPEC_ERROR_DATA[e.code] ?? ["?"])]);
      expect(e.data.properties.code, e.code).toEqual({ const: e.code });
      expect(e.data.additionalProperties, e.code).toBe(false);
    }
  });
});

describe("the RPC generator", () => {
  it("rejects a methods document naming an unknown error code", async () => {
    const set = editedSet<MethodsDoc>(SET, "rpc/methods.json", (doc) => {
      nth(doc.methods, 3).errors.splice(1, 0, "NO_SUCH_CODE");
    });
    const message = await failure(() => renderRpcMethods(set));
    for (const part of ["rpc/methods.json", "/methods/3/errors/1", "NO_SUCH_CODE"]) {
      expect(message).toContain(part);
    }
  });

  it("rejects a methods document naming a missing params file", async () => {
    const set = removed(SET, "rpc/methods/session-read.params.schema.json");
    const message = await failure(() => renderRpcMethods(set));
    expect(message).toContain("rpc/methods/session-read.params.schema.json");
    expect(message).toContain("/methods/6/params");
  });

  it("rejects a params path that does not follow the method's name", async () => {
    const set = editedSet<MethodsDoc>(SET, "rpc/methods.json", (doc) => {
      nth(doc.methods, 1).params = "methods/session-new.params.schema.json";
    });
    const message = await failure(() => renderRpcMethods(set));
    expect(message).toContain("/methods/1/params");
    expect(message).toContain("methods/session-create.params.schema.json");
  });

  it("rejects an orderingKey that is not a params member", async () => {
    const set = editedSet<MethodsDoc>(SET, "rpc/methods.json", (doc) => {
      nth(doc.methods, 3).orderingKey = "session";
    });
    const message = await failure(() => renderRpcMethods(set));
    expect(message).toContain("/methods/3/orderingKey");
    expect(message).toContain('"session"');
  });

  it("rejects a method that cannot return INTERNAL", async () => {
    const set = editedSet<MethodsDoc>(SET, "rpc/methods.json", (doc) => {
      nth(doc.methods, 0).errors = ["INVALID_PARAMS"];
    });
    const message = await failure(() => renderRpcMethods(set));
    expect(message).toContain("/methods/0/errors");
    expect(message).toContain("INTERNAL");
  });

  it("rejects a methods document that breaks its schema", async () => {
    const set = editedSet<MethodsDoc>(SET, "rpc/methods.json", (doc) => {
      nth(doc.methods, 2).extra = true;
    });
    const message = await failure(() => renderRpcMethods(set));
    expect(message).toContain("rpc/methods.schema.json");
    expect(message).toContain("/methods/2");
    expect(message).toContain('"extra"');
  });

  it("rejects two errors with one JSON-RPC number", async () => {
    const set = editedSet<ErrorsDoc>(SET, "rpc/errors.json", (doc) => {
      nth(doc.domainErrors, 2).jsonrpcCode = -32002;
    });
    const message = await failure(() => renderRpcErrors(set));
    for (const part of [
      "rpc/errors.json",
      "-32002",
      "SESSION_NOT_FOUND",
      "SESSION_ALREADY_EXISTS",
    ]) {
      expect(message).toContain(part);
    }
  });

  it("rejects error data whose code is not the entry's", async () => {
    const set = editedSet<ErrorsDoc>(SET, "rpc/errors.json", (doc) => {
      nth(doc.domainErrors, 1).data.properties.code = { const: "SESSION_MISSING" };
    });
    const message = await failure(() => renderRpcErrors(set));
    expect(message).toContain("/domainErrors/1/data");
    expect(message).toContain("SESSION_NOT_FOUND");
  });
});

describe("the session id schema", () => {
  const ajv = new Ajv2020({ strict: true, unicodeRegExp: false });
  const isSessionId = ajv.compile(
    structuredClone(schemaFile(SET, "rpc/session-id.schema.json")) as object,
  );

  it.each([
    ["a single character", "a"],
    ["a path-like id", "../x"],
    ["a non-ASCII id", "é"],
    ["256 UTF-16 units", "x".repeat(256)],
    ["128 astral characters (256 units)", "😀".repeat(128)],
  ])("accepts %s", (_, id) => {
    expect(isSessionId(id)).toBe(true);
  });

  it.each([
    ["the empty string", ""],
    ["257 UTF-16 units", "x".repeat(257)],
    ["129 astral characters (258 units)", "😀".repeat(129)],
    ["a NUL", "a\u0000b"],
    ["a newline", "a\nb"],
    ["a DEL", "a\u007fb"],
  ])("rejects %s", (_, id) => {
    expect(isSessionId(id)).toBe(false);
  });
});

describe("the params schemas", () => {
  const ajv = ajvForSchemaSet(SET);
  const { methods } = readRpcTables(SET);
  const validate = (title: string, value: unknown): boolean => {
    const method = methods.find((m) => m.paramsTitle === title || m.resultTitle === title);
    if (method === undefined) throw new Error(`no method has a schema titled ${title}`);
    const path = method.paramsTitle === title ? method.params : method.result;
    const check = ajv.getSchema(`https://seedline.dev/schema/rpc/${path}`);
    if (check === undefined) throw new Error(`ajv has no schema for ${path}`);
    return check(value) as boolean;
  };

  it("compile in strict ajv, with every other schema", () => {
    for (const m of methods) {
      for (const path of [m.params, m.result]) {
        expect(ajv.getSchema(`https://seedline.dev/schema/rpc/${path}`), path).toBeDefined();
      }
    }
  });

  it("accept ACP's session/new with mcpServers, _meta and unknown members", () => {
    expect(
      validate("SessionNewParams", { cwd: "/w", mcpServers: [], _meta: { x: 1 }, later: 2 }),
    ).toBe(true);
  });

  it("accept ACP's session/fork and session/list with extra members", () => {
    expect(validate("SessionForkParams", { sessionId: "s", cwd: "/w", mcpServers: [], x: 1 })).toBe(
      true,
    );
    expect(validate("SessionListParams", { cwd: "/w", _meta: {}, x: 1 })).toBe(true);
  });

  it("accept an initialize request with client info and capabilities", () => {
    const params = {
      protocolVersion: 1,
      clientInfo: { name: "c", version: "1" },
      clientCapabilities: {},
    };
    expect(validate("InitializeParams", params)).toBe(true);
  });

  it("reject an unknown member of a seedline-only method, but accept _meta", () => {
    expect(validate("SessionAppendParams", { sessionId: "s", events: [], sessionID: "t" })).toBe(
      false,
    );
    expect(validate("SessionAppendParams", { sessionId: "s", events: [], _meta: {} })).toBe(true);
  });

  it("check the envelope of events, not the events", () => {
    expect(validate("SessionAppendParams", { sessionId: "s", events: [{ anything: 1 }] })).toBe(
      true,
    );
    expect(validate("SessionAppendParams", { sessionId: "s", events: [1] })).toBe(false);
    expect(validate("SessionCreateParams", { seed: [{}], meta: { seedLength: 1 } })).toBe(true);
  });

  it("reject a relative cwd for a new session", () => {
    expect(validate("SessionNewParams", { cwd: "w" })).toBe(false);
    expect(validate("SessionCreateParams", { cwd: "./w" })).toBe(false);
    expect(validate("SessionForkParams", { sessionId: "s", cwd: "w" })).toBe(false);
  });

  it("reject negative, fractional and unsafe seqs, and a zero limit", () => {
    expect(validate("SessionForkParams", { sessionId: "s", boundary: -1 })).toBe(false);
    expect(validate("SessionForkParams", { sessionId: "s", boundary: 1.5 })).toBe(false);
    expect(validate("SessionReadParams", { sessionId: "s", fromSeq: 2 ** 53 })).toBe(false);
    expect(validate("SessionReadParams", { sessionId: "s", limit: 0 })).toBe(false);
    expect(validate("SessionListParams", { limit: 0 })).toBe(false);
    expect(validate("SessionForkParams", { sessionId: "s", boundary: 0 })).toBe(true);
  });

  it("reject a session id with a control character wherever one is named", () => {
    expect(validate("SessionReadParams", { sessionId: "a\u0000" })).toBe(false);
    expect(validate("SessionForkParams", { sessionId: "s", childSessionId: "" })).toBe(false);
    expect(validate("ReplayNextParams", { replayId: "r", callerSessionId: "\u007f" })).toBe(false);
  });

  it("accept replay overrides keyed by session id, and check their entries", () => {
    const entries = [
      { kind: "throw", chunks: [], message: "boom", code: "E" },
      { kind: "hang", chunks: [] },
    ];
    expect(validate("ReplayOpenParams", { sessionId: "s", overrides: { child: entries } })).toBe(
      true,
    );
    expect(
      validate("ReplayOpenParams", {
        sessionId: "s",
        overrides: { child: [{ kind: "loop", chunks: [] }] },
      }),
    ).toBe(false);
  });

  it("accept the handshake result docs/rpc.md describes", () => {
    const result = {
      protocolVersion: 1,
      agentInfo: { name: "seedline", version: "0.1.0" },
      authMethods: [],
      agentCapabilities: {
        loadSession: true,
        sessionCapabilities: { list: {}, fork: {}, delete: {} },
        _meta: {
          seedline: {
            formatVersion: 0,
            sqliteSchemaVersion: 4,
            store: "sqlite",
            methods: ["initialize"],
          },
        },
      },
    };
    expect(validate("InitializeResult", result)).toBe(true);
    expect(validate("InitializeResult", { ...result, extra: 1 })).toBe(false);
  });

  it("accept a list entry with an ISO 8601 updatedAt and refuse epoch numbers there", () => {
    const header = { version: 0, id: "s", createdAt: 1 };
    const entry = { sessionId: "s", cwd: "/w", eventCount: 3, header };
    expect(
      validate("SessionListResult", {
        sessions: [{ ...entry, updatedAt: "2025-01-31T12:00:00.000Z" }],
      }),
    ).toBe(true);
    expect(validate("SessionListResult", { sessions: [{ ...entry, updatedAt: 1 }] })).toBe(false);
  });
});
