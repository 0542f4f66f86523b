// The model proxy on the OpenAI Responses API: the official SDK recorded through seedlineFetch and `seedline proxy`, then replayed offline.
// Fails without the Responses adapter: calls to /responses went through unrecorded, so no session
// was there to replay ("expected a sessionId to replay, got none"; the spawned proxy answered 404).
import type OpenAI from "openai";
import type { Response, ResponseInputItem } from "openai/resources/responses/responses";
import { expect, it } from "vitest";
import { MemoryBackend, type SeedlineFetch, SessionStore, seedlineFetch } from "../../src/index.js";
import { GET_CAPITAL } from "../helpers/proxy-agents.js";
import {
  aiSdkResponses,
  describeWith,
  expectFaithful,
  type FakeAnswer,
  HAVE,
  KEY,
  OPENAI_SDK,
  openaiSse,
  recordThenReplay,
  startFakeUpstream,
  validateReplayable,
} from "../helpers/proxy-harness.js";

const HAVE_RESPONSES = HAVE["openai-responses"];

const TOOLS: OpenAI.Responses.Tool[] = [
  {
    type: "function",
    ...GET_CAPITAL,
    parameters: { ...GET_CAPITAL.parameters, additionalProperties: false },
    strict: true,
  },
];

/** The output items without what the SDK's stream helper parses into them (absent when not streamed). */
function outputOf(response: Response): Response["output"] {
  return JSON.parse(
    JSON.stringify(response.output, (key, value) =>
      key === "parsed" || key === "parsed_arguments" ? undefined : value,
    ),
  );
}

/** The SDK-level result of one call: what an agent reads. */
function resultOf(response: Response) {
  return {
    id: response.id,
    model: response.model,
    status: response.status,
    text: response.output_text,
    output: outputOf(response),
    toolCalls: response.output.flatMap((item) =>
      item.type === "function_call"
        ? [{ id: item.call_id, name: item.name, arguments: item.arguments }]
        : item.type === "custom_tool_call"
          ? [{ id: item.call_id, name: item.name, arguments: item.input }]
          : [],
    ),
    usage: response.usage,
  };
}

/** One call, streamed (the SDK's event stream, folded by it) or not. */
async function ask(client: OpenAI, input: ResponseInputItem[] | string, stream: boolean) {
  const params = { model: "gpt-4o", instructions: "Answer briefly.", input, tools: TOOLS };
  return stream
    ? await client.responses.stream(params).finalResponse()
    : await client.responses.create(params);
}

/**
 * Two calls of one turn, as an agent makes them: the question (answered with a function call),
 * then the output items sent back with the tool's result (answered with text).
 */
async function conversation(client: OpenAI, stream: boolean) {
  const input: ResponseInputItem[] = [{ role: "user", content: "What is the capital of France?" }];
  const results: ReturnType<typeof resultOf>[] = [];
  for (let call = 0; call < 2; call++) {
    const response = await ask(client, input, stream);
    results.push(resultOf(response));
    input.push(...(response.output as ResponseInputItem[]));
    for (const item of response.output) {
      if (item.type === "function_call") {
        input.push({ type: "function_call_output", call_id: item.call_id, output: "Paris" });
      }
    }
  }
  return results;
}

const TOOL_TURN: FakeAnswer[] = HAVE_RESPONSES
  ? [
      { sse: openaiSse("responses_function_call_stream.sse") },
      { sse: openaiSse("responses_text_stream.sse") },
    ]
  : [];

/** A streamed body's events (name and payload), without the random padding of delta events. */
function eventsOf(body: string): { name: string | undefined; data: unknown }[] {
  return body
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const name = lines.find((l) => l.startsWith("event: "))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      const { obfuscation: _padding, ...rest } = JSON.parse(data) as Record<string, unknown>;
      return { name, data: rest };
    });
}

/** Records `drive` through seedlineFetch, stops the upstream, and replays `replayDrive` (default `drive`). */
function recordThenReplayOn<T>(
  answers: readonly FakeAnswer[],
  drive: (client: OpenAI) => Promise<T>,
  replayDrive: (client: OpenAI) => Promise<T> = drive,
) {
  return recordThenReplay({ sdk: OPENAI_SDK, answers, drive, replayDrive });
}

