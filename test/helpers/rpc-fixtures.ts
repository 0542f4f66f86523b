// Shared fixtures of the RPC tests: servers over memory streams or spawned from dist, a raw wire peer, and the
// scenarios (every method, every domain error) that run unchanged over each transport.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { expect } from "vitest";
import { RPC_ERROR_CODES, RPC_METHOD_NAMES, RPC_METHODS } from "../../src/generated.js";
import {
  type Framing,
  type RpcErrorCode,
  type RpcMethodName,
  RpcResponseError,
  SeedlineClient,
  type ServeOptions,
  type SessionEvent,
  type SessionHeader,
  SessionStore,
  serve,
} from "../../src/index.js";
import { balancedLog, simpleTurn, TIME } from "./builders.js";
import { CORPUS_DIR } from "./corpus.js";

export const ROOT = join(import.meta.dirname, "..", "..");
/** The built bare server entry the end-to-end tests spawn (built by test/global-setup.ts). */
export const STDIO_MAIN = join(ROOT, "dist", "src", "rpc", "stdio-main.js");

/** A temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = "seedline-rpc-"): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A server over an in-memory stream pair, with a typed client on the other end. */
export interface MemoryServer {
  readonly server: ReturnType<typeof serve>;
  readonly client: SeedlineClient;
  readonly store: SessionStore;
  readonly logs: string[];
  /** Client → server bytes. */
  readonly toServer: PassThrough;
  /** Server → client bytes. */
  readonly toClient: PassThrough;
}

/** Serves `options.store` (a new memory store by default) over PassThrough streams. */
export function memoryServer(
  options: Partial<Omit<ServeOptions, "input" | "output">> = {},
  connect = true,
): MemoryServer {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const logs: string[] = [];
  const store = options.store ?? new SessionStore();
  const server = serve({
    log: (line) => logs.push(line),
    ...options,
    store,
    input: toServer,
    output: toClient,
  });
  const framing = options.framing === undefined ? {} : { framing: options.framing };
  // A raw test reads toClient itself, so no client may consume it.
  const client = connect
    ? SeedlineClient.connect(toClient, toServer, framing)
    : (undefined as unknown as SeedlineClient);
  return { server, client, store, logs, toServer, toClient };
}

/** A client of the built bare server (`dist/src/rpc/stdio-main.js`), its stderr captured. */
export function spawnedClient(
  store: string,
  framing: Framing,
  extraArgs: readonly string[] = [],
): {
  client: SeedlineClient;
  stderr: () => string;
} {
  const client = SeedlineClient.spawn({
    command: process.execPath,
    args: [STDIO_MAIN, "--store", store, "--framing", framing, ...extraArgs],
    framing,
    stderr: "pipe",
  });
  let text = "";
  client.process?.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  return { client, stderr: () => text };
}

/** The built bare server as a child process, for raw wire tests. */
export function spawnServer(store: string, framing: Framing) {
  const child = spawn(process.execPath, [STDIO_MAIN, "--store", store, "--framing", framing], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const peer = new RawPeer(framing, child.stdout, child.stdin);
  return { child, peer, exited, stderr: () => stderr };
}

/** A JSON-RPC message as the raw peer reads it. */
export interface WireMessage {
  readonly jsonrpc: string;
  readonly id?: string | number | null;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: Record<string, unknown> };
}

/**
 * A hand-written client: writes bytes, reads framed messages. It records every frame it read
 * and anything on the stream that is not a JSON-RPC message (`garbage`), to pin the wire format.
 */
export class RawPeer {
  readonly framing: Framing;
  readonly output: Writable;
  /** Every frame read, as text. */
  readonly frames: string[] = [];
  /** Text that was not one JSON-RPC 2.0 message per frame. */
  readonly garbage: string[] = [];
  #buffer = Buffer.alloc(0);
  #queue: WireMessage[] = [];
  #waiters: ((message: WireMessage) => void)[] = [];
  #ended = false;
  #onEnd: (() => void)[] = [];

