// A "__proto__" member in event data is an ordinary member: stored, loaded, exported and validated as an own one on every backend.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSchemaSet, schemaDocuments } from "../../scripts/lib/schema-set.js";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import {
  InvalidEventError,
  type SessionBackend,
  type SessionHeader,
  SessionStore,
} from "../../src/index.js";
import { formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { backendKinds } from "../helpers/backend-kinds.js";
import {
  stepEnd,
  stepStart,
  TIME,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { POSTGRES_SKIP } from "../helpers/postgres-harness.js";
import { frame, spawnServer, type WireMessage } from "../helpers/rpc-fixtures.js";
import { rejectionOf } from "../helpers/store-builders.js";

// Regression for issue 14, finding 3. Before the fix copyJsonValue assigned `out[key] = child`,
// which for "__proto__" calls Object.prototype's setter: the member became the copy's prototype.
// Seen failing before the fix, on every backend (memory, JSONL, SQLite, PostgreSQL):
// - "is stored as an own member": the append was acknowledged, but the stored line read
//   `"meta":{"y":2,"z":{}}` (the members dropped), so reload and export differed from what was
//   sent ("expected Array{ x: 1 } to be …" on the own-member check);
// - "does not stand in for required members": the append of an event whose `data` was only under
//   "__proto__" resolved (nextSeq 1) — and every later load was CORRUPT_LOG ("must have required
//   property 'data'"); the nested tool/call case below resolved the same way;
// - the spawned-server case: the read and export frames lacked the "__proto__" member.
// "is stored the same by import as by append" passed before (import parses, it never copied): it
// pins that both ways in now store the same thing. The prototype-object case passed before too
// (refused as "an instance of Object"); it now names the problem.

/** `tool/result` data `meta` is the schema's free JSON: "__proto__" members at several levels. */
const META = '{"__proto__":{"x":1,"__proto__":[1,{"__proto__":null}]},"y":2,"z":{"__proto__":5}}';
const CALL = "call-1";

/** One turn with a tool round trip, as JSONL lines (the canonical text of each event). */
const LINES: readonly string[] = (() => {
  const events = [
    turnStart(0, 1),
    userMessage(1, "prompt"),
    stepStart(2, 1, 1),
    toolCall(3, 1, 1, CALL),
    toolResult(4, 1, 1, CALL, { sourceEventSeqs: [3], meta: 0 }),
    stepEnd(5, 1, 1),
    turnEnd(6, 1),
  ];
  const lines = events.map((event) => JSON.stringify(event));
  lines[4] = (lines[4] as string).replace('"meta":0', `"meta":${META}`);
  return lines;
})();

/** The events as the server's JSON.parse hands them over: "__proto__" an own member. */
function wireEvents(): unknown[] {
  return LINES.map((line) => JSON.parse(line));
}

/** The meta of the tool/result of a log holding {@link LINES}. */
function metaOf(events: readonly unknown[]): Record<string, unknown> {
  return (events[4] as { data: { meta: Record<string, unknown> } }).data.meta;
}

function expectOwnProtoMember(meta: Record<string, unknown>): void {
  expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
  expect(Object.keys(meta)).toEqual(["__proto__", "y", "z"]);
  expect(Object.getOwnPropertyDescriptor(meta, "__proto__")?.value).toEqual(
    JSON.parse('{"x":1,"__proto__":[1,{"__proto__":null}]}'),
  );
  expect(JSON.stringify(meta)).toBe(META);
}

const root = mkdtempSync(join(tmpdir(), "seedline-hostile-keys-"));
const kinds = backendKinds();
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await kinds.cleanup();
});

/** Each backend kind, opened (again, as a fresh instance) over storage named by `dir`. */
const BACKENDS = kinds.open;

let places = 0;
/** A fresh storage place of `kind`, and a way to open a store over it (each time a fresh one). */
function place(kind: string): () => Promise<SessionStore> {
  const dir = join(root, `${kind}-${places++}`);
  const open = BACKENDS[kind] as (dir: string) => Promise<SessionBackend>;
  return async () => new SessionStore({ backend: await open(dir) });
}

