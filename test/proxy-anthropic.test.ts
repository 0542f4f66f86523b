// The model proxy on Anthropic Messages: the official SDK and the AI SDK recorded through seedlineFetch and `seedline proxy`, then replayed offline.
// Seen failing without the Messages adapter: seedlineFetch sent the calls on unrecorded, so no
// session was recorded ("expected a sessionId to replay, got none"), and `seedline proxy` refused
// --upstream-anthropic as an unknown option.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { Message, MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStore, SqliteBackend, seedlineFetch } from "../src/index.js";
import { seedline, startSeedline } from "./cli-harness.js";
import {
  type AnthropicAnswer,
  anthropicSse,
  HAVE_ANTHROPIC_FIXTURES,
  startFakeAnthropic,
} from "./proxy-anthropic-harness.js";

const KEY = "sk-ant-test-never-stored-7d2e";
const SKIP = "(skipped: ../shared/fixtures-real/anthropic-sse is absent)";

/** Every captured body: text, thinking with signatures, redacted thinking, client and server tool use, citations, compaction, pause_turn. */
const FIXTURES = [
  "ai-sdk/anthropic-text.chunks.txt",
  "ai-sdk/anthropic-json-tool.1.chunks.txt",
  "ai-sdk/anthropic-tool-no-args.chunks.txt",
  "ai-sdk/anthropic-clear-thinking.1.chunks.txt",
  "pydantic-ai/thinking_part_stream.sse",
  "pydantic-ai/thinking_part_redacted_stream.sse",
  "pydantic-ai/native_tool_search_streaming.0.sse",
  "pydantic-ai/mcp_servers_stream.sse",
  "pydantic-ai/web_search_tool_stream.sse",
  "pydantic-ai/compaction_usage_with_cache_streaming.sse",
  "pydantic-ai/request_stream_fallback_for_high_max_tokens.sse",
  "pydantic-ai/pause_turn_web_search_streaming.0.sse",
];

const TOOLS: Tool[] = [
  {
    name: "json",
    description: "Answer as JSON.",
    input_schema: { type: "object", properties: { elements: { type: "array" } } },
  },
  { name: "get_time", description: "The time now.", input_schema: { type: "object" } },
];

async function openStore(db: string): Promise<SessionStore> {
  return new SessionStore({ backend: await SqliteBackend.open(db) });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "seedline-proxy-anthropic-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function storeBytes(db: string): string {
  const folder = dirname(db);
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(folder, entry.name)).toString("latin1"))
    .join("");
}

function validateReplayable(storeUrl: string, id: string): void {
  const exported = seedline(["export", id, "--store", storeUrl]);
  expect(exported.status, exported.stderr).toBe(0);
  const file = join(dir, `${id}.jsonl`);
  writeFileSync(file, exported.stdout);
  const run = seedline(["validate", "--replayable", file]);
  expect(run.status, run.stdout + run.stderr).toBe(0);
}

/** The events of an SSE body: each one's name and its data parsed (spacing and key order aside). */
function eventsOf(body: string): { name: string | undefined; data: unknown }[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const name = lines
        .find((l) => l.startsWith("event:"))
        ?.slice(6)
        .trim();
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("\n");
      return { name, data: JSON.parse(data) as unknown };
    });
}

/** One call per captured body, each a new user prompt: the whole Message the SDK returns. */
async function everyFixture(client: Anthropic, stream: boolean): Promise<Message[]> {
  const out: Message[] = [];
  for (const [i, name] of FIXTURES.entries()) {
    const params = {
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      system: "Answer briefly.",
      messages: [{ role: "user" as const, content: `Question ${i + 1} (${name})` }],
      tools: TOOLS,
    };
    out.push(
      stream
        ? await client.messages.stream(params).finalMessage()
        : await client.messages.create(params),
    );
  }
  return out;
}

/**
 * One turn as an agent runs it: the question (answered with a tool call), then the tool's
 * result sent back with `is_error` (answered with thinking and text). Each request is built from
 * what the SDK returned, so replay must render what the agent re-sends exactly as recorded.
 */
async function conversation(client: Anthropic, stream: boolean): Promise<Message[]> {
  const messages: MessageParam[] = [{ role: "user", content: "What is the weather in SF?" }];
  const out: Message[] = [];
  for (let call = 0; call < 2; call++) {
    const params = {
      model: "claude-haiku-4-5",
      max_tokens: 2048,
      system: [{ type: "text" as const, text: "Use the tools." }],
      messages,
      tools: TOOLS,
    };
    const message = stream
      ? await client.messages.stream(params).finalMessage()
      : await client.messages.create(params);
    out.push(message);
    messages.push({ role: "assistant", content: message.content });
    const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [b] : []));
    if (uses.length === 0) break;
    messages.push({
      role: "user",
      content: uses.map((u) => ({
        type: "tool_result" as const,
        tool_use_id: u.id,
        content: "the weather service is down",
        is_error: true,
      })),
    });
  }
  return out;
}