  constructor(framing: Framing, input: Readable, output: Writable) {
    this.framing = framing;
    this.output = output;
    input.on("data", (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#parse();
    });
    input.on("end", () => {
      this.#ended = true;
      if (this.#buffer.length > 0) this.garbage.push(this.#buffer.toString("utf8"));
      for (const resolve of this.#onEnd) resolve();
    });
  }

  /** Writes raw bytes (no framing added). */
  sendRaw(bytes: string | Buffer): void {
    this.output.write(bytes);
  }

  /** Writes `body` (a message, or raw JSON text) in this peer's framing. */
  send(body: unknown): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    this.sendRaw(frame(this.framing, text));
  }

  /** The next message read, in arrival order. */
  next(timeoutMs = 30_000): Promise<WireMessage> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no message within the timeout")), timeoutMs);
      this.#waiters.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  }

  /** The next `count` messages, keyed by id (ids must be distinct and non-null). */
  async byId(count: number): Promise<Map<string | number, WireMessage>> {
    const found = new Map<string | number, WireMessage>();
    for (let i = 0; i < count; i++) {
      const message = await this.next();
      found.set(message.id as string | number, message);
    }
    return found;
  }

  /** Resolves when the stream ends. */
  ended(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => this.#onEnd.push(resolve));
  }

  #parse(): void {
    for (;;) {
      let text: string;
      if (this.framing === "ndjson") {
        const newline = this.#buffer.indexOf(10);
        if (newline < 0) return;
        text = this.#buffer.subarray(0, newline).toString("utf8");
        this.#buffer = this.#buffer.subarray(newline + 1);
      } else {
        const headerEnd = this.#buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0) return;
        const header = this.#buffer.subarray(0, headerEnd).toString("ascii");
        const length = Number(/Content-Length: (\d+)/i.exec(header)?.[1] ?? Number.NaN);
        if (!Number.isInteger(length)) {
          this.garbage.push(header);
          this.#buffer = this.#buffer.subarray(headerEnd + 4);
          continue;
        }
        if (this.#buffer.length < headerEnd + 4 + length) return;
        text = this.#buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
        this.#buffer = this.#buffer.subarray(headerEnd + 4 + length);
      }
      this.frames.push(text);
      let message: WireMessage;
      try {
        message = JSON.parse(text) as WireMessage;
      } catch {
        this.garbage.push(text);
        continue;
      }
      if (message.jsonrpc !== "2.0") this.garbage.push(text);
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    }
  }
}

/** `text` framed for the wire. */
export function frame(framing: Framing, text: string): string {
  if (framing === "ndjson") return `${text}\n`;
  return `Content-Length: ${Buffer.byteLength(text, "utf8")}\r\n\r\n${text}`;
}

/** Expects `result` to be what the schema says `method` returns. */
export function expectValidResult(method: RpcMethodName, result: unknown): void {
  const validate = RPC_METHODS[method].validateResult;
  const ok = validate(result);
  expect(ok ? [] : validate.errors, `${method} result`).toEqual([]);
}

/** The error a promise rejects with, as an RpcResponseError (fails the test otherwise). */
export async function responseError(promise: Promise<unknown>): Promise<RpcResponseError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RpcResponseError);
    return error as RpcResponseError;
  }
  throw new Error("expected an error response, got a result");
}

/** Expects an error response with domain code `code` (its number from the table) and returns it. */
export async function expectCode(
  promise: Promise<unknown>,
  code: RpcErrorCode,
): Promise<RpcResponseError> {
  const error = await responseError(promise);
  expect({ code: error.code, dataCode: error.dataCode }).toEqual({
    code: RPC_ERROR_CODES[code],
    dataCode: code,
  });
  return error;
}

/** A JSONL log text: the header line, then one line per event. */
export function logText(header: SessionHeader, events: readonly unknown[]): string {
  const head = JSON.stringify({ type: "session", ...header });
  return [head, ...events.map((e) => JSON.stringify(e))].map((line) => `${line}\n`).join("");
}

/** The recorded subagent-fork scenario: a primary with three model calls and one fork child. */
export const CORPUS_TREE = {
  primary: "f2358dc0-75f8-4649-8440-ab94b8e10dc3",
  child: "906f1eac-a457-4eb9-828b-1ba537552524",
  childSeedLength: 38,
  logs: ["session.jsonl", "session.1.jsonl"].map((file) =>
    readFileSync(join(CORPUS_DIR, "subagent-fork", file), "utf8"),
  ),
} as const;

/** The seq of the first `turn/end` of `events`. */
export function firstTurnEnd(events: readonly SessionEvent[]): number {
  const seq = events.find((e) => e.type === "turn/end")?.seq;
  if (seq === undefined) throw new Error("expected a turn/end");
  return seq;
}

/**
 * Calls every method of the table once or more, in the way docs/rpc.md describes it, and checks each
 * result against its result schema. Ids are prefixed with `prefix` so that runs on one store do
 * not collide.
 */
