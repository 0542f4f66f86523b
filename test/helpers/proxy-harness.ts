// The proxy tests' one harness, for every API: the real captured bodies, a fake upstream serving them, the official SDKs, and record → stop the upstream → replay through seedlineFetch or the spawned `seedline proxy`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect } from "vitest";
import {
  type ProxyMode,
  type SeedlineFetch,
  SessionStore,
  SqliteBackend,
  seedlineFetch,
} from "../../src/index.js";
import { startSeedline } from "./cli-harness.js";
import { runCliHere } from "./cli-in-process.js";
import { atFileEnd } from "./file-end.js";

/** A model API the proxy records, named as `ModelRequest.api` names it. */
export type Api = "openai-chat" | "openai-responses" | "anthropic-messages";

/** The provider of an API: its base URL's shape and the proxy's route prefix. */
export type Provider = "openai" | "anthropic";

const PROVIDER: Record<Api, Provider> = {
  "openai-chat": "openai",
  "openai-responses": "openai",
  "anthropic-messages": "anthropic",
};

// ---------------------------------------------------------------------------------------------
// The real captured bodies (read where they are; never copied into the repository).

const REAL = join(import.meta.dirname, "..", "..", "..", "shared", "fixtures-real");
const OPENAI_SSE = join(REAL, "openai-sse", "pydantic-ai");
const OPENAI_AI_SDK = join(REAL, "openai-sse", "ai-sdk");
const ANTHROPIC_SSE = join(REAL, "anthropic-sse");

/** Whether each API's captures are there (CI checks them out beside the repository). */
export const HAVE: Record<Api, boolean> = {
  "openai-chat": existsSync(join(OPENAI_SSE, "chat_text_stream.sse")),
  "openai-responses":
    existsSync(join(OPENAI_SSE, "responses_text_stream.sse")) &&
    existsSync(join(OPENAI_AI_SDK, "responses-openai-custom-tool.1.chunks.txt")),
  "anthropic-messages": existsSync(join(ANTHROPIC_SSE, "pydantic-ai", "thinking_part_stream.sse")),
};

/** A describe block of tests that read `api`'s captures: skipped where they are absent, its title saying why. */
export function describeWith(api: Api, title: string, body: () => void): void {
  const folder = PROVIDER[api] === "openai" ? "openai-sse" : "anthropic-sse";
  const why = HAVE[api] ? "" : ` (skipped: ../shared/fixtures-real/${folder} is absent)`;
  describe.skipIf(!HAVE[api])(`${title}${why}`, body);
}

/** A pydantic-ai OpenAI capture (raw SSE: Chat Completions, or Responses with named events), by file name. */
export function openaiSse(name: string): string {
  return readFileSync(join(OPENAI_SSE, name), "utf8");
}

/** One JSON data payload (a line of an AI SDK capture, whose SSE framing was stripped) framed as the API sends it: an event named by its `type`. */
function framed(line: string): string {
  return `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`;
}

function payloadLines(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/**
 * An Anthropic capture as SSE, by its path below `anthropic-sse/`; a `*.chunks.txt` (one JSON
 * data payload a line) framed again as the API sends it.
 */
export function anthropicSse(name: string): string {
  const path = join(ANTHROPIC_SSE, name);
  return name.endsWith(".chunks.txt")
    ? payloadLines(path).map(framed).join("")
    : readFileSync(path, "utf8");
}

/**
 * An AI SDK Responses capture framed as the API sends it; a file holding several responses (a
 * multi-step run) gives one body per response.
 */
export function aiSdkResponses(name: string): string[] {
  const bodies: string[] = [];
  for (const line of payloadLines(join(OPENAI_AI_SDK, name))) {
    const type = (JSON.parse(line) as { type: string }).type;
    if (type === "response.created" || bodies.length === 0) bodies.push("");
    bodies[bodies.length - 1] += framed(line);
  }
  return bodies;
}

type Json = Record<string, unknown>;

/** The JSON payloads of an SSE body's `data:` lines (`[DONE]` aside). */
function payloads(body: string): Json[] {
  return body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "[DONE]")
    .map((line) => JSON.parse(line.slice(5)) as Json);
}

