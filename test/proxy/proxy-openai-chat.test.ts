// The model proxy on OpenAI Chat Completions: the official SDK recorded through seedlineFetch and `seedline proxy`, then replayed offline.
import OpenAI from "openai";
import type { ChatCompletion, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { seedline } from "../helpers/cli-harness.js";
import { GET_CAPITAL } from "../helpers/proxy-agents.js";
import {
  describeWith,
  expectFaithful,
  HAVE,
  KEY,
  newDb,
  OPENAI_SDK,
  openaiSse,
  openStore,
  recordThenReplay,
  startFakeUpstream,
  startSeedlineProxy,
  validateReplayable,
} from "../helpers/proxy-harness.js";

const HAVE_CHAT = HAVE["openai-chat"];

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: "function", function: GET_CAPITAL },
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

const TOOL_TURN = HAVE_CHAT
  ? [{ sse: openaiSse("chat_tool_call_stream.sse") }, { sse: openaiSse("chat_text_stream.sse") }]
  : [];

const hi = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };

describeWith("openai-chat", "seedlineFetch with the OpenAI SDK", () => {
  for (const stream of [true, false]) {
    it(`records a tool-using turn ${stream ? "streamed" : "not streamed"} and replays it offline with the same SDK results`, async () => {
      const run = await recordThenReplay({
        sdk: OPENAI_SDK,
        answers: TOOL_TURN,
        drive: (client) => conversation(client, stream),
      });
      const { recorded, store, id } = run;
      // The upstream got the caller's credentials; the store holds none of them.
      expect(run.upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(recorded[0]?.toolCalls[0]?.name).toBe("get_capital");
      expect(recorded[0]?.finishReason).toBe("tool_calls");
      expect(recorded[1]?.text).toMatch(/London/);
      expect(recorded[1]?.usage?.total_tokens).toBe(87);

      const types = (await store.readEvents(id)).map((e) => e.type);
      expect(types.filter((t) => t === "turn/start")).toHaveLength(1);
      expect(types.filter((t) => t === "step/start")).toHaveLength(2);
      expect(types.filter((t) => t === "tool/result")).toHaveLength(1);
      expect(types.at(-1)).toBe("turn/end");
      await expectFaithful(run);
    });
  }

  it("answers a request that differs from the recording with 409 and a diff, and a call past the end with 409", async () => {
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: TOOL_TURN,
      drive: (client) => conversation(client, true),
      replayDrive: async (client) => {
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
        return replayed;
      },
    });
    expect(run.replayed).toEqual(run.recorded);
    await run.store.close();
  });

  it("records an upstream error as the turn's error with the provider's body, and replays the same error", async () => {
    const body = {
      error: {
        message: "Rate limit reached for gpt-4o-mini",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    };
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: [{ status: 429, json: body }],
      drive: async (client) => {
        const failed = client.chat.completions.create(hi);
        await expect(failed).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded" });
        return (await failed.catch((e: unknown) => e)) as Error;
      },
    });
    expect(run.replayed.message).toBe(run.recorded.message);
    const events = await run.store.readEvents(run.id);
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
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, run.id);
  });

  it("replays a streamed recording to a caller that does not stream, with the same results", async () => {
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: TOOL_TURN,
      drive: (client) => conversation(client, true),
      replayDrive: (client) => conversation(client, false),
    });
    expect(run.replayed).toEqual(run.recorded);
    await run.store.close();
  });

  it("passes other paths through unrecorded, and records an unreachable upstream as the turn's error", async () => {
    const db = newDb();
    const store = await openStore(db);
    const upstream = await startFakeUpstream([]);
    const recording = await startSeedlineProxy({
      transport: "fetch",
      mode: "record",
      db,
      store,
      sessionId: "unreachable",
      provider: "openai",
      upstream: upstream.baseUrl,
    });
    const client = OPENAI_SDK.client(upstream.baseUrl, KEY, recording.fetch);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["gpt-4o-mini"]);
    expect(await store.get("unreachable")).toBeUndefined();
    await upstream.close();
    await expect(client.chat.completions.create(hi)).rejects.toBeInstanceOf(
      OpenAI.APIConnectionError,
    );
    await recording.stop();
    const end = (await store.readEvents("unreachable")).at(-1);
    expect(end?.type === "turn/end" && end.data.reason).toMatchObject({
      kind: "error",
      step: 1,
      message: expect.stringMatching(/^the upstream failed: /),
      // The request now leaves at once: it may meet the closed upstream's keep-alive socket
      // (UND_ERR_SOCKET) before the pool has seen it close, rather than a refused connection.
      code: expect.stringMatching(/^(ECONNREFUSED|UND_ERR_SOCKET)$/),
    });
    await store.close();
    await validateReplayable(`sqlite:${db}`, "unreachable");
  });

  it("records an error event inside a 200 stream (reasoning deltas, then `event: error`) and replays it the same", async () => {
    /** What the SDK gave: the reasoning streamed before the error, and the error. */
    const drive = async (client: OpenAI) => {
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
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: [{ sse: openaiSse("groq_tool_use_failed_error_streaming.0.sse") }],
      sessionId: "groq",
      drive,
    });
    const { recorded, store } = run;
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
    expect(run.replayed).toEqual(recorded);
    await store.close();
    await validateReplayable(`sqlite:${run.db}`, "groq");
  });

  it("records a call its caller aborted mid-stream as an aborted turn, and refuses to replay it", async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: [{ sse: openaiSse("chat_text_stream.sse"), hold }],
      sessionId: "aborted",
      drive: async (client) => {
        const abort = new AbortController();
        const stream = await client.chat.completions.create(
          { ...hi, stream: true },
          { signal: abort.signal },
        );
        // The SDK ends an aborted stream's iteration quietly.
        for await (const _ of stream) abort.abort();
        release();
        return undefined;
      },
      // Seen failing without the check: replay streamed the partial chunks as if they were whole.
      replayDrive: async (client) => {
        await expect(client.chat.completions.create({ ...hi, stream: true })).rejects.toMatchObject(
          { status: 409, code: "REPLAY_INCOMPLETE" },
        );
        return undefined;
      },
    });
    const end = (await run.store.readEvents("aborted")).at(-1);
    expect(end?.type === "turn/end" && end.data.reason.kind).toBe("aborted");
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, "aborted");
  });

  it("records a stream the upstream broke off as the turn's error, the log still replayable", async () => {
    const body = openaiSse("chat_text_stream.sse");
    const run = await recordThenReplay({
      sdk: OPENAI_SDK,
      answers: [{ sse: body, breakAfter: Math.floor(body.length / 2) }],
      drive: async (client) => {
        const stream = client.chat.completions.stream({ ...hi, stream: true });
        await expect(stream.finalChatCompletion()).rejects.toThrow();
        return undefined;
      },
    });
    const events = await run.store.readEvents(run.id);
    const end = events.at(-1);
    expect(end?.type === "turn/end" && end.data.reason.kind).toBe("error");
    expect(events.some((e) => e.type === "assistant/chunk")).toBe(true);
    await run.store.close();
    await validateReplayable(`sqlite:${run.db}`, run.id);
  });
});

describe("seedline proxy's options", () => {
  it("refuses an unknown --mode", () => {
    const run = seedline(["proxy", "--mode", "live", "--store", "memory:"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/expected --mode record, replay or auto, got "live"/);
  });
});