/** Runs `body` with a store, closing it afterwards. */
async function using<T>(
  open: () => Promise<SessionStore>,
  body: (s: SessionStore) => Promise<T>,
): Promise<T> {
  const store = await open();
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

const postgresNote = POSTGRES_SKIP === undefined ? "" : ` (PostgreSQL skipped: ${POSTGRES_SKIP})`;

describe.each(Object.keys(BACKENDS))(
  `a "__proto__" member on the %s backend${postgresNote}`,
  (kind) => {
    it("is stored as an own member: a fresh store loads what was appended and exports it byte for byte", async () => {
      const open = place(kind);
      const header = await using(open, async (store) => {
        const session = await store.create({ id: "s", meta: { createdAt: TIME } });
        expect(await session.append(wireEvents())).toBe(LINES.length);
        expectOwnProtoMember(metaOf(await session.readEvents()));
        return session.header;
      });
      await using(open, async (store) => {
        const loaded = await store.load("s");
        expectOwnProtoMember(metaOf(await loaded.readEvents()));
        expect((await loaded.readEvents()).map((event) => JSON.stringify(event))).toEqual(LINES);
        expect(await store.exportLog("s")).toBe(
          formatHeaderLine(header) + LINES.map((line) => `${line}\n`).join(""),
        );
        // A retry of the acknowledged batch is recognised as one (it repeats the stored events).
        expect(await store.append("s", wireEvents())).toBe(LINES.length);
      });
    });

    it("is stored the same by import as by append", async () => {
      const open = place(kind);
      const text = `${formatHeaderLine({ version: 0, id: "i", createdAt: TIME })}${LINES.map((line) => `${line}\n`).join("")}`;
      await using(open, async (store) => {
        await store.importLog(text);
      });
      await using(open, async (store) => {
        expectOwnProtoMember(metaOf(await (await store.load("i")).readEvents()));
        expect(await store.exportLog("i")).toBe(text);
      });
    });

    it("does not stand in for required members: an event holding them only under it is refused and nothing is stored", async () => {
      const open = place(kind);
      const start = turnStart(0, 1);
      // The envelope's required `data`, present only inside a "__proto__" member.
      const hidden = JSON.parse(
        `{"type":"turn/start","seq":0,"time":${TIME},"__proto__":{"data":${JSON.stringify(start.data)}}}`,
      );
      await using(open, async (store) => {
        await store.create({ id: "h" });
        const error = await rejectionOf(store.append("h", [hidden]));
        expect(error).toBeInstanceOf(InvalidEventError);
        expect(error).toMatchObject({ code: "INVALID_EVENT", rule: "schema", seq: 0, index: 0 });
        const seeded = await rejectionOf(store.create({ id: "h2", seed: [hidden] }));
        expect(seeded).toMatchObject({ code: "INVALID_EVENT", rule: "schema" });
      });
      await using(open, async (store) => {
        expect(await (await store.load("h")).readEvents()).toEqual([]);
        expect(await store.get("h2")).toBeUndefined();
      });
    });
  },
);

describe("required members inherited rather than own (memory backend)", () => {
  it('refuses a tool/call whose data members are only under a nested "__proto__"', async () => {
    const store = new SessionStore();
    await store.create({ id: "d", seed: [turnStart(0, 1), stepStart(1, 1, 1)] });
    const call = toolCall(2, 1, 1, CALL);
    const hidden = JSON.parse(
      `{"type":"tool/call","seq":2,"time":${TIME},"data":{"__proto__":${JSON.stringify(call.data)}}}`,
    );
    expect(await rejectionOf(store.append("d", [hidden]))).toMatchObject({
      code: "INVALID_EVENT",
      rule: "schema",
      details: { instancePath: "/data" },
    });
    expect((await store.load("d")).nextSeq).toBe(2);
  });

  it("refuses an in-process event whose members come from a prototype object (json-value)", async () => {
    const store = new SessionStore();
    await store.create({ id: "p" });
    const { data, ...envelope } = turnStart(0, 1);
    const inherited = Object.assign(Object.create({ data }) as object, envelope);
    expect(await rejectionOf(store.append("p", [inherited]))).toMatchObject({
      code: "INVALID_EVENT",
      rule: "json-value",
    });
    expect((await store.load("p")).nextSeq).toBe(0);
  });
});

describe("what the generated validators can see", () => {
  // The validators read members as `data.name` (ajv's `ownProperties` option would add an own-
  // property check to every member at a measured cost): that is sound because every validated
  // object is a copy or a JSON.parse result, whose only inherited members are Object.prototype's —
  // and no schema names one of those. This pins that last condition.
  it("names no member a plain object inherits, so only own members can satisfy the schemas", () => {
    const inherited = new Set(Object.getOwnPropertyNames(Object.prototype));
    const named: string[] = [];
    const walk = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return;
      const { properties, required } = node as { properties?: unknown; required?: unknown };
      if (typeof properties === "object" && properties !== null)
        named.push(...Object.keys(properties));
      if (Array.isArray(required)) named.push(...(required as string[]));
      for (const child of Object.values(node)) walk(child);
    };
    for (const [, schema] of schemaDocuments(
      loadSchemaSet(join(import.meta.dirname, "..", "..", "schema")),
    ))
      walk(schema);
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter((name) => inherited.has(name))).toEqual([]);
  });
});