/** A Chat Completions SSE body folded into the JSON body the API answers without streaming. */
function foldChat(body: string): Json {
  const events = payloads(body);
  const first = events[0] as Json;
  let content = "";
  let finish: unknown = null;
  let usage: unknown;
  const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
  for (const event of events) {
    if (event.usage) usage = event.usage;
    for (const choice of (event.choices as Json[]) ?? []) {
      const delta = (choice.delta ?? {}) as Json;
      if (typeof delta.content === "string") content += delta.content;
      for (const call of (delta.tool_calls as Json[]) ?? []) {
        const index = call.index as number;
        const fn = (call.function ?? {}) as Json;
        calls[index] ??= {
          id: String(call.id),
          type: "function",
          function: { name: "", arguments: "" },
        };
        const target = calls[index];
        if (typeof fn.name === "string") target.function.name = fn.name;
        if (typeof fn.arguments === "string") target.function.arguments += fn.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return {
    id: first.id,
    object: "chat.completion",
    created: first.created,
    model: first.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: content === "" ? null : content,
          refusal: null,
          ...(calls.length === 0 ? {} : { tool_calls: calls }),
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage,
    service_tier: first.service_tier,
    system_fingerprint: first.system_fingerprint,
  };
}

/** The response object a streamed Responses body ends with: what the API answers when not streaming. */
function foldResponses(body: string): unknown {
  const last = payloads(body).findLast((p) =>
    ["response.completed", "response.incomplete", "response.failed"].includes(p.type as string),
  );
  return last?.response;
}

/** A Messages SSE body folded into the JSON message the API answers without streaming. */
function foldMessages(body: string): Json {
  let message: Json = {};
  const content: Json[] = [];
  const json = new Map<number, string>();
  for (const event of payloads(body)) {
    const index = event.index as number;
    if (event.type === "message_start") message = { ...(event.message as Json) };
    else if (event.type === "content_block_start")
      content[index] = { ...(event.content_block as Json) };
    else if (event.type === "content_block_delta") {
      const d = event.delta as Json;
      const block = content[index] as Json;
      if (d.type === "text_delta") block.text = String(block.text) + String(d.text);
      else if (d.type === "thinking_delta")
        block.thinking = String(block.thinking) + String(d.thinking);
      else if (d.type === "signature_delta") block.signature = d.signature;
      else if (d.type === "input_json_delta")
        json.set(index, (json.get(index) ?? "") + String(d.partial_json));
      else if (d.type === "citations_delta")
        block.citations = [...((block.citations as unknown[]) ?? []), d.citation];
      else block.content = d.content;
    } else if (event.type === "content_block_stop") {
      const text = json.get(index);
      if (text !== undefined && text !== "") (content[index] as Json).input = JSON.parse(text);
    } else if (event.type === "message_delta") {
      Object.assign(message, event.delta);
      message.usage = { ...(message.usage as Json), ...(event.usage as Json) };
    }
  }
  return { ...message, content };
}

// ---------------------------------------------------------------------------------------------
// The fake upstream.

/** The model-call path of each API at the fake upstream, and how it folds a stream for a caller that does not stream. */
const MODEL_CALLS: Record<string, (sse: string) => unknown> = {
  "/v1/chat/completions": foldChat,
  "/v1/responses": foldResponses,
  "/v1/messages": foldMessages,
};

/** What the fake upstream answers to one call. */
export type FakeAnswer =
  | { readonly sse: string }
  | { readonly status: number; readonly json: unknown }
  /** Sends the first `bytes` of an SSE body, then destroys the connection. */
  | { readonly sse: string; readonly breakAfter: number }
  /** Sends the first piece of an SSE body, the rest once `hold` resolves. */
  | { readonly sse: string; readonly hold: Promise<void> };

/** One request the fake upstream received. */
export interface SeenRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface FakeUpstream {
  /** The provider's base URL: `http://127.0.0.1:PORT/v1` for OpenAI, `http://127.0.0.1:PORT` for Anthropic (its SDK adds `/v1/messages`). */
  readonly baseUrl: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Starts a fake provider API on 127.0.0.1 answering each model call (Chat Completions, Responses
 * or Messages) with `answers` in order: an SSE body as the real API streamed it (written in
 * several pieces, as a network delivers it), or, when the caller did not ask to stream, the same
 * response folded into the one JSON body the real API answers then. `/v1/models` answers a small
 * model list; any other path 404.
 */
export async function startFakeUpstream(
  answers: readonly FakeAnswer[],
  provider: Provider = "openai",
): Promise<FakeUpstream> {
  const queue = [...answers];
  const seen: SeenRequest[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
      seen.push({ url: req.url ?? "", headers: req.headers, body });
      const path = (req.url ?? "").split("?")[0] as string;
      const fold = MODEL_CALLS[path];
      if (fold === undefined) {
        if (path === "/v1/models") {
          json(res, 200, { object: "list", data: [{ id: "gpt-4o-mini", object: "model" }] });
        } else {
          json(res, 404, { type: "error", error: { type: "not_found_error", message: path } });
        }
        return;
      }
      const answer = queue.shift();
      if (answer === undefined) {
        json(res, 500, { error: { message: "the fake upstream has no more answers" } });
      } else if ("status" in answer) {
        json(res, answer.status, answer.json);
      } else if (body.stream !== true) {
        json(res, 200, fold(answer.sse));
      } else if ("breakAfter" in answer) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(answer.sse.slice(0, answer.breakAfter), () => res.destroy());
      } else {
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
        void writeInPieces(res, answer.sse, "hold" in answer ? answer.hold : undefined);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${provider === "openai" ? "/v1" : ""}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function writeInPieces(
  res: ServerResponse,
  text: string,
  hold: Promise<void> | undefined,
): Promise<void> {
  const size = Math.ceil(text.length / 5);
  for (let at = 0; at < text.length; at += size) {
    res.write(text.slice(at, at + size));
    if (at === 0 && hold !== undefined) await hold;
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

// ---------------------------------------------------------------------------------------------
// SDK clients, seedline in front of the upstream, and the checks every recorded session gets.

/** How a test makes an SDK client of a provider: at a base URL, with a key, through a fetch. */
export interface Sdk<C> {
  readonly provider: Provider;
  client(baseURL: string, apiKey: string, fetch: typeof globalThis.fetch): C;
}

export const OPENAI_SDK: Sdk<OpenAI> = {
  provider: "openai",
  client: (baseURL, apiKey, fetch) => new OpenAI({ apiKey, baseURL, fetch, maxRetries: 0 }),
};

export const ANTHROPIC_SDK: Sdk<Anthropic> = {
  provider: "anthropic",
  client: (baseURL, apiKey, fetch) => new Anthropic({ apiKey, baseURL, fetch, maxRetries: 0 }),
};

/** Where seedline runs: in process (`seedlineFetch`) or as the spawned `seedline proxy`. */
export type Transport = "fetch" | "proxy";

/** The seedline headers of one answer. */
export interface SeenHeaders {
  readonly session: string | null;
  readonly replayed: string | null;
}

/** seedline in one mode in front of an upstream, as a client reaches it. */
export interface Seedline {
  /** The SDK's base URL: the upstream's for `seedlineFetch`, the proxy's route for the proxy. */
  readonly baseUrl: string;
  /** The fetch to give the SDK; it notes each answer's seedline headers in {@link seen}. */
  readonly fetch: typeof globalThis.fetch;
  readonly seen: SeenHeaders[];
  /** The sessions in call order: each answer's `x-seedline-session`, once each. */
  sessions(): string[];
  /** `seedlineFetch`'s own list of the sessions it recorded into or replayed from (the proxy has none). */
  readonly sessionIds?: () => Promise<string[]>;
  /** Stops seedline durably (`close()`, or the signal, SIGTERM by default, and exit 0). */
  stop(signal?: "SIGTERM" | "SIGINT"): Promise<void>;
}

export interface SeedlineOptions {
  readonly transport: Transport;
  readonly mode: ProxyMode;
  /** The store: a SQLite file, opened here for `seedlineFetch` unless `store` is given. */
  readonly db: string;
  readonly store?: SessionStore;
  readonly sessionId?: string;
  /** Where the proxy is told the session: `--session` (the default) or the base URL's `/s/ID/`. */
  readonly sessionIn?: "option" | "path";
  readonly provider: Provider;
  /** The upstream's base URL (record and auto modes). */
  readonly upstream?: string;
}

/** Starts seedline in front of an upstream: `seedlineFetch` on the store, or `seedline proxy` spawned on it. */
export async function startSeedlineProxy(options: SeedlineOptions): Promise<Seedline> {
  const seen: SeenHeaders[] = [];
  const noting =
    (inner: typeof globalThis.fetch): typeof globalThis.fetch =>
    async (input, init) => {
      const response = await inner(input, init);
      seen.push({
        session: response.headers.get("x-seedline-session"),
        replayed: response.headers.get("x-seedline-replayed"),
      });
      return response;
    };
  const sessions = () => [...new Set(seen.flatMap((s) => (s.session === null ? [] : [s.session])))];
  const { provider, sessionId } = options;
  const inPath = options.sessionIn === "path" && sessionId !== undefined;
  if (options.transport === "fetch") {
    const own = options.store === undefined;
    const store = options.store ?? (await openStore(options.db));
    const inner: SeedlineFetch = seedlineFetch({
      store,
      mode: options.mode,
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    });
    return {
      baseUrl: options.upstream ?? `http://127.0.0.1:9${provider === "openai" ? "/v1" : ""}`,
      fetch: noting(inner),
      seen,
      sessions,
      sessionIds: () => inner.sessionIds(),
      stop: async () => {
        await inner.close();
        if (own) await store.close();
      },
    };
  }
  const proxy = startSeedline([
    "proxy",
    "--store",
    `sqlite:${options.db}`,
    "--mode",
    options.mode,
    ...(sessionId === undefined || inPath ? [] : ["--session", sessionId]),
    ...(options.upstream === undefined ? [] : [`--upstream-${provider}`, options.upstream]),
  ]);
  await proxy.waitFor("its address", (out) =>
    /seedline proxy: http:\/\/127\.0\.0\.1:\d+\n/.test(out),
  );
  const url = /seedline proxy: (\S+)/.exec(proxy.stdout())?.[1] as string;
  return {
    // OPENAI_BASE_URL=http://127.0.0.1:PORT/openai/v1, ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/anthropic
    baseUrl: `${url}${inPath ? `/s/${sessionId}` : ""}/${provider === "openai" ? "openai/v1" : "anthropic"}`,
    fetch: noting(globalThis.fetch.bind(globalThis)),
    seen,
    sessions,
    stop: async (signal = "SIGTERM") => {
      proxy.child.kill(signal);
      expect(await proxy.exited, proxy.stderr()).toBe(0);
    },
  };
}

export async function openStore(db: string): Promise<SessionStore> {
  return new SessionStore({ backend: await SqliteBackend.open(db) });
}

/** The folder of this test file's stores, made on first use and removed after its tests. */
let scratchDir: string | undefined;

/** A new SQLite store's path, in a folder of its own (which then holds only the store's files). */
export function newDb(): string {
  if (scratchDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "seedline-proxy-"));
    scratchDir = dir;
    atFileEnd(() => {
      rmSync(dir, { recursive: true, force: true });
      scratchDir = undefined;
    });
  }
  return join(mkdtempSync(join(scratchDir, "store-")), "store.db");
}

/** The API key the tests' recording clients send: never to be found in a store. */
export const KEY = "sk-test-never-stored-4b1c9e";

/** Checks that no file of the store at `db` (the database and its journal) holds the key or a bearer header. */
export function expectNoCredential(db: string, key = KEY): void {
  const folder = dirname(db);
  const bytes = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(folder, entry.name)).toString("latin1"))
    .join("");
  expect(bytes).not.toContain(key);
  expect(bytes.toLowerCase()).not.toContain("bearer");
}

/**
 * The checks of a run whose replay must give what the recording gave: the same SDK results, no
 * credential in the store and a session `seedline validate --replayable` accepts. Closes the store.
 */
export async function expectFaithful<T>(run: RecordedRun<T>): Promise<void> {
  expect(run.replayed).toEqual(run.recorded);
  await run.store.close();
  expectNoCredential(run.db);
  await validateReplayable(`sqlite:${run.db}`, run.id);
}

/**
 * `seedline validate --replayable` on a session exported from the store (`seedline export`): both
 * commands run in this process (their exit status and output are what is checked), not spawned.
 */
export async function validateReplayable(storeUrl: string, id: string): Promise<void> {
  const exported = await runCliHere(["export", id, "--store", storeUrl]);
  expect(exported.status, exported.stderr).toBe(0);
  const dir = mkdtempSync(join(tmpdir(), "seedline-validate-"));
  try {
    const file = join(dir, `${id}.jsonl`);
    writeFileSync(file, exported.stdout);
    const run = await runCliHere(["validate", "--replayable", file]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What {@link recordThenReplay} gives: both runs' results, and the recorded session on its (open) store. */
export interface RecordedRun<T> {
  readonly recorded: T;
  readonly replayed: T;
  readonly store: SessionStore;
  readonly db: string;
  readonly id: string;
  readonly upstream: FakeUpstream;
}

export interface RecordThenReplayOptions<C, T> {
  readonly sdk: Sdk<C>;
  readonly answers: readonly FakeAnswer[];
  /** The store's file (default: a new one, see {@link newDb}). */
  readonly db?: string;
  /** What the agent does against a client: its SDK-level results. */
  readonly drive: (client: C) => Promise<T>;
  /** What it does against the replaying client (default `drive`). */
  readonly replayDrive?: (client: C) => Promise<T>;
  readonly transport?: Transport;
  /** The session to record into (default: a new one). */
  readonly sessionId?: string;
  /** Where the spawned proxy is told the session (see {@link SeedlineOptions}). */
  readonly sessionIn?: "option" | "path";
}

/**
 * Records `drive` through seedline against the fake upstream serving `answers`, stops seedline
 * and the upstream, then replays `replayDrive` from the store through a new seedline in replay
 * mode — which, the upstream gone, can only answer from the recording.
 */
export async function recordThenReplay<C, T>(
  options: RecordThenReplayOptions<C, T>,
): Promise<RecordedRun<T>> {
  const { sdk, db = newDb(), transport = "fetch" } = options;
  const upstream = await startFakeUpstream(options.answers, sdk.provider);
  const common = {
    transport,
    db,
    provider: sdk.provider,
    ...(options.sessionIn === undefined ? {} : { sessionIn: options.sessionIn }),
  };
  const recording = await startSeedlineProxy({
    ...common,
    mode: "record",
    upstream: upstream.baseUrl,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
  const recorded = await options.drive(sdk.client(recording.baseUrl, KEY, recording.fetch));
  await recording.stop();
  await upstream.close();
  const id = options.sessionId ?? (recording.sessions()[0] as string);
  expect(recording.sessions()).toEqual([id]);
  const replaying = await startSeedlineProxy({ ...common, mode: "replay", sessionId: id });
  const replayed = await (options.replayDrive ?? options.drive)(
    sdk.client(replaying.baseUrl, "unused", replaying.fetch),
  );
  await replaying.stop("SIGINT");
  return { recorded, replayed, store: await openStore(db), db, id, upstream };
}
