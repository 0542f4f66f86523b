// The model proxy on OpenAI Chat Completions: the official SDK recorded through seedlineFetch and `seedline proxy`, then replayed offline.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStore, SqliteBackend, seedlineFetch } from "../src/index.js";

async function openStore(db: string): Promise<SessionStore> {
  return new SessionStore({ backend: await SqliteBackend.open(db) });
}

import { seedline, startSeedline } from "./cli-harness.js";
import { type FakeAnswer, HAVE_FIXTURES, sse, startFakeUpstream } from "./proxy-harness.js";

const KEY = "sk-test-never-stored-4b1c9e";
const SKIP = "(skipped: ../shared/fixtures-real/openai-sse is absent)";

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_capital",
      description: "The capital of a country.",
      parameters: {
        type: "object",
        properties: { country: { type: "string" } },
        required: ["country"],
      },
    },
  },
];

/** The SDK-level result of one call: what an agent reads. */
function resultOf(completion: ChatCompletion) {
  const choice = completion.choices[0];
  return {
    id: completion.id,
    model: completion.model,
    text: choice?.message.content ?? null,
    toolCalls: (choice?.message.tool_calls ?? []).map((c) =>
      c.type === "function"
        ? { id: c.id, name: c.function.name, arguments: c.function.arguments }
        : { id: c.id, name: c.custom.name, arguments: c.custom.input },
    ),
    finishReason: choice?.finish_reason,
    usage: completion.usage,
  };
}

/**
 * Two calls of one turn, as an agent makes them: the question (answered with a tool call), then
 * the tool's result sent back (answered with text). Each request is built from what the SDK
 * returned, so replay must render what the agent re-sends exactly as it was recorded.
 */
async function conversation(client: OpenAI, stream: boolean) {
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: "Answer briefly." },
    { role: "user", content: "What is the capital of the UK?" },
  ];
  const results: ReturnType<typeof resultOf>[] = [];
  for (let call = 0; call < 2; call++) {
    const params = { model: "gpt-4o-mini", messages, tools: TOOLS, temperature: 0 };
    const completion = stream
      ? await client.chat.completions
          .stream({ ...params, stream: true, stream_options: { include_usage: true } })
          .finalChatCompletion()
      : await client.chat.completions.create(params);
    results.push(resultOf(completion));
    const message = completion.choices[0]?.message;
    if (message === undefined) break;
    messages.push(message);
    for (const toolCall of message.tool_calls ?? []) {
      messages.push({ role: "tool", tool_call_id: toolCall.id, content: "London" });
    }
  }
  return results;
}

const ANSWERS: FakeAnswer[] = HAVE_FIXTURES
  ? [{ sse: sse("chat_tool_call_stream.sse") }, { sse: sse("chat_text_stream.sse") }]
  : [];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "seedline-proxy-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every byte of the files in the store's folder (the database and its journal), for looking for a credential. */
function storeBytes(db: string): string {
  const folder = dirname(db);
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(folder, entry.name)).toString("latin1"))
    .join("");
}

/** `seedline validate --replayable` on a session exported from the store. */
function validateReplayable(storeUrl: string, id: string): void {
  const exported = seedline(["export", id, "--store", storeUrl]);
  expect(exported.status, exported.stderr).toBe(0);
  const file = join(dir, `${id}.jsonl`);
  writeFileSync(file, exported.stdout);
  const run = seedline(["validate", "--replayable", file]);
  expect(run.status, run.stdout + run.stderr).toBe(0);
}