const CONVERSATION: AnthropicAnswer[] = HAVE_ANTHROPIC_FIXTURES
  ? [
      { sse: anthropicSse("ai-sdk/anthropic-json-tool.1.chunks.txt") },
      { sse: anthropicSse("pydantic-ai/thinking_part_stream.sse") },
    ]
  : [];

describe.skipIf(!HAVE_ANTHROPIC_FIXTURES)(
  `seedlineFetch with the Anthropic SDK ${HAVE_ANTHROPIC_FIXTURES ? "" : SKIP}`,
  () => {
    for (const stream of [true, false]) {
      it(`records every captured body ${stream ? "streamed" : "not streamed"} and replays each offline as the same Message`, async () => {
        const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
        const store = await openStore(db);
        const upstream = await startFakeAnthropic(FIXTURES.map((f) => ({ sse: anthropicSse(f) })));
        const recording = seedlineFetch({ store, mode: "record" });
        const client = (fetch: typeof globalThis.fetch, apiKey: string) =>
          new Anthropic({ apiKey, baseURL: upstream.baseUrl, fetch, maxRetries: 0 });
        const recorded = await everyFixture(client(recording, KEY), stream);
        await recording.close();
        await upstream.close();
        const [id] = await recording.sessionIds();
        // The upstream got the caller's credentials; the store holds none of them.
        expect(upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
        // The redacted thinking, server tool use and citations came through whole.
        expect(recorded[5]?.content.map((b) => b.type)).toEqual([
          "redacted_thinking",
          "redacted_thinking",
          "text",
        ]);
        expect(recorded[6]?.content.map((b) => b.type)).toContain("server_tool_use");
        expect(recorded[11]?.stop_reason).toBe("pause_turn");

        const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
        const replayed = await everyFixture(client(replaying, "unused"), stream);
        expect(replayed).toEqual(recorded);

        const events = await store.readEvents(id as string);
        expect(events.filter((e) => e.type === "turn/start")).toHaveLength(FIXTURES.length);
        const first = events.find((e) => e.type === "user/message");
        expect(first?.type === "user/message" && first.data.content).toEqual([
          { type: "text", text: `Question 1 (${FIXTURES[0]})` },
        ]);
        const calls = events.flatMap((e) => (e.type === "tool/call" ? [e.data] : []));
        expect(calls.map((c) => c.name)).toEqual(["json", "updateIssueList", "get_exchange_rate"]);
        await store.close();
        expect(storeBytes(db)).not.toContain(KEY);
        validateReplayable(`sqlite:${db}`, id as string);
      });

      it(`records a tool-using turn ${stream ? "streamed" : "not streamed"} with an is_error result and replays it with the same text, thinking, tool calls, usage and stop_reason`, async () => {
        const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
        const store = await openStore(db);
        const upstream = await startFakeAnthropic(CONVERSATION);
        const recording = seedlineFetch({ store, mode: "record" });
        const recorded = await conversation(
          new Anthropic({
            apiKey: KEY,
            baseURL: upstream.baseUrl,
            fetch: recording,
            maxRetries: 0,
          }),
          stream,
        );
        await recording.close();
        await upstream.close();
        const [id] = await recording.sessionIds();
        expect(recorded).toHaveLength(2);
        const use = recorded[0]?.content[0];
        expect(use?.type === "tool_use" && [use.id, use.name, use.input]).toEqual([
          "toolu_01KFbKqPYSuAKujiL6mTfzYA",
          "json",
          { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
        ]);
        expect(recorded[0]?.stop_reason).toBe("tool_use");
        expect(recorded[1]?.content.map((b) => b.type)).toEqual(["thinking", "text"]);
        // The second request carried the assistant's tool_use and the result back.
        const sent = upstream.seen[1]?.body.messages as MessageParam[];
        expect(sent).toHaveLength(3);

        const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
        const replayed = await conversation(
          new Anthropic({
            apiKey: "unused",
            baseURL: upstream.baseUrl,
            fetch: replaying,
            maxRetries: 0,
          }),
          stream,
        );
        expect(replayed).toEqual(recorded);

        const events = await store.readEvents(id as string);
        const types = events.map((e) => e.type);
        expect(types.filter((t) => t === "turn/start")).toHaveLength(1);
        expect(types.filter((t) => t === "step/start")).toHaveLength(2);
        const start = events.find((e) => e.type === "step/start");
        // The top-level system is the leading system message.
        expect(
          start?.type === "step/start" && start.data.request?.messages.map((m) => m.role),
        ).toEqual(["system", "user"]);
        // Seen failing with the adapter but without `isError` carried through turn inference: isError false.
        const result = events.find((e) => e.type === "tool/result");
        expect(result?.type === "tool/result" && result.data).toMatchObject({
          callId: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
          isError: true,
          content: [{ type: "text", text: "the weather service is down" }],
        });
        const usage = events.flatMap((e) =>
          e.type === "assistant/chunk" && e.data.chunk.type === "usage" ? [e.data.chunk.usage] : [],
        );
        expect(usage[0]).toMatchObject({
          inputTokens: 849,
          outputTokens: 47,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        });
        expect(types.at(-1)).toBe("turn/end");
        await store.close();
        expect(storeBytes(db)).not.toContain(KEY);
        validateReplayable(`sqlite:${db}`, id as string);
      });
    }

    it("replays each captured stream as the same named events with the same data, pings and signatures in their places", async () => {
      const store = await openStore(join(mkdtempSync(join(dir, "fetch-")), "store.db"));
      const upstream = await startFakeAnthropic(FIXTURES.map((f) => ({ sse: anthropicSse(f) })));
      const call = (fetch: typeof globalThis.fetch, i: number) =>
        fetch(`${upstream.baseUrl}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": KEY },
          body: JSON.stringify({
            model: "claude-sonnet-4-5",
            max_tokens: 64,
            stream: true,
            messages: [{ role: "user", content: `Question ${i + 1}` }],
          }),
        }).then((r) => r.text());
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded: string[] = [];
      for (const i of FIXTURES.keys()) recorded.push(await call(recording, i));
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      for (const [i, body] of recorded.entries()) {
        expect(body).toBe(anthropicSse(FIXTURES[i] as string));
        expect(eventsOf(await call(replaying, i)), FIXTURES[i]).toEqual(eventsOf(body));
      }
      await store.close();
    });

    it("records an error event mid-stream as the turn's error and replays the same error event", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      // The captured text stream cut after its first delta, then the error event the API sends when overloaded.
      const text = anthropicSse("ai-sdk/anthropic-text.chunks.txt");
      const cut = text.split("\n\n").slice(0, 4).join("\n\n");
      const error = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
      const body = `${cut}\n\nevent: error\ndata: ${JSON.stringify(error)}\n\n`;
      const upstream = await startFakeAnthropic([{ sse: body }]);
      const ask = (fetch: typeof globalThis.fetch) =>
        new Anthropic({ apiKey: KEY, baseURL: upstream.baseUrl, fetch, maxRetries: 0 }).messages
          .stream({
            model: "claude-haiku-4-5",
            max_tokens: 10,
            messages: [{ role: "user", content: "hi" }],
          })
          .finalMessage();
      const recording = seedlineFetch({ store, mode: "record" });
      await expect(ask(recording)).rejects.toMatchObject({ error });
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      const end = events.at(-1);
      expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
        kind: "error",
        code: "overloaded_error",
        message: "Overloaded",
      });
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      await expect(ask(replaying)).rejects.toMatchObject({ error });
      // Not streamed, the same call answers the error with the status the API gives it.
      // Seen failing before the error was rendered so: a 200 with the partial message.
      const again = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const whole = new Anthropic({
        apiKey: "k",
        baseURL: upstream.baseUrl,
        fetch: again,
        maxRetries: 0,
      });
      await expect(
        whole.messages.create({
          model: "claude-haiku-4-5",
          max_tokens: 10,
          messages: [{ role: "user", content: "hi" }],
        }),
      ).rejects.toMatchObject({ status: 529, error });
      await store.close();
      validateReplayable(`sqlite:${db}`, id as string);
    });

    it("answers a differing request with 409 REPLAY_MISMATCH, a call past the end with 409 REPLAY_EXHAUSTED and a malformed body with 400, in Anthropic's error format", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const upstream = await startFakeAnthropic(CONVERSATION);
      const recording = seedlineFetch({ store, mode: "record" });
      await conversation(
        new Anthropic({ apiKey: KEY, baseURL: upstream.baseUrl, fetch: recording, maxRetries: 0 }),
        true,
      );
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const client = new Anthropic({
        apiKey: "unused",
        baseURL: upstream.baseUrl,
        fetch: replaying,
        maxRetries: 0,
      });
      const changed = client.messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 2048,
        system: [{ type: "text", text: "Use the tools." }],
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        tools: TOOLS,
      });
      await expect(changed).rejects.toMatchObject({
        status: 409,
        error: { type: "error", error: { type: "REPLAY_MISMATCH" } },
      });
      await expect(changed).rejects.toThrow(/message 2: recorded another user message/);
      const replayed = await conversation(client, false);
      expect(replayed).toHaveLength(2);
      await expect(
        client.messages.create({
          model: "claude-haiku-4-5",
          max_tokens: 10,
          messages: [{ role: "user", content: "more" }],
        }),
      ).rejects.toMatchObject({ status: 409, error: { error: { type: "REPLAY_EXHAUSTED" } } });
      await expect(
        client.messages.create({
          model: "claude-haiku-4-5",
          max_tokens: 10,
          messages: "x" as never,
        }),
      ).rejects.toMatchObject({ status: 400, error: { error: { type: "INVALID_REQUEST" } } });
      await store.close();
    });

    it("records an upstream error as the turn's error with Anthropic's body, and replays the same error", async () => {
      const db = join(mkdtempSync(join(dir, "fetch-")), "store.db");
      const store = await openStore(db);
      const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
      const upstream = await startFakeAnthropic([{ status: 529, json: body }]);
      const ask = (fetch: typeof globalThis.fetch) =>
        new Anthropic({
          apiKey: KEY,
          baseURL: upstream.baseUrl,
          fetch,
          maxRetries: 0,
        }).messages.create({
          model: "claude-haiku-4-5",
          max_tokens: 10,
          messages: [{ role: "user", content: "hi" }],
        });
      const recording = seedlineFetch({ store, mode: "record" });
      await expect(ask(recording)).rejects.toMatchObject({ status: 529, error: body });
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      const end = events.at(-1);
      expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
        kind: "error",
        code: "overloaded_error",
        message: "Overloaded",
      });
      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      await expect(ask(replaying)).rejects.toMatchObject({ status: 529, error: body });
      await store.close();
    });
  },
);

describe.skipIf(!HAVE_ANTHROPIC_FIXTURES)(
  `seedline proxy with the Anthropic SDK ${HAVE_ANTHROPIC_FIXTURES ? "" : SKIP}`,
  () => {
    it("records a tool-using turn through the spawned proxy (--upstream-anthropic) and replays it offline after a restart", async () => {
      const db = join(mkdtempSync(join(dir, "proxy-")), "store.db");
      const storeUrl = `sqlite:${db}`;
      const upstream = await startFakeAnthropic(CONVERSATION);
      const run = async (args: string[]) => {
        const proxy = startSeedline(["proxy", "--store", storeUrl, ...args]);
        await proxy.waitFor("its address", (out) =>
          /seedline proxy: http:\/\/127\.0\.0\.1:\d+\n/.test(out),
        );
        const url = /seedline proxy: (\S+)/.exec(proxy.stdout())?.[1] as string;
        return { proxy, url };
      };
      const id = "anthropic-tools";
      const recordRun = await run(["--upstream-anthropic", upstream.baseUrl, "--session", id]);
      // ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/anthropic
      const recorded = await conversation(
        new Anthropic({ apiKey: KEY, baseURL: `${recordRun.url}/anthropic`, maxRetries: 0 }),
        true,
      );
      recordRun.proxy.child.kill("SIGTERM");
      expect(await recordRun.proxy.exited).toBe(0);
      await upstream.close();
      expect(upstream.seen.map((s) => s.url)).toEqual(["/v1/messages", "/v1/messages"]);

      const replayRun = await run(["--mode", "replay"]);
      const replayed = await conversation(
        new Anthropic({
          apiKey: "unused",
          baseURL: `${replayRun.url}/s/${id}/anthropic`,
          maxRetries: 0,
        }),
        true,
      );
      expect(replayed).toEqual(recorded);
      replayRun.proxy.child.kill("SIGINT");
      expect(await replayRun.proxy.exited).toBe(0);
      expect(storeBytes(db)).not.toContain(KEY);
      validateReplayable(storeUrl, id);
    });

    it("refuses --upstream-anthropic that is no URL", () => {
      const run = seedline(["proxy", "--upstream-anthropic", "not a url", "--store", "memory:"]);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/expected --upstream-anthropic a URL/);
    });
  },
);
