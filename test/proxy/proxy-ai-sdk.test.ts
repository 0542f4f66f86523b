// The AI SDK's models on every API — createOpenAI({fetch}).chat and .responses, createAnthropic({fetch}) — recorded through seedlineFetch and replayed offline.
// Seen failing without the Responses and Messages adapters: their calls went on unrecorded, so no
// session was there to replay ("expected a sessionId to replay, got none").
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, type ToolSet, tool } from "ai";
import { expect, it } from "vitest";
import {
  aiSdkResponses,
  anthropicSse,
  describeWith,
  HAVE,
  openaiSse,
  recordThenReplay,
  type Sdk,
} from "../helpers/proxy-harness.js";

/** The AI SDK's OpenAI provider as a client of the harness. */
const OPENAI: Sdk<ReturnType<typeof createOpenAI>> = {
  provider: "openai",
  client: (baseURL, apiKey, fetch) => createOpenAI({ apiKey, baseURL, fetch }),
};

/** The AI SDK's Anthropic provider: its base URL ends in `/v1`. */
const ANTHROPIC: Sdk<ReturnType<typeof createAnthropic>> = {
  provider: "anthropic",
  client: (baseURL, apiKey, fetch) => createAnthropic({ apiKey, baseURL: `${baseURL}/v1`, fetch }),
};

/** What a streamed call ended with: its text, usage and finish reason. */
async function outcomeOf(streamed: ReturnType<typeof streamText>) {
  return {
    text: await streamed.text,
    usage: await streamed.usage,
    finishReason: await streamed.finishReason,
  };
}

describeWith("openai-chat", "the AI SDK's OpenAI chat model through seedlineFetch", () => {
  it("records streamText and generateText calls and replays them offline with the same text, usage and finish reason", async () => {
    const text = HAVE["openai-chat"] ? openaiSse("chat_text_stream.sse") : "";
    const run = await recordThenReplay({
      sdk: OPENAI,
      answers: [{ sse: text }, { sse: text }],
      drive: async (openai) => {
        const model = openai.chat("gpt-4o-mini");
        const streamed = streamText({
          model,
          prompt: "What is the capital of the UK?",
          maxRetries: 0,
        });
        const first = await outcomeOf(streamed);
        const generated = await generateText({ model, prompt: "And again?", maxRetries: 0 });
        const second = {
          text: generated.text,
          usage: generated.usage,
          finishReason: generated.finishReason,
        };
        return [first, second];
      },
    });
    expect(run.recorded[0]?.text).toBe("The capital of the UK is London.");
    expect(run.recorded[0]?.finishReason).toBe("stop");
    const events = await run.store.readEvents(run.id);
    expect(events.filter((e) => e.type === "turn/start")).toHaveLength(2);
    expect(run.replayed).toEqual(run.recorded);
    await run.store.close();
  });
});

/** Tools without `execute`: the calls come back to the caller, as the recorded responses made them. */
const TOOLS: ToolSet = {
  get_capital: {
    description: "The capital of a country.",
    inputSchema: jsonSchema<{ country: string }>({
      type: "object",
      properties: { country: { type: "string" } },
      required: ["country"],
    }),
  },
  calculator: {
    description: "Evaluates an arithmetic expression.",
    inputSchema: jsonSchema<{ expression: string }>({
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    }),
  },
};

