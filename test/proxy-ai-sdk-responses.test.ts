// The AI SDK's OpenAI Responses model (createOpenAI({fetch}).responses) recorded through seedlineFetch and replayed offline.
// Fails without the Responses adapter: calls to /responses went through unrecorded, so no session
// was there to replay ("expected a sessionId to replay, got none"; the spawned proxy answered 404).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, type ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { MemoryBackend, SessionStore, seedlineFetch } from "../src/index.js";
import { startFakeUpstream } from "./proxy-harness.js";
import {
  aiSdkResponses,
  finalOf,
  HAVE_RESPONSES,
  responsesSse,
} from "./proxy-responses-fixtures.js";

const SKIP = "(skipped: ../shared/fixtures-real/openai-sse is absent)";

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

describe.skipIf(!HAVE_RESPONSES)(
  `the AI SDK's Responses model through seedlineFetch ${HAVE_RESPONSES ? "" : SKIP}`,
  () => {
    it("records streamText and generateText calls and replays them offline with the same text, reasoning, tool calls, usage and finish reason", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const text = responsesSse("responses_text_stream.sse");
      const call = responsesSse("responses_function_call_stream.sse");
      const [reasoning] = aiSdkResponses(
        "responses-openai-reasoning-encrypted-content.1.chunks.txt",
      );
      const upstream = await startFakeUpstream([
        { sse: text },
        { status: 200, json: finalOf(call) },
        { sse: reasoning as string },
      ]);
      const run = async (fetch: typeof globalThis.fetch) => {
        const openai = createOpenAI({ apiKey: "k", baseURL: upstream.baseUrl, fetch });
        const model = openai.responses("gpt-4o");
        const streamed = streamText({
          model,
          prompt: "What is the capital of France?",
          maxRetries: 0,
        });
        const first = {
          text: await streamed.text,
          usage: await streamed.usage,
          finishReason: await streamed.finishReason,
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
      };
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await run(recording);
      await recording.close();
      await upstream.close();
      expect(recorded.first.text).toBe("The capital of France is Paris.");
      expect(recorded.first.finishReason).toBe("stop");
      expect(recorded.second.toolCalls.map((c) => c.name)).toEqual(["get_capital"]);
      expect(recorded.second.finishReason).toBe("tool-calls");
      expect(recorded.third.toolCalls.map((c) => c.name)).toEqual(["calculator"]);
      // The reasoning part carries the item's encrypted content, which replay must give back.
      expect(JSON.stringify(recorded.third.reasoning)).toMatch(/reasoningEncryptedContent/);
      const [id] = await recording.sessionIds();

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      expect(await run(replaying)).toEqual(recorded);
    });

    it("records a multi-step agent whose tool results go back as function_call_output items, and replays it with the reasoning's encrypted content intact", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const bodies = aiSdkResponses("responses-openai-reasoning-encrypted-content.1.chunks.txt");
      const upstream = await startFakeUpstream(bodies.map((sse) => ({ sse })));
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
      const run = async (fetch: typeof globalThis.fetch) => {
        const openai = createOpenAI({ apiKey: "k", baseURL: upstream.baseUrl, fetch });
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
      };
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await run(recording);
      await recording.close();
      await upstream.close();
      expect(recorded.text).toBe("The final result is **570**.");
      expect(recorded.steps.map((s) => s.toolResults.map((r) => r.output))).toEqual([
        [19],
        [57],
        [570],
        [],
      ]);
      // The second request carried the reasoning item back with its encrypted content.
      expect(JSON.stringify(upstream.seen[1]?.body.input)).toMatch(/"encrypted_content":"gAAAA/);
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
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

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      expect(await run(replaying)).toEqual(recorded);
    });
  },
);