describe.skipIf(!HAVE_FIXTURES)(
  `seedlineFetch with the OpenAI SDK ${HAVE_FIXTURES ? "" : SKIP}`,
  () => {
    for (const stream of [true, false]) {
      it(`records a tool-using turn ${stream ? "streamed" : "not streamed"} and replays it offline with the same SDK results`, async () => {
        const dbDir = mkdtempSync(join(dir, "fetch-"));
        const db = join(dbDir, "store.db");
        const store = await openStore(db);
        const upstream = await startFakeUpstream(ANSWERS);
        const recording = seedlineFetch({ store, mode: "record" });
        const recorded = await conversation(
          new OpenAI({ apiKey: KEY, baseURL: upstream.baseUrl, fetch: recording, maxRetries: 0 }),
          stream,
        );
        await recording.close();
        await upstream.close();
        const [id] = await recording.sessionIds();
        expect(id).toBeDefined();
        // The upstream got the caller's credentials; the store holds none of them.
        expect(upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

        const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
        const replayed = await conversation(
          new OpenAI({
            apiKey: "unused",
            baseURL: upstream.baseUrl,
            fetch: replaying,
            maxRetries: 0,
          }),
          stream,
        );
        expect(replayed).toEqual(recorded);
        expect(recorded[0]?.toolCalls[0]?.name).toBe("get_capital");
        expect(recorded[0]?.finishReason).toBe("tool_calls");
        expect(recorded[1]?.text).toMatch(/London/);
        expect(recorded[1]?.usage?.total_tokens).toBe(87);

        const events = await store.readEvents(id as string);
        const types = events.map((e) => e.type);
        expect(types.filter((t) => t === "turn/start")).toHaveLength(1);
        expect(types.filter((t) => t === "step/start")).toHaveLength(2);
        expect(types.filter((t) => t === "tool/result")).toHaveLength(1);
        expect(types.at(-1)).toBe("turn/end");
        await store.close();
        expect(storeBytes(db)).not.toContain(KEY);
        expect(storeBytes(db).toLowerCase()).not.toContain("bearer");
        validateReplayable(`sqlite:${db}`, id as string);
      });
    }

    it("answers a request that differs from the recording with 409 and a diff, and a call past the end with 409", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const upstream = await startFakeUpstream(ANSWERS);
      const recording = seedlineFetch({ store, mode: "record" });
      await conversation(
        new OpenAI({ apiKey: KEY, baseURL: upstream.baseUrl, fetch: recording }),
        true,
      );
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const client = new OpenAI({
        apiKey: "unused",
        baseURL: upstream.baseUrl,
        fetch: replaying,
        maxRetries: 0,
      });
      const changed = client.chat.completions.create({
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: "What is the capital of Spain?" },
        ],
        tools: TOOLS,
        temperature: 0,
      });
      await expect(changed).rejects.toMatchObject({ status: 409, code: "REPLAY_MISMATCH" });
      await expect(changed).rejects.toThrow(
        /message 2: recorded another user message, got user "What is the capital of Spain\?"/,
      );
      // The refused call did not advance the replay: the recorded conversation still replays whole.
      const replayed = await conversation(client, true);
      expect(replayed).toHaveLength(2);
      await expect(
        client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "more" }],
        }),
      ).rejects.toMatchObject({ status: 409, code: "REPLAY_EXHAUSTED" });
      await expect(
        client.chat.completions.create({ model: "gpt-4o-mini", messages: "not a list" as never }),
      ).rejects.toMatchObject({ status: 400, code: "INVALID_REQUEST" });
      await store.close();
    });

    it("records an upstream error as the turn's error with the provider's body, and replays the same error", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const body = {
        error: {
          message: "Rate limit reached for gpt-4o-mini",
          type: "requests",
          param: null,
          code: "rate_limit_exceeded",
        },
      };
      const upstream = await startFakeUpstream([{ status: 429, json: body }]);
      const recording = seedlineFetch({ store, mode: "record" });
      const client = new OpenAI({
        apiKey: KEY,
        baseURL: upstream.baseUrl,
        fetch: recording,
        maxRetries: 0,
      });
      const ask = () =>
        client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "hi" }],
        });
      await expect(ask()).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded" });
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      const end = events.at(-1);
      expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
        kind: "error",
        step: 1,
        code: "rate_limit_exceeded",
      });
      const stepEnd = events.find((e) => e.type === "step/end");
      expect(stepEnd?.type === "step/end" && stepEnd.data.response).toMatchObject({
        status: 429,
        error: body,
      });

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const again = new OpenAI({
        apiKey: "unused",
        baseURL: upstream.baseUrl,
        fetch: replaying,
        maxRetries: 0,
      });
      await expect(
        again.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "hi" }],
        }),
      ).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded" });
      await store.close();
      validateReplayable(`sqlite:${db}`, id as string);
    });

    it("replays a streamed recording to a caller that does not stream, with the same results", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const upstream = await startFakeUpstream(ANSWERS);
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await conversation(
        new OpenAI({ apiKey: KEY, baseURL: upstream.baseUrl, fetch: recording }),
        true,
      );
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const client = new OpenAI({ apiKey: "unused", baseURL: upstream.baseUrl, fetch: replaying });
      expect(await conversation(client, false)).toEqual(recorded);
      await store.close();
    });

    it("passes other paths through unrecorded, and records an unreachable upstream as the turn's error", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const upstream = await startFakeUpstream([]);
      const recording = seedlineFetch({ store, mode: "record", sessionId: "unreachable" });
      const client = new OpenAI({
        apiKey: KEY,
        baseURL: upstream.baseUrl,
        fetch: recording,
        maxRetries: 0,
      });
      const models = await client.models.list();
      expect(models.data.map((m) => m.id)).toEqual(["gpt-4o-mini"]);
      expect(await store.get("unreachable")).toBeUndefined();
      await upstream.close();
      await expect(
        client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "hi" }],
        }),
      ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
      await recording.close();
      const events = await store.readEvents("unreachable");
      const end = events.at(-1);
      expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
        kind: "error",
        step: 1,
        message: expect.stringMatching(/^the upstream failed: /),
        // The request now leaves at once: it may meet the closed upstream's keep-alive socket
        // (UND_ERR_SOCKET) before the pool has seen it close, rather than a refused connection.
        code: expect.stringMatching(/^(ECONNREFUSED|UND_ERR_SOCKET)$/),
      });
      await store.close();
      validateReplayable(`sqlite:${db}`, "unreachable");
    });

    it("records an error event inside a 200 stream (reasoning deltas, then `event: error`) and replays it the same", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const upstream = await startFakeUpstream([
        { sse: sse("groq_tool_use_failed_error_streaming.0.sse") },
      ]);
      /** What the SDK gave: the reasoning streamed before the error, and the error. */
      const run = async (client: OpenAI) => {
        let reasoning = "";
        const stream = await client.chat.completions.create({
          model: "openai/gpt-oss-120b",
          messages: [{ role: "user", content: "call the tool" }],
          stream: true,
        });
        try {
          for await (const chunk of stream) {
            reasoning +=
              (chunk.choices[0]?.delta as { reasoning?: string } | undefined)?.reasoning ?? "";
          }
        } catch (error) {
          const e = error as InstanceType<typeof OpenAI.APIError>;
          return { reasoning, message: e.message, code: e.code, type: e.type };
        }
        return { reasoning, message: "no error" };
      };
      const recording = seedlineFetch({ store, mode: "record", sessionId: "groq" });
      const recorded = await run(
        new OpenAI({ apiKey: KEY, baseURL: upstream.baseUrl, fetch: recording, maxRetries: 0 }),
      );
      await recording.close();
      await upstream.close();
      expect(recorded).toMatchObject({ code: "tool_use_failed", type: "invalid_request_error" });
      expect(recorded.reasoning).toMatch(/^We need to call/);
      const events = await store.readEvents("groq");
      const end = events.at(-1);
      // Seen failing before the provider's error was made to win: recorded as aborted, because
      // the SDK aborts the request once it has thrown the error event.
      expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
        kind: "error",
        code: "tool_use_failed",
      });
      // `channel` (a delta member no chunk kind has) and the error event are kept, not dropped.
      const stepEnd = events.find((e) => e.type === "step/end");
      const unmapped = stepEnd?.type === "step/end" ? (stepEnd.data.response?.unmapped ?? []) : [];
      expect(unmapped.some((u) => JSON.stringify(u.event).includes('"channel":"analysis"'))).toBe(
        true,
      );
      expect(unmapped.at(-1)?.event).toMatchObject({
        sseEvent: "error",
        error: { code: "tool_use_failed" },
      });

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: "groq" });
      const replayed = await run(
        new OpenAI({
          apiKey: "unused",
          baseURL: upstream.baseUrl,
          fetch: replaying,
          maxRetries: 0,
        }),
      );
      expect(replayed).toEqual(recorded);
      await store.close();
      validateReplayable(`sqlite:${db}`, "groq");
    });

    it("records a call its caller aborted mid-stream as an aborted turn, and refuses to replay it", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      let release!: () => void;
      const hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const upstream = await startFakeUpstream([{ sse: sse("chat_text_stream.sse"), hold }]);
      const recording = seedlineFetch({ store, mode: "record", sessionId: "aborted" });
      const client = new OpenAI({
        apiKey: KEY,
        baseURL: upstream.baseUrl,
        fetch: recording,
        maxRetries: 0,
      });
      const abort = new AbortController();
      const stream = await client.chat.completions.create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true },
        { signal: abort.signal },
      );
      const reading = (async () => {
        for await (const _ of stream) abort.abort();
      })();
      // The SDK ends an aborted stream's iteration quietly.
      await reading;
      release();
      await recording.close();
      await upstream.close();
      const end = (await store.readEvents("aborted")).at(-1);
      expect(end?.type === "turn/end" && end.data.reason.kind).toBe("aborted");

      // Seen failing without the check: replay streamed the partial chunks as if they were whole.
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: "aborted" });
      const again = new OpenAI({
        apiKey: "unused",
        baseURL: upstream.baseUrl,
        fetch: replaying,
        maxRetries: 0,
      });
      await expect(
        again.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        }),
      ).rejects.toMatchObject({ status: 409, code: "REPLAY_INCOMPLETE" });
      await store.close();
      validateReplayable(`sqlite:${db}`, "aborted");
    });

    it("records a stream the upstream broke off as the turn's error, the log still replayable", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const body = sse("chat_text_stream.sse");
      const upstream = await startFakeUpstream([
        { sse: body, breakAfter: Math.floor(body.length / 2) },
      ]);
      const recording = seedlineFetch({ store, mode: "record" });
      const client = new OpenAI({
        apiKey: KEY,
        baseURL: upstream.baseUrl,
        fetch: recording,
        maxRetries: 0,
      });
      const stream = client.chat.completions.stream({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      });
      await expect(stream.finalChatCompletion()).rejects.toThrow();
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      const end = events.at(-1);
      expect(end?.type === "turn/end" && end.data.reason.kind).toBe("error");
      expect(events.some((e) => e.type === "assistant/chunk")).toBe(true);
      await store.close();
      validateReplayable(`sqlite:${db}`, id as string);
    });
  },
);

