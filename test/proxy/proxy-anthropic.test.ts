// The model proxy on Anthropic Messages: the official SDK and the AI SDK recorded through seedlineFetch and `seedline proxy`, then replayed offline.
// Seen failing without the Messages adapter: seedlineFetch sent the calls on unrecorded, so no
// session was recorded ("expected a sessionId to replay, got none"), and `seedline proxy` refused
// --upstream-anthropic as an unknown option.
import type Anthropic from "@anthropic-ai/sdk";
import type { Message, MessageParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { seedlineFetch } from "../../src/index.js";
import { seedline } from "../helpers/cli-harness.js";
import {
  ANTHROPIC_SDK,
  anthropicSse,
  describeWith,
  expectFaithful,
  type FakeAnswer,
  HAVE,
  KEY,
  newDb,
  openStore,
  recordThenReplay,
  startFakeUpstream,
  startSeedlineProxy,
  validateReplayable,
} from "../helpers/proxy-harness.js";

const HAVE_ANTHROPIC_FIXTURES = HAVE["anthropic-messages"];

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

const CONVERSATION: FakeAnswer[] = HAVE_ANTHROPIC_FIXTURES
  ? [
      { sse: anthropicSse("ai-sdk/anthropic-json-tool.1.chunks.txt") },
      { sse: anthropicSse("pydantic-ai/thinking_part_stream.sse") },
    ]
  : [];

/** A call with nothing but a prompt. */
const hi = {
  model: "claude-haiku-4-5",
  max_tokens: 10,
  messages: [{ role: "user" as const, content: "hi" }],
};

/** Records `drive` through seedlineFetch, stops the upstream, and replays `replayDrive` (default `drive`). */
function recordThenReplayOn<T>(
  answers: readonly FakeAnswer[],
  drive: (client: Anthropic) => Promise<T>,
  replayDrive: (client: Anthropic) => Promise<T> = drive,
) {
  return recordThenReplay({
    sdk: ANTHROPIC_SDK,
    answers,
    drive,
    replayDrive,
  });
}

describeWith("anthropic-messages", "seedlineFetch with the Anthropic SDK", () => {
  for (const stream of [true, false]) {
    it(`records every captured body ${stream ? "streamed" : "not streamed"} and replays each offline as the same Message`, async () => {
      const run = await recordThenReplayOn(
        FIXTURES.map((f) => ({ sse: anthropicSse(f) })),
        (client) => everyFixture(client, stream),
      );
      const { recorded, store, id } = run;
      // The upstream got the caller's credentials; the store holds none of them.
      expect(run.upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      // The redacted thinking, server tool use and citations came through whole.
      expect(recorded[5]?.content.map((b) => b.type)).toEqual([
        "redacted_thinking",
        "redacted_thinking",
        "text",
      ]);
      expect(recorded[6]?.content.map((b) => b.type)).toContain("server_tool_use");
      expect(recorded[11]?.stop_reason).toBe("pause_turn");
      expect(run.replayed).toEqual(recorded);

      const events = await store.readEvents(id);
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(FIXTURES.length);
      const first = events.find((e) => e.type === "user/message");
      expect(first?.type === "user/message" && first.data.content).toEqual([
        { type: "text", text: `Question 1 (${FIXTURES[0]})` },
      ]);
      const calls = events.flatMap((e) => (e.type === "tool/call" ? [e.data] : []));
      expect(calls.map((c) => c.name)).toEqual(["json", "updateIssueList", "get_exchange_rate"]);
      await expectFaithful(run);
    });

    it(`records a tool-using turn ${stream ? "streamed" : "not streamed"} with an is_error result and replays it with the same text, thinking, tool calls, usage and stop_reason`, async () => {
      const run = await recordThenReplayOn(CONVERSATION, (client) => conversation(client, stream));
      const { recorded, store, id } = run;
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
      const sent = run.upstream.seen[1]?.body.messages as MessageParam[];
      expect(sent).toHaveLength(3);
      expect(run.replayed).toEqual(recorded);

      const events = await store.readEvents(id);
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
      await expectFaithful(run);
    });
  }

  it("replays each captured stream as the same named events with the same data, pings and signatures in their places", async () => {
    const store = await openStore(newDb());
    const upstream = await startFakeUpstream(
      FIXTURES.map((f) => ({ sse: anthropicSse(f) })),
      "anthropic",
    );
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
    // The captured text stream cut after its first delta, then the error event the API sends when overloaded.
    const text = anthropicSse("ai-sdk/anthropic-text.chunks.txt");
    const cut = text.split("\n\n").slice(0, 4).join("\n\n");
    const error = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    const body = `${cut}\n\nevent: error\ndata: ${JSON.stringify(error)}\n\n`;
    const failing = (client: Anthropic) =>
      expect(client.messages.stream(hi).finalMessage()).rejects.toMatchObject({ error });
    const run = await recordThenReplayOn([{ sse: body }], failing);
    const events = await run.store.readEvents(run.id);
    const end = events.at(-1);
    expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
      kind: "error",
      code: "overloaded_error",
      message: "Overloaded",
    });
    // Not streamed, the same call answers the error with the status the API gives it.
    // Seen failing before the error was rendered so: a 200 with the partial message.
    const again = await startSeedlineProxy({
      transport: "fetch",
      mode: "replay",
      db: run.db,
      store: run.store,
      sessionId: run.id,
      provider: "anthropic",
    });
    await expect(
      ANTHROPIC_SDK.client(again.baseUrl, "k", again.fetch).messages.create(hi),
    ).rejects.toMatchObject({ status: 529, error });
    await again.stop();
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, run.id);
  });

  it("answers a differing request with 409 REPLAY_MISMATCH, a call past the end with 409 REPLAY_EXHAUSTED and a malformed body with 400, in Anthropic's error format", async () => {
    const run = await recordThenReplayOn(
      CONVERSATION,
      (client) => conversation(client, true),
      async (client) => {
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
          client.messages.create({ ...hi, messages: [{ role: "user", content: "more" }] }),
        ).rejects.toMatchObject({ status: 409, error: { error: { type: "REPLAY_EXHAUSTED" } } });
        await expect(
          client.messages.create({ ...hi, messages: "x" as never }),
        ).rejects.toMatchObject({ status: 400, error: { error: { type: "INVALID_REQUEST" } } });
        return replayed;
      },
    );
    await run.store.close();
  });

  it("records an upstream error as the turn's error with Anthropic's body, and replays the same error", async () => {
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    const run = await recordThenReplayOn([{ status: 529, json: body }], (client) =>
      expect(client.messages.create(hi)).rejects.toMatchObject({ status: 529, error: body }),
    );
    const end = (await run.store.readEvents(run.id)).at(-1);
    expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
      kind: "error",
      code: "overloaded_error",
      message: "Overloaded",
    });
    await run.store.close();
  });
});

describe("seedline proxy's options", () => {
  it("refuses --upstream-anthropic that is no URL", () => {
    const run = seedline(["proxy", "--upstream-anthropic", "not a url", "--store", "memory:"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/expected --upstream-anthropic a URL/);
  });
});