export async function everyMethodScenario(client: SeedlineClient, prefix: string): Promise<void> {
  const called = new Set<RpcMethodName>();
  const check = <T>(method: RpcMethodName, result: T): T => {
    expectValidResult(method, result);
    called.add(method);
    return result;
  };
  const a = `${prefix}-a`;

  const init = check(
    "initialize",
    await client.initialize({ protocolVersion: 1, clientInfo: { name: "t", version: "1" } }),
  );
  expect(init.agentCapabilities._meta.seedline.methods).toEqual([...RPC_METHOD_NAMES]);

  const created = check(
    "session/create",
    await client.sessionCreate({ sessionId: a, cwd: "/w/a" }),
  );
  expect(created.header).toMatchObject({ id: a, version: 0, cwd: "/w/a" });
  const log = balancedLog(2);
  const appended = check(
    "session/append",
    await client.sessionAppend({ sessionId: a, events: log }),
  );
  expect(appended.nextSeq).toBe(log.length);

  const page = check("session/read", await client.sessionRead({ sessionId: a, limit: 5 }));
  expect(page).toMatchObject({ nextSeq: 5, done: false });
  expect(page.events).toEqual(log.slice(0, 5));
  const rest = check("session/read", await client.sessionRead({ sessionId: a, fromSeq: 5 }));
  expect(rest).toMatchObject({ nextSeq: log.length, done: true });
  expect(rest.events).toEqual(log.slice(5));
  const past = check("session/read", await client.sessionRead({ sessionId: a, fromSeq: 999 }));
  expect(past).toMatchObject({ events: [], nextSeq: 999, done: true });

  const seeded = check(
    "session/create",
    await client.sessionCreate({
      sessionId: `${prefix}-seeded`,
      seed: simpleTurn(0, 1),
      meta: { createdAt: TIME, parentSession: a, seedLength: 2 },
    }),
  );
  expect(seeded.header).toMatchObject({ createdAt: TIME, parentSession: a, seedLength: 2 });

  const fresh = check(
    "session/new",
    await client.sessionNew({ cwd: "/w/b", mcpServers: [], _meta: { x: 1 }, later: true }),
  );
  expect(fresh.sessionId).toMatch(/^[0-9a-f-]{36}$/);

  const boundary = firstTurnEnd(log);
  const fork = check(
    "session/fork",
    await client.sessionFork({ sessionId: a, boundary, childSessionId: `${a}-child` }),
  );
  expect(fork.header).toMatchObject({
    id: `${a}-child`,
    parentSession: a,
    seedLength: boundary + 1,
    cwd: "/w/a",
  });
  // The updates go out as session/update notifications before the answer (this client ignores them).
  const loaded = check(
    "session/load",
    await client.sessionLoad({ sessionId: `${a}-child`, cwd: "/w/load", mcpServers: [] }),
  );
  expect(loaded._meta.seedline.nextSeq).toBe(boundary + 1);

  const listed = check("session/list", await client.sessionList({ cwd: "/w/a" }));
  const ids = listed.sessions.map((s) => s.sessionId);
  expect(ids).toEqual(expect.arrayContaining([a, `${a}-child`]));
  expect(ids).not.toContain(fresh.sessionId);
  const entry = listed.sessions.find((s) => s.sessionId === a);
  expect(entry).toMatchObject({ cwd: "/w/a", eventCount: log.length, header: created.header });
  expect(entry?.updatedAt).toBe(new Date(TIME).toISOString());
  const children = check(
    "session/list",
    await client.sessionList({ parentSession: a, order: "created" }),
  );
  // Newest first by creation: the fork is newer than the seeded session, created at TIME.
  expect(children.sessions.map((s) => s.sessionId)).toEqual([`${a}-child`, `${prefix}-seeded`]);
  const first = check("session/list", await client.sessionList({ cwd: "/w/a", limit: 1 }));
  expect(first.sessions).toHaveLength(1);
  expect(first.nextCursor).toEqual(expect.any(String));
  const second = check(
    "session/list",
    await client.sessionList({ cwd: "/w/a", limit: 1, cursor: first.nextCursor as string }),
  );
  expect(second.sessions.map((s) => s.sessionId)).not.toEqual(
    first.sessions.map((s) => s.sessionId),
  );

  check("session/set_title", await client.sessionSetTitle({ sessionId: a, title: "Titled 🚀" }));
  const titled = check("session/list", await client.sessionList({ cwd: "/w/a" }));
  expect(titled.sessions.find((s) => s.sessionId === a)?.title).toBe("Titled 🚀");
  check("session/set_title", await client.sessionSetTitle({ sessionId: a, title: null }));
  const untitled = check("session/list", await client.sessionList({ cwd: "/w/a" }));
  expect(untitled.sessions.find((s) => s.sessionId === a)?.title).not.toBe("Titled 🚀");
  const found = check("session/search", await client.sessionSearch({ query: "a", cwd: "/w/a" }));
  expect(found.results.map((r) => r.sessionId)).toEqual(expect.arrayContaining([a]));

  // A tool-call turn recorded in two requests: the recorder numbers and assembles the rest.
  const recordedId = `${prefix}-recorded`;
  await client.sessionCreate({ sessionId: recordedId, cwd: "/w/r" });
  const open = check(
    "session/record",
    await client.sessionRecord({
      sessionId: recordedId,
      ops: [
        { op: "turn_start", prompt: "list files" },
        { op: "step_start" },
        {
          op: "chunks",
          chunks: [
            { type: "tool-call-delta", index: 0, id: "c1", name: "ls", argumentsDelta: "{}" },
            { type: "finish", reason: { kind: "tool-calls" } },
          ],
        },
      ],
    }),
  );
  expect(open).toEqual({
    nextSeq: 7,
    lastTurn: 1,
    turn: 1,
    step: 1,
    finished: true,
    pendingToolCalls: [{ callId: "c1", name: "ls", arguments: "{}" }],
  });
  // Held for writing by this server, its turn open: nothing to repair.
  const reopened = check("session/open", await client.sessionOpen({ sessionId: recordedId }));
  expect(reopened).toEqual({ nextSeq: 7, openTurn: 1, repaired: false });
  const closed = check(
    "session/record",
    await client.sessionRecord({
      sessionId: recordedId,
      ops: [
        { op: "tool_result", callId: "c1", content: "a.txt" },
        { op: "step_end" },
        { op: "turn_end" },
      ],
    }),
  );
  expect(closed).toEqual({ nextSeq: 10, lastTurn: 1, finished: false, pendingToolCalls: [] });

  const messages = check("session/messages", await client.sessionMessages({ sessionId: a }));
  expect(messages.messages.length).toBeGreaterThan(0);
  const early = check(
    "session/messages",
    await client.sessionMessages({ sessionId: a, throughSeq: 1 }),
  );
  expect(early.messages).toHaveLength(1);

  const watched = check(
    "session/watch",
    await client.sessionWatch({ sessionId: a, fromSeq: log.length - 2 }),
  );
  expect(watched.nextSeq).toBe(log.length - 2);
  check("session/unwatch", await client.sessionUnwatch({ watchId: watched.watchId }));
  const tail = client.watch(a, { fromSeq: log.length - 2 });
  expect((await tail.ready).nextSeq).toBe(log.length - 2);
  const delivered = await tail.next();
  expect(delivered.value?.events).toEqual(log.slice(-2));
  await tail.return();

  const exported = check("session/export", await client.sessionExport({ sessionId: a }));
  expect(exported.log).toBe(logText(created.header, log));
  const copy = check(
    "session/import",
    await client.sessionImport({ log: exported.log, sessionId: `${a}-copy` }),
  );
  expect(copy.header).toEqual({ ...created.header, id: `${a}-copy` });
  expect((await client.sessionRead({ sessionId: `${a}-copy` })).events).toEqual(log);
  check("session/delete", await client.sessionDelete({ sessionId: `${a}-copy` }));
  await expectCode(client.sessionRead({ sessionId: `${a}-copy` }), "SESSION_NOT_FOUND");

  // Replay over a recorded tree, imported with its ids (the store may be shared: import once).
  const tree = CORPUS_TREE;
  for (const text of tree.logs) {
    await client.sessionImport({ log: text }).catch((error: unknown) => {
      if (!(error instanceof RpcResponseError && error.is("SESSION_ALREADY_EXISTS"))) throw error;
    });
  }
  const script = check("replay/script", await client.replayScript({ sessionId: tree.child }));
  expect(script).toMatchObject({ sessionId: tree.child, seedLength: tree.childSeedLength });
  expect(script.entries).toHaveLength(1);
  const scripts = check("replay/scripts", await client.replayScripts({ sessionId: tree.primary }));
  expect(scripts.scripts.map((s) => [s.sessionId, s.primary, s.entries.length])).toEqual([
    [tree.primary, true, 3],
    [tree.child, false, 1],
  ]);
  const opened = check("replay/open", await client.replayOpen({ sessionId: tree.primary }));
  expect(opened.scripts).toBe(2);
  const caller = `${prefix}-caller`;
  for (const index of [0, 1, 2]) {
    const next = check(
      "replay/next",
      await client.replayNext({ replayId: opened.replayId, callerSessionId: caller }),
    );
    expect(next).toMatchObject({ index, sessionId: tree.primary });
    expect(next.entry).toEqual(scripts.scripts[0]?.entries[index]);
  }
  const sub = check(
    "replay/next",
    await client.replayNext({ replayId: opened.replayId, callerSessionId: `${caller}-sub` }),
  );
  expect(sub).toMatchObject({ index: 0, sessionId: tree.child });
  check("replay/close", await client.replayClose({ replayId: opened.replayId }));

  expect([...called].sort()).toEqual([...RPC_METHOD_NAMES].sort());
}