describeWith("openai-responses", "seedlineFetch with the OpenAI SDK's Responses API", () => {
  for (const stream of [true, false]) {
    it(`records a function-calling turn ${stream ? "streamed" : "not streamed"} and replays it offline with the same SDK results`, async () => {
      const run = await recordThenReplayOn(TOOL_TURN, (client) => conversation(client, stream));
      const { recorded, store, id, upstream } = run;
      expect(recorded[0]?.toolCalls).toEqual([
        {
          id: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
          name: "get_capital",
          arguments: '{"country":"France"}',
        },
      ]);
      expect(recorded[1]?.text).toBe("The capital of France is Paris.");
      expect(recorded[1]?.status).toBe("completed");
      expect(recorded[1]?.usage?.total_tokens).toBeGreaterThan(0);
      expect(upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(upstream.seen[0]?.url).toBe("/v1/responses");

      const events = await store.readEvents(id);
      const types = events.map((e) => e.type);
      expect(types.filter((t) => t === "turn/start")).toHaveLength(1);
      expect(types.filter((t) => t === "step/start")).toHaveLength(2);
      // The function_call_output the agent sent back is the result of the call it names.
      const call = events.find((e) => e.type === "tool/call");
      const result = events.find((e) => e.type === "tool/result");
      expect(call?.type === "tool/call" && call.data).toMatchObject({
        callId: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
        name: "get_capital",
      });
      expect(result?.type === "tool/result" && result.data).toMatchObject({
        callId: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
        content: [{ type: "text", text: "Paris" }],
      });
      const start = events.find((e) => e.type === "step/start");
      expect(start?.type === "step/start" && start.data.request).toMatchObject({
        api: "openai-responses",
        model: "gpt-4o",
        messages: [{ role: "system" }, { role: "user" }],
        tools: [{ name: "get_capital" }],
      });
      const chunkTypes = events.flatMap((e) =>
        e.type === "assistant/chunk" ? [e.data.chunk.type] : [],
      );
      expect(chunkTypes).toContain("text-delta");
      expect(chunkTypes).toContain("usage");
      expect(types.at(-1)).toBe("turn/end");
      await expectFaithful(run);
    });
  }

  it("replays a streamed recording to a caller that does not stream, and a JSON recording to one that streams", async () => {
    const streamedFirst = await recordThenReplayOn(
      TOOL_TURN,
      (client) => conversation(client, true),
      (client) => conversation(client, false),
    );
    expect(streamedFirst.replayed).toEqual(streamedFirst.recorded);
    await streamedFirst.store.close();
    const jsonFirst = await recordThenReplayOn(
      TOOL_TURN,
      (client) => conversation(client, false),
      (client) => conversation(client, true),
    );
    expect(jsonFirst.replayed).toEqual(jsonFirst.recorded);
    await jsonFirst.store.close();
  });

  it("keeps reasoning items with their encrypted content, reasoning summaries, web search calls and custom tool calls", async () => {
    const bodies = [
      openaiSse("responses_phase_function_call_stream.sse"),
      openaiSse("responses_reasoning_summary_stream.sse"),
      openaiSse("responses_web_search_stream.sse"),
      ...aiSdkResponses("responses-openai-custom-tool.1.chunks.txt"),
    ];
    const drive = async (client: OpenAI) => {
      const out: ReturnType<typeof resultOf>[] = [];
      for (const prompt of ["narrate", "reason", "search", "sql"]) {
        out.push(resultOf(await ask(client, prompt, true)));
      }
      return out;
    };
    const run = await recordThenReplayOn(
      bodies.map((sse) => ({ sse })),
      drive,
    );
    expect(run.replayed).toEqual(run.recorded);
    const [phase, reasoning, search, custom] = run.recorded;
    const encrypted = phase?.output.find((item) => item.type === "reasoning");
    expect(encrypted?.type === "reasoning" && encrypted.encrypted_content).toMatch(/^gAAAA/);
    expect(phase?.toolCalls.map((c) => c.name)).toEqual(["get_capital"]);
    expect(reasoning?.output.some((i) => i.type === "reasoning" && i.summary.length > 0)).toBe(
      true,
    );
    expect(search?.output.some((i) => i.type === "web_search_call")).toBe(true);
    expect(custom?.toolCalls).toEqual([
      {
        id: "call_custom_sql_001",
        name: "write_sql",
        arguments: "SELECT * FROM users WHERE age > 25",
      },
    ]);
    const events = await run.store.readEvents(run.id);
    const messages = events.flatMap((e) => (e.type === "assistant/message" ? [e.data] : []));
    // The reasoning summary is a reasoning block of the assembled message.
    expect(messages[1]?.content.some((b) => b.type === "reasoning" && b.text.length > 0)).toBe(
      true,
    );
    const calls = events.flatMap((e) => (e.type === "tool/call" ? [e.data] : []));
    expect(calls.map((c) => c.name)).toEqual(["get_capital", "write_sql"]);
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, run.id);
  });

  it("records a response.failed stream as the turn's error and replays the same failure", async () => {
    const [failed] = aiSdkResponses("responses-openai-error.1.chunks.txt");
    const drive = async (client: OpenAI) => {
      const error = await ask(client, "fail", true).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      return String((error as Error).message);
    };
    const run = await recordThenReplayOn([{ sse: failed as string }], drive);
    expect(run.replayed).toBe(run.recorded);
    const events = await run.store.readEvents(run.id);
    const end = events.at(-1);
    expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
      kind: "error",
      step: 1,
      code: "insufficient_quota",
      message: expect.stringMatching(/^You exceeded your current quota/),
    });
    expect(run.recorded).toMatch(/exceeded your current quota/);
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, run.id);
  });

  it("replays every captured stream event for event: names, sequence numbers and items as recorded, without the padding", async () => {
    const bodies = [
      ...[
        "responses_text_stream.sse",
        "responses_function_call_stream.sse",
        "responses_phase_function_call_stream.sse",
        "responses_reasoning_summary_stream.sse",
        "responses_web_search_stream.sse",
      ].map(openaiSse),
      ...aiSdkResponses("responses-openai-reasoning-encrypted-content.1.chunks.txt"),
      ...aiSdkResponses("responses-openai-custom-tool.1.chunks.txt"),
      ...aiSdkResponses("responses-openai-local-shell-tool.1.chunks.txt"),
      ...aiSdkResponses("responses-openai-error.1.chunks.txt"),
    ];
    const store = new SessionStore({ backend: new MemoryBackend() });
    const upstream = await startFakeUpstream(bodies.map((sse) => ({ sse })));
    const post = (fetch: SeedlineFetch, i: number) =>
      fetch(`${upstream.baseUrl}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", input: `call ${i}`, stream: true }),
      }).then((r) => r.text());
    const recording = seedlineFetch({ store, mode: "record" });
    const recorded: string[] = [];
    for (let i = 0; i < bodies.length; i++) recorded.push(await post(recording, i));
    await recording.close();
    await upstream.close();
    expect(recorded).toEqual(bodies);
    const [id] = await recording.sessionIds();
    const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
    for (let i = 0; i < bodies.length; i++) {
      expect(eventsOf(await post(replaying, i)), `call ${i}`).toEqual(
        eventsOf(bodies[i] as string),
      );
    }
  });

  it("answers a request that differs from the recording with 409 and a diff", async () => {
    const run = await recordThenReplayOn(
      TOOL_TURN,
      (client) => conversation(client, true),
      async (client) => {
        const changed = ask(client, [{ role: "user", content: "And of Spain?" }], true);
        await expect(changed).rejects.toMatchObject({ status: 409 });
        await expect(changed).rejects.toThrow(/message 2: recorded another user message/);
        // `instructions` is the system message: changing it is a difference too.
        const instructed = client.responses.create({
          model: "gpt-4o",
          instructions: "Answer at length.",
          input: [{ role: "user", content: "What is the capital of France?" }],
          tools: TOOLS,
        });
        await expect(instructed).rejects.toMatchObject({ status: 409, code: "REPLAY_MISMATCH" });
        await expect(instructed).rejects.toThrow(/message 1: recorded another system message/);
        const malformed = client.responses.create({ model: "gpt-4o", input: 5 as never });
        await expect(malformed).rejects.toMatchObject({ status: 400, code: "INVALID_REQUEST" });
        const results = await conversation(client, true);
        const past = ask(client, "more", true);
        await expect(past).rejects.toMatchObject({ status: 409, code: "REPLAY_EXHAUSTED" });
        return results;
      },
    );
    expect(run.replayed).toEqual(run.recorded);
    await run.store.close();
  });
});