describe.skipIf(!HAVE_FIXTURES)(
  `seedline proxy with the OpenAI SDK ${HAVE_FIXTURES ? "" : SKIP}`,
  () => {
    it("records parallel tool calls through the spawned proxy and replays them offline after a restart", async () => {
      const db = join(mkdtempSync(join(dir, "proxy-")), "store.db");
      const storeUrl = `sqlite:${db}`;
      const upstream = await startFakeUpstream([
        { sse: sse("chat_parallel_tool_calls_stream.sse") },
        { sse: sse("chat_text_stream.sse") },
      ]);
      const run = async (args: string[]) => {
        const proxy = startSeedline(["proxy", "--store", storeUrl, ...args]);
        await proxy.waitFor("its address", (out) =>
          /seedline proxy: http:\/\/127\.0\.0\.1:\d+\n/.test(out),
        );
        const url = /seedline proxy: (\S+)/.exec(proxy.stdout())?.[1] as string;
        return { proxy, url };
      };
      const id = "parallel-tools";
      const recordRun = await run(["--upstream-openai", upstream.baseUrl, "--session", id]);
      const recordClient = new OpenAI({
        apiKey: KEY,
        baseURL: `${recordRun.url}/openai/v1`,
        maxRetries: 0,
      });
      const recorded = await parallelConversation(recordClient);
      recordRun.proxy.child.kill("SIGTERM");
      expect(await recordRun.proxy.exited).toBe(0);
      await upstream.close();
      expect(recorded[0]?.toolCalls.map((c) => c.name)).toEqual([
        "get_country",
        "get_product_name",
      ]);

      // No --session: the calls name their session in the base URL (/s/ID/).
      const replayRun = await run(["--mode", "replay"]);
      const base = `${replayRun.url}/s/${id}/openai/v1`;
      const replayClient = new OpenAI({ apiKey: "unused", baseURL: base, maxRetries: 0 });
      const replayed = await parallelConversation(replayClient);
      expect(replayed).toEqual(recorded);
      const past = replayClient.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "x" }],
      });
      await expect(past).rejects.toMatchObject({ status: 409, code: "REPLAY_EXHAUSTED" });
      const refused = (await past.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(refused.headers?.get("x-seedline-replayed")).toBe("true");
      expect(refused.headers?.get("x-seedline-session")).toBe(id);
      replayRun.proxy.child.kill("SIGINT");
      expect(await replayRun.proxy.exited).toBe(0);
      expect(storeBytes(db)).not.toContain(KEY);
      validateReplayable(storeUrl, id);
    });

    it("refuses an unknown --mode", () => {
      const run = seedline(["proxy", "--mode", "live", "--store", "memory:"]);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/expected --mode record, replay or auto, got "live"/);
    });
  },
);

/** Two streamed calls: parallel tool calls, then their results sent back. */
async function parallelConversation(client: OpenAI) {
  const messages: ChatCompletionMessageParam[] = [
    { role: "user", content: "Which country and product?" },
  ];
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    "get_country",
    "get_product_name",
  ].map((name) => ({
    type: "function",
    function: { name, parameters: { type: "object", properties: {} } },
  }));
  const results: ReturnType<typeof resultOf>[] = [];
  for (let call = 0; call < 2; call++) {
    const completion = await client.chat.completions
      .stream({
        model: "gpt-4o",
        messages,
        tools,
        stream: true,
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    results.push(resultOf(completion));
    const message = completion.choices[0]?.message;
    if (message === undefined) break;
    messages.push(message);
    for (const toolCall of message.tool_calls ?? []) {
      messages.push({
        role: "tool",
        tool_call_id: toolCall.id,
        content: `result of ${toolCall.id}`,
      });
    }
  }
  return results;
}