/**
 * Provokes every domain error a client can cause on one server (SESSION_BUSY, which needs a
 * second writer, and INTERNAL, which needs a bug, aside) and checks code, number and data.
 * Returns the codes seen.
 */
export async function everyErrorScenario(
  client: SeedlineClient,
  prefix: string,
): Promise<Set<RpcErrorCode>> {
  const seen = new Set<RpcErrorCode>();
  const expectError = async (promise: Promise<unknown>, code: RpcErrorCode) => {
    const error = await expectCode(promise, code);
    seen.add(code);
    return error;
  };
  const s = `${prefix}-s`;
  const log = simpleTurn(0, 1, { chunksPerStep: 1 });

  const missing = await expectError(
    client.sessionRead({} as unknown as { sessionId: string }),
    "INVALID_PARAMS",
  );
  expect(missing.data).toEqual({
    code: "INVALID_PARAMS",
    errors: [{ instancePath: "", message: "must have required property 'sessionId'" }],
  });
  const unknown = await expectError(
    client.sessionAppend({ sessionId: s, events: [], sessionID: "x" } as never),
    "INVALID_PARAMS",
  );
  expect(unknown.data).toMatchObject({
    errors: [{ instancePath: "", message: expect.stringContaining("sessionID") }],
  });
  const negative = await expectError(
    client.sessionFork({ sessionId: s, boundary: -1 }),
    "INVALID_PARAMS",
  );
  expect(negative.data).toMatchObject({ errors: [{ instancePath: "/boundary" }] });

  const notFound = await expectError(
    client.sessionRead({ sessionId: `${s}-none` }),
    "SESSION_NOT_FOUND",
  );
  expect(notFound.data).toEqual({ code: "SESSION_NOT_FOUND", sessionId: `${s}-none` });

  await client.sessionCreate({ sessionId: s, cwd: "/w" });
  // A lone surrogate, which SQLite and PostgreSQL would store as U+FFFD (failed before: the title
  // was stored, as something else on those backends than on JSONL).
  const lone = await expectError(
    client.sessionSetTitle({ sessionId: s, title: "lone \uD800" }),
    "INVALID_PARAMS",
  );
  expect(lone.data).toMatchObject({
    errors: expect.arrayContaining([expect.objectContaining({ instancePath: "/title" })]),
  });
  const taken = await expectError(client.sessionCreate({ sessionId: s }), "SESSION_ALREADY_EXISTS");
  expect(taken.data).toEqual({ code: "SESSION_ALREADY_EXISTS", sessionId: s });

  await client.sessionAppend({ sessionId: s, events: log });
  const conflict = await expectError(
    client.sessionAppend({ sessionId: s, events: simpleTurn(99, 2) }),
    "SEQ_CONFLICT",
  );
  expect(conflict.data).toEqual({ code: "SEQ_CONFLICT", expectedSeq: log.length });

  const broken = { ...simpleTurn(log.length, 2)[0], data: {} };
  const invalid = await expectError(
    client.sessionAppend({ sessionId: s, events: [broken] }),
    "INVALID_EVENT",
  );
  expect(invalid.data).toMatchObject({
    code: "INVALID_EVENT",
    seq: log.length,
    index: 0,
    rule: "schema",
    instancePath: expect.stringMatching(/^\/events\/0\//),
  });
  const [start, prompt] = simpleTurn(log.length, 2);
  const secondBad = await expectError(
    client.sessionAppend({ sessionId: s, events: [start ?? {}, { ...prompt, seq: 7 }] }),
    "INVALID_EVENT",
  );
  expect(secondBad.data).toMatchObject({ index: 1, instancePath: "/events/1/seq" });

  const boundary = await expectError(
    client.sessionFork({ sessionId: s, boundary: 999 }),
    "INVALID_BOUNDARY",
  );
  expect(boundary.data).toEqual({
    code: "INVALID_BOUNDARY",
    boundary: 999,
    lastSeq: log.length - 1,
  });
  const open = await expectError(client.sessionFork({ sessionId: s, boundary: 1 }), "OPEN_TURN");
  expect(open.data).toEqual({ code: "OPEN_TURN", boundary: 1, turn: 1, after: log.length - 1 });

  const v1 = await expectError(
    client.sessionImport({
      log: `${JSON.stringify({ type: "session", version: 1, id: `${s}-v1`, createdAt: 1 })}\n`,
    }),
    "FORMAT_UNSUPPORTED",
  );
  expect(v1.data).toMatchObject({ code: "FORMAT_UNSUPPORTED", found: 1, supported: 0 });
  const lines = logText({ version: 0, id: `${s}-bad`, createdAt: 1 }, log).split("\n");
  lines[3] = "{not json";
  const corrupt = await expectError(client.sessionImport({ log: lines.join("\n") }), "CORRUPT_LOG");
  expect(corrupt.data).toMatchObject({ code: "CORRUPT_LOG", line: 4 });

  // A step whose last chunk is not `finish` has no faithful replay.
  const incomplete = await expectError(client.replayScript({ sessionId: s }), "REPLAY_INCOMPLETE");
  expect(incomplete.data).toEqual({ code: "REPLAY_INCOMPLETE", sessionId: s, turn: 1, step: 1 });
  await expectError(client.replayOpen({ sessionId: s }), "REPLAY_INCOMPLETE");

  // Chunks with no open turn: refused, nothing stored.
  const refused = await expectError(
    client.sessionRecord({
      sessionId: `${s}-none`,
      ops: [{ op: "chunks", chunks: [{ type: "finish", reason: { kind: "stop" } }] }],
    }),
    "SESSION_NOT_FOUND",
  );
  expect(refused.data).toEqual({ code: "SESSION_NOT_FOUND", sessionId: `${s}-none` });
  const recordInto = `${s}-rec`;
  await client.sessionCreate({ sessionId: recordInto });
  const outOfOrder = await expectError(
    client.sessionRecord({
      sessionId: recordInto,
      ops: [{ op: "turn_start", prompt: "hi" }, { op: "step_end" }],
    }),
    "RECORD_REFUSED",
  );
  expect(outOfOrder.data).toEqual({
    code: "RECORD_REFUSED",
    sessionId: recordInto,
    index: 1,
    expected: "an open step of turn 1 (step_start first)",
    found: "none",
  });
  expect((await client.sessionRead({ sessionId: recordInto })).events).toEqual([]);

  const tree = CORPUS_TREE;
  for (const text of tree.logs) {
    await client.sessionImport({ log: text }).catch((error: unknown) => {
      if (!(error instanceof RpcResponseError && error.is("SESSION_ALREADY_EXISTS"))) throw error;
    });
  }
  const { replayId } = await client.replayOpen({
    sessionId: tree.primary,
    overrides: { [tree.child]: [{ kind: "hang", chunks: [] }] },
  });
  for (let i = 0; i < 3; i++) await client.replayNext({ replayId, callerSessionId: "main" });
  const exhausted = await expectError(
    client.replayNext({ replayId, callerSessionId: "main" }),
    "REPLAY_EXHAUSTED",
  );
  expect(exhausted.data).toEqual({
    code: "REPLAY_EXHAUSTED",
    sessionId: tree.primary,
    callerSessionId: "main",
  });
  expect(await client.replayNext({ replayId, callerSessionId: "sub" })).toMatchObject({
    entry: { kind: "hang" },
    sessionId: tree.child,
  });
  const unexpected = await expectError(
    client.replayNext({ replayId, callerSessionId: "third" }),
    "REPLAY_UNEXPECTED_SESSION",
  );
  expect(unexpected.data).toEqual({ code: "REPLAY_UNEXPECTED_SESSION", callerSessionId: "third" });
  await client.replayClose({ replayId });
  const gone = await expectError(
    client.replayNext({ replayId, callerSessionId: "main" }),
    "REPLAY_NOT_FOUND",
  );
  expect(gone.data).toEqual({ code: "REPLAY_NOT_FOUND", replayId });
  await expectError(client.replayClose({ replayId }), "REPLAY_NOT_FOUND");
  return seen;
}