describeWith("openai-responses", "the AI SDK's Responses model through seedlineFetch", () => {
  it("records streamText and generateText calls and replays them offline with the same text, reasoning, tool calls, usage and finish reason", async () => {
    const [reasoning] = aiSdkResponses("responses-openai-reasoning-encrypted-content.1.chunks.txt");
    const run = await recordThenReplay({
      sdk: OPENAI,
      answers: [
        { sse: openaiSse("responses_text_stream.sse") },
        // generateText does not stream: the fake upstream answers the stream's final response.
        { sse: openaiSse("responses_function_call_stream.sse") },
        { sse: reasoning as string },
      ],
      drive: async (openai) => {
        const model = openai.responses("gpt-4o");
        const streamed = streamText({
          model,
          prompt: "What is the capital of France?",
          maxRetries: 0,
        });
        const first = {
          ...(await outcomeOf(streamed)),
          providerMetadata: await streamed.providerMetadata,
        };
        const generated = await generateText({
          model,
          prompt: "Look it up.",
          tools: TOOLS,
          maxRetries: 0,
        });
        const second = {
          text: generated.text,
          toolCalls: generated.toolCalls.map((c) => ({
            id: c.toolCallId,
            name: c.toolName,
            input: c.input,
          })),
          usage: generated.usage,
          finishReason: generated.finishReason,
        };
        const thinking = streamText({ model, prompt: "Compute.", tools: TOOLS, maxRetries: 0 });
        const third = {
          reasoning: await thinking.reasoning,
          toolCalls: (await thinking.toolCalls).map((c) => ({
            id: c.toolCallId,
            name: c.toolName,
            input: c.input,
          })),
          usage: await thinking.usage,
          finishReason: await thinking.finishReason,
        };
        return { first, second, third };
      },
    });
    const { recorded } = run;
    expect(recorded.first.text).toBe("The capital of France is Paris.");
    expect(recorded.first.finishReason).toBe("stop");
    expect(recorded.second.toolCalls.map((c) => c.name)).toEqual(["get_capital"]);
    expect(recorded.second.finishReason).toBe("tool-calls");
    expect(recorded.third.toolCalls.map((c) => c.name)).toEqual(["calculator"]);
    // The reasoning part carries the item's encrypted content, which replay must give back.
    expect(JSON.stringify(recorded.third.reasoning)).toMatch(/reasoningEncryptedContent/);
    expect(run.replayed).toEqual(recorded);
    await run.store.close();
  });

  it("records a multi-step agent whose tool results go back as function_call_output items, and replays it with the reasoning's encrypted content intact", async () => {
    const bodies = aiSdkResponses("responses-openai-reasoning-encrypted-content.1.chunks.txt");
    const calculator = {
      description: "Applies an arithmetic operation to two numbers.",
      inputSchema: jsonSchema<{ a: number; b: number; op: string }>({
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string" } },
        required: ["a", "b", "op"],
      }),
      execute: async ({ a, b, op }: { a: number; b: number; op: string }) =>
        op === "add" ? a + b : a * b,
    };
    const run = await recordThenReplay({
      sdk: OPENAI,
      answers: bodies.map((sse) => ({ sse })),
      drive: async (openai) => {
        const result = streamText({
          model: openai.responses("gpt-5-nano"),
          prompt: "Compute (12 + 7) * 3 * 10 with the calculator.",
          tools: { calculator },
          stopWhen: stepCountIs(5),
          maxRetries: 0,
          providerOptions: {
            openai: { store: false, include: ["reasoning.encrypted_content"] },
          },
        });
        const steps = await result.steps;
        return {
          text: await result.text,
          usage: await result.totalUsage,
          finishReason: await result.finishReason,
          steps: steps.map((step) => ({
            toolCalls: step.toolCalls.map((c) => ({ id: c.toolCallId, input: c.input })),
            toolResults: step.toolResults.map((r) => ({ id: r.toolCallId, output: r.output })),
            reasoning: step.reasoning,
          })),
        };
      },
    });
    const { recorded } = run;
    expect(recorded.text).toBe("The final result is **570**.");
    expect(recorded.steps.map((s) => s.toolResults.map((r) => r.output))).toEqual([
      [19],
      [57],
      [570],
      [],
    ]);
    // The second request carried the reasoning item back with its encrypted content.
    expect(JSON.stringify(run.upstream.seen[1]?.body.input)).toMatch(/"encrypted_content":"gAAAA/);
    const events = await run.store.readEvents(run.id);
    expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1);
    expect(events.filter((e) => e.type === "step/start")).toHaveLength(4);
    const calls = events.flatMap((e) => (e.type === "tool/call" ? [e.data.callId] : []));
    const results = events.flatMap((e) =>
      e.type === "tool/result" && e.data.isError !== true ? [e.data.callId] : [],
    );
    expect(calls).toEqual([
      "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
      "call_Q6pW65MUgW9vF59BmItYGos3",
      "call_Zl5vIMnD7dVAjgU6FkhmiCZh",
    ]);
    expect(results).toEqual(calls);
    expect(run.replayed).toEqual(recorded);
    await run.store.close();
  });
});

describeWith("anthropic-messages", "the AI SDK's Anthropic model through seedlineFetch", () => {
  it("records streamText and generateText calls and replays them with the same text, reasoning, tool calls, usage and finish reason", async () => {
    const thinking = anthropicSse("ai-sdk/anthropic-clear-thinking.1.chunks.txt");
    const toolCall = anthropicSse("ai-sdk/anthropic-tool-no-args.chunks.txt");
    const tools = {
      // One step only (the default): the call and its result are returned, no second request.
      updateIssueList: tool({
        description: "Update the issue list.",
        inputSchema: jsonSchema<Record<string, unknown>>({ type: "object" }),
        execute: async () => "updated",
      }),
    };
    const run = await recordThenReplay({
      sdk: ANTHROPIC,
      answers: [{ sse: thinking }, { sse: toolCall }, { sse: thinking }],
      drive: async (anthropic) => {
        const model = anthropic("claude-sonnet-4-5");
        const results = [];
        for (const prompt of ["Think, then answer.", "What time is it?"]) {
          const streamed = streamText({ model, prompt, tools, maxRetries: 0 });
          results.push({
            text: await streamed.text,
            reasoning: await streamed.reasoningText,
            toolCalls: (await streamed.toolCalls).map((c) => [c.toolCallId, c.toolName, c.input]),
            usage: await streamed.usage,
            finishReason: await streamed.finishReason,
          });
        }
        const generated = await generateText({ model, prompt: "Again?", maxRetries: 0 });
        results.push({
          text: generated.text,
          reasoning: generated.reasoningText,
          toolCalls: [],
          usage: generated.usage,
          finishReason: generated.finishReason,
        });
        return results;
      },
    });
    const { recorded } = run;
    expect(recorded[0]?.reasoning).toBeTruthy();
    expect(recorded[1]?.toolCalls[0]?.[1]).toBe("updateIssueList");
    expect(recorded[1]?.finishReason).toBe("tool-calls");
    expect(recorded[2]?.text).toBe(recorded[0]?.text);
    expect(run.replayed).toEqual(recorded);
    await run.store.close();
  });
});