describe('a "__proto__" member over the built server (spawned, raw JSON text)', () => {
  /** Sends one request as raw text and returns its answer. */
  async function call(
    peer: ReturnType<typeof spawnServer>["peer"],
    id: number,
    method: string,
    paramsText: string,
  ): Promise<WireMessage> {
    peer.sendRaw(
      frame("ndjson", `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsText}}`),
    );
    const answer = await peer.next();
    expect(answer.id).toBe(id);
    return answer;
  }

  it("keeps it through append, read and export, and across a server restart", async () => {
    const store = `jsonl:${join(root, "spawned")}`;
    const header: SessionHeader = { version: 0, id: "w", createdAt: 5 };
    const exportText = formatHeaderLine(header) + LINES.map((line) => `${line}\n`).join("");
    const first = spawnServer(store, "ndjson");
    expect(
      (await call(first.peer, 1, "session/create", '{"sessionId":"w","meta":{"createdAt":5}}'))
        .error,
    ).toBeUndefined();
    const appended = await call(
      first.peer,
      2,
      "session/append",
      `{"sessionId":"w","events":[${LINES.join(",")}]}`,
    );
    expect(appended.result).toEqual({ nextSeq: LINES.length });
    await call(first.peer, 3, "session/read", '{"sessionId":"w"}');
    // The read's raw frame carries the event exactly as it was sent.
    expect(first.peer.frames.at(-1)).toContain(LINES[4]);
    expect((await call(first.peer, 4, "session/export", '{"sessionId":"w"}')).result).toEqual({
      log: exportText,
      nextSeq: LINES.length,
      done: true,
    });
    const hidden = `{"type":"turn/start","seq":${LINES.length},"time":${TIME},"__proto__":{"data":${JSON.stringify(turnStart(0, 2).data)}}}`;
    const refused = await call(
      first.peer,
      5,
      "session/append",
      `{"sessionId":"w","events":[${hidden}]}`,
    );
    expect(refused.error).toMatchObject({
      code: RPC_ERROR_CODES.INVALID_EVENT,
      data: { code: "INVALID_EVENT", rule: "schema" },
    });
    first.child.stdin.end();
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const second = spawnServer(store, "ndjson");
    await call(second.peer, 1, "session/read", '{"sessionId":"w"}');
    expect(second.peer.frames.at(-1)).toContain(`"events":[${LINES.join(",")}]`);
    expect((await call(second.peer, 2, "session/export", '{"sessionId":"w"}')).result).toEqual({
      log: exportText,
      nextSeq: LINES.length,
      done: true,
    });
    second.child.stdin.end();
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(first.stderr() + second.stderr()).toBe("");
  });
});
