import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import standalone from "ajv/dist/standalone/index.js";
import { describe, expect, it } from "vitest";
import { loadSchemaSet } from "../../scripts/lib/schema-set.js";
import {
  ajvForSchemaSet,
  positionalContext,
  withRequireShim,
} from "../../scripts/render-validators.js";
import {
  validateCreateSessionOptions,
  validateReplayOpenParams,
  validateSessionEvent,
  validateSessionHeader,
  validateSessionHeaderLine,
} from "../../src/generated.js";
import { corpusLogs } from "../helpers/corpus.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** A minimal valid example of every event type, keyed by type. */
const EXAMPLES: Record<string, Record<string, unknown>> = {
  "turn/start": { turn: 1, trigger: { kind: "message", source: { kind: "user" } } },
  "turn/end": { turn: 1, reason: { kind: "completed" } },
  "step/start": { turn: 1, step: 1 },
  "step/end": { turn: 1, step: 1 },
  "user/message": { content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
  "prompt/blocked": {
    content: [{ type: "text", text: "hi" }],
    source: { kind: "user" },
    reason: "blocked by policy hook",
  },
  "context/message": {
    content: [{ type: "text", text: "ctx" }],
    source: { kind: "plugin", plugin: "p" },
  },
  "assistant/chunk": { turn: 1, step: 1, chunk: { type: "text-delta", index: 0, text: "a" } },
  "assistant/message": { turn: 1, step: 1, content: [] },
  "tool/call": { turn: 1, step: 1, callId: "c1", name: "bash", arguments: "{}" },
  "tool/result": { turn: 1, step: 1, callId: "c1", content: [], isError: false },
  "steering/message": { turn: 1, content: [{ type: "text", text: "s" }], source: { kind: "user" } },
  "todo/write": { todos: [{ content: "x", status: "pending" }] },
  "compact/start": { turn: 1 },
  "compact/summary": {
    summary: "s",
    shadowedRange: { start: 1, end: 3 },
    shadowedSeqs: [1, 2, 3],
    shadowedTokenCount: 10,
  },
  "compact/end": { turn: 1 },
  "hook/invoked": { turn: 1, point: "Stop", dialect: "claude", handlerId: "h1" },
  "hook/result": { turn: 1, point: "Stop", handlerId: "h1", decision: "pass", durationMs: 1.5 },
  "foreign/record": { source: "codex", line: 1, record: { type: "session_meta" } },
};
const SURFACE = new Set([
  "user/message",
  "context/message",
  "assistant/message",
  "tool/result",
  "steering/message",
]);

function event(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const data = EXAMPLES[type];
  return {
    type,
    seq: 0,
    time: 0,
    data,
    ...(SURFACE.has(type) ? { surfaceOp: "append" } : {}),
    ...extra,
  };
}

/** The first error of a failed validation, as [instancePath, keyword, params]. */
function firstError(value: unknown): [string, string, Record<string, unknown>] {
  expect(validateSessionEvent(value)).toBe(false);
  const error = validateSessionEvent.errors?.[0];
  expect(error).toBeDefined();
  return [error?.instancePath ?? "", error?.keyword ?? "", error?.params ?? {}];
}

describe("generated validators on the recorded corpus", () => {
  const logs = corpusLogs();

  it("has all 39 recorded logs", () => {
    expect(logs).toHaveLength(39);
  });

  it.each(logs.map((log) => [log.name, log] as const))("accepts %s", (_, log) => {
    expect(
      validateSessionHeaderLine(log.header),
      JSON.stringify(validateSessionHeaderLine.errors),
    ).toBe(true);
    const { type: _type, ...header } = log.header as Record<string, unknown>;
    expect(validateSessionHeader(header)).toBe(true);
    for (const [i, e] of log.events.entries()) {
      expect(
        validateSessionEvent(e),
        `line ${i + 2}: ${JSON.stringify(validateSessionEvent.errors)}`,
      ).toBe(true);
    }
  });
});

describe("generated validators on invalid events", () => {
  it("accepts the minimal example of every event type", () => {
    for (const type of Object.keys(EXAMPLES)) {
      expect(validateSessionEvent(event(type)), type).toBe(true);
    }
  });

  it.each(Object.keys(EXAMPLES))("rejects %s missing each required data member", (type) => {
    const data = EXAMPLES[type] as Record<string, unknown>;
    for (const key of Object.keys(data)) {
      const { [key]: _, ...rest } = data;
      const [path, keyword, params] = firstError(event(type, { data: rest }));
      expect([path, keyword, params.missingProperty]).toEqual(["/data", "required", key]);
    }
  });

  it("rejects each event missing a required envelope member", () => {
    for (const type of Object.keys(EXAMPLES)) {
      for (const key of ["seq", "time", "data"]) {
        const { [key]: _, ...rest } = event(type);
        const [path, keyword, params] = firstError(rest);
        expect([path, keyword, params.missingProperty]).toEqual(["", "required", key]);
      }
    }
  });

  it("accepts any JSON as a foreign record, and refuses a line number below 1", () => {
    for (const record of [null, 0, "x", [1, [2]], { a: { b: [] } }]) {
      const data = { source: "claude-code", line: 3, record };
      expect(validateSessionEvent(event("foreign/record", { data })), JSON.stringify(record)).toBe(
        true,
      );
    }
    const data = { source: "claude-code", line: 0, record: {} };
    const [path, keyword] = firstError(event("foreign/record", { data }));
    expect([path, keyword]).toEqual(["/data/line", "minimum"]);
  });

  it("rejects an extra envelope key", () => {
    const [path, keyword, params] = firstError(event("turn/start", { extra: 1 }));
    expect([path, keyword, params.additionalProperty]).toEqual([
      "",
      "additionalProperties",
      "extra",
    ]);
  });

  it("rejects surfaceOp and sourceEventSeqs on a non-surface event", () => {
    for (const type of Object.keys(EXAMPLES).filter((t) => !SURFACE.has(t))) {
      for (const key of ["surfaceOp", "sourceEventSeqs"]) {
        const value = key === "surfaceOp" ? "append" : [0];
        const [path, keyword, params] = firstError(event(type, { [key]: value }));
        expect([path, keyword, params.additionalProperty], type).toEqual([
          "",
          "additionalProperties",
          key,
        ]);
      }
    }
  });

  it("rejects a surface event without surfaceOp", () => {
    for (const type of SURFACE) {
      const { surfaceOp: _, ...rest } = event(type);
      const [path, keyword, params] = firstError(rest);
      expect([path, keyword, params.missingProperty], type).toEqual(["", "required", "surfaceOp"]);
    }
  });

  it("accepts a replace surfaceOp with sourceEventSeqs and rejects a malformed one", () => {
    const replace = { op: "replace", start: 1, end: 3 };
    expect(
      validateSessionEvent(
        event("user/message", { surfaceOp: replace, sourceEventSeqs: [1, 2, 3] }),
      ),
    ).toBe(true);
    const [path] = firstError(event("user/message", { surfaceOp: { op: "replace", start: 1 } }));
    expect(path).toBe("/surfaceOp");
  });

  it("rejects a fractional or negative seq", () => {
    expect(firstError(event("turn/start", { seq: 1.5 })).slice(0, 2)).toEqual(["/seq", "type"]);
    expect(firstError(event("turn/start", { seq: -1 })).slice(0, 2)).toEqual(["/seq", "minimum"]);
  });

  it("rejects an unknown type through the discriminator", () => {
    const [path, keyword, params] = firstError({ type: "turn/begin", seq: 0, time: 0, data: {} });
    expect([path, keyword, params.tagValue]).toEqual(["", "discriminator", "turn/begin"]);
  });

  it("rejects a header at another format version and a header line without its type", () => {
    expect(validateSessionHeader({ version: 1, id: "a", createdAt: 0 })).toBe(false);
    expect(validateSessionHeader.errors?.[0]?.instancePath).toBe("/version");
    expect(validateSessionHeaderLine({ version: 0, id: "a", createdAt: 0 })).toBe(false);
    expect(validateSessionHeaderLine.errors?.[0]?.params).toEqual({ missingProperty: "type" });
  });

  it("validates create options, their seed events included", () => {
    expect(
      validateCreateSessionOptions({ seed: [event("turn/start")], meta: { seedLength: 1 } }),
    ).toBe(true);
    expect(validateCreateSessionOptions({ seed: [event("turn/start", { seq: -1 })] })).toBe(false);
    expect(validateCreateSessionOptions.errors?.[0]?.instancePath).toBe("/seed/0/seq");
  });
});

describe("standalone validator code", () => {
  const set = loadSchemaSet(join(ROOT, "schema"));
  // The folder must sit inside the project so that `ajv/...` resolves from node_modules.
  const dir = join(ROOT, "node_modules", ".cache", "seedline-validators-test");

  function writeModule(name: string, code: string): string {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, name);
    writeFileSync(path, code);
    return path;
  }

  function importInNode(path: string): string {
    const script = `const m = await import(${JSON.stringify(path)});
      const ok = m.v({ type: "session", version: 0, id: "x", createdAt: 0 });
      const bad = m.v({ type: "session", version: 0, id: "", createdAt: 0 });
      console.log(JSON.stringify([ok, bad]));`;
    return execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  }

  it("needs the require rewrite: ajv's raw ESM output does not load in Node", () => {
    const ajv = ajvForSchemaSet(set, { source: true, esm: true });
    const raw = standalone.default(ajv, {
      v: "https://seedline.dev/schema/session/session-header-line.schema.json",
    });
    expect(raw).toContain("require(");
    const path = writeModule("raw.mjs", raw);
    expect(() => importInNode(path)).toThrow(/require is not defined/);
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads as plain ESM with the require shim and still validates (minLength uses ajv's runtime helper)", () => {
    const ajv = ajvForSchemaSet(set, { source: true, esm: true });
    const raw = standalone.default(ajv, {
      v: "https://seedline.dev/schema/session/session-header-line.schema.json",
    });
    const { imports, body } = withRequireShim(raw);
    expect(imports).toContain("const require = createRequire(import.meta.url);");
    const path = writeModule("shimmed.mjs", `${imports.join("\n")}\n${body}`);
    expect(importInNode(path)).toBe("[true,false]");
    rmSync(dir, { recursive: true, force: true });
  });

  it("the committed validators module defines require before any use", async () => {
    const { readFileSync } = await import("node:fs");
    const text = readFileSync(join(ROOT, "generated", "validators.gen.ts"), "utf8");
    const shim = text.indexOf("const require = createRequire(import.meta.url);");
    expect(shim).toBeGreaterThan(0);
    expect(text.search(/\brequire\("/)).toBeGreaterThan(shim);
  });
});

describe("the call context of the generated validators", () => {
  const set = loadSchemaSet(join(ROOT, "schema"));
  const live = ajvForSchemaSet(set);
  const text = readFileSync(join(ROOT, "generated", "validators.gen.ts"), "utf8");

  // ajv hands each nested validator its context as an object made per call, and makes two more
  // for a call from outside: a quarter of a validation's time over 100,000 events (12-13 against
  // 16-18 ms), and most of what it allocates. Without the rewrite the committed module holds
  // ajv's form, and the first two assertions fail.
  it("passes the context as arguments: no validator takes or is given an object", () => {
    expect(text).not.toMatch(/function validate\d+\(data, \{/);
    expect(text).not.toMatch(/\bvalidate\d+\([^()]*?, \{instancePath[:,]/);
    expect(text).toContain("const NO_DYNAMIC_ANCHORS = Object.freeze({});");
  });

  /** The errors of ajv compiling the same schema at run time, for the same value. */
  function liveErrors(id: string, value: unknown): unknown {
    const validate = live.getSchema(id);
    if (validate === undefined) throw new Error(`expected ${id} in the schema set`);
    validate(value);
    return validate.errors ?? null;
  }

  const EVENT_ID = "https://seedline.dev/schema/events/session-event.schema.json";
  const badEvents: [string, unknown][] = [
    [
      "a content block of an unknown type",
      event("user/message", {
        data: {
          ...EXAMPLES["user/message"],
          content: [{ type: "text", text: "a" }, { type: "nope" }],
        },
      }),
    ],
    [
      "a text block without text",
      event("assistant/message", { data: { turn: 1, step: 1, content: [{ type: "text" }] } }),
    ],
    [
      "a tool result block of another shape",
      event("tool/result", {
        data: { turn: 1, step: 1, callId: "c", content: [{ type: "image" }], isError: false },
      }),
    ],
    ["a bad surfaceOp", event("user/message", { surfaceOp: { start: 1 } })],
    ["bad sourceEventSeqs", event("tool/result", { sourceEventSeqs: ["x"] })],
    [
      "a negative turn",
      event("turn/start", {
        data: { turn: -1, trigger: { kind: "message", source: { kind: "user" } } },
      }),
    ],
    ["an extra data member", event("step/end", { data: { turn: 1, step: 1, more: true } })],
    ["a bad todo", event("todo/write", { data: { todos: [{ content: "x", status: "later" }] } })],
    [
      "a bad chunk",
      event("assistant/chunk", {
        data: { turn: 1, step: 1, chunk: { type: "text-delta", index: -1, text: "a" } },
      }),
    ],
    ["an unknown type", event("turn/start", { type: "turn/later" })],
    ["not an object", 7],
  ];

  it("reports what ajv compiling the schema at run time reports, nested values included", () => {
    for (const [what, value] of badEvents) {
      expect(validateSessionEvent(value), what).toBe(false);
      expect(validateSessionEvent.errors, what).toEqual(liveErrors(EVENT_ID, value));
    }
    // A path built with escaped keys (an overrides key holding "/" and "~").
    const params = {
      sessionId: "s",
      overrides: { "a/b~c": [{ kind: "nope" }] },
    };
    expect(validateReplayOpenParams(params)).toBe(false);
    expect(validateReplayOpenParams.errors).toEqual(
      liveErrors("https://seedline.dev/schema/rpc/methods/replay-open.params.schema.json", params),
    );
    expect(validateReplayOpenParams.errors?.[0]?.instancePath).toMatch(/^\/overrides\/a~1b~0c\/0/);
    // The valid examples stay valid, one call after another (the shared anchors are not written).
    for (const type of Object.keys(EXAMPLES))
      expect(validateSessionEvent(event(type)), type).toBe(true);
  });

  it("refuses ajv output of another form rather than leave a call half rewritten", () => {
    const signature =
      'function validate1(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){';
    const call =
      'validate2(data.x, {instancePath:instancePath+"/x",parentData:data,parentDataProperty:"x",rootData,dynamicAnchors})';
    expect(positionalContext(`${signature}${call}}`)).toContain(
      'validate2(data.x, instancePath+"/x", data, "x", rootData, dynamicAnchors)',
    );
    expect(() => positionalContext("function validate1(data, options){}")).toThrow(
      /1 of 1 in another form/,
    );
    expect(() =>
      positionalContext(`${signature}${call.replace("rootData,", "rootData,evaluated,")}}`),
    ).toThrow(/every nested validator call to be rewritten/);
    expect(() => positionalContext(`${signature}dynamicAnchors["a"] = 1;}`)).toThrow(
      /pass dynamicAnchors on only/,
    );
  });
});
