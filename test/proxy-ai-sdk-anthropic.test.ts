// The AI SDK's Anthropic model (createAnthropic({fetch})) recorded through seedlineFetch and replayed offline.
// Seen failing without the Messages adapter: the calls went on unrecorded ("expected a sessionId to replay, got none").
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { MemoryBackend, SessionStore, seedlineFetch } from "../src/index.js";
import {
  anthropicSse,
  HAVE_ANTHROPIC_FIXTURES,
  startFakeAnthropic,
} from "./proxy-anthropic-harness.js";

const SKIP = "(skipped: ../shared/fixtures-real/anthropic-sse is absent)";

describe.skipIf(!HAVE_ANTHROPIC_FIXTURES)(
  `the AI SDK's Anthropic model through seedlineFetch ${HAVE_ANTHROPIC_FIXTURES ? "" : SKIP}`,
  () => {
    it("records streamText and generateText calls and replays them with the same text, reasoning, tool calls, usage and finish reason", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const thinking = anthropicSse("ai-sdk/anthropic-clear-thinking.1.chunks.txt");
      const toolCall = anthropicSse("ai-sdk/anthropic-tool-no-args.chunks.txt");
      const upstream = await startFakeAnthropic([
        { sse: thinking },
        { sse: toolCall },
        { sse: thinking },
      ]);
      const tools = {
        // One step only (the default): the call and its result are returned, no second request.
        updateIssueList: tool({
          description: "Update the issue list.",
          inputSchema: jsonSchema<Record<string, unknown>>({ type: "object" }),
          execute: async () => "updated",
        }),
      };
      const run = async (fetch: typeof globalThis.fetch) => {
        const anthropic = createAnthropic({
          apiKey: "k",
          baseURL: `${upstream.baseUrl}/v1`,
          fetch,
        });
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
      };
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await run(recording);
      await recording.close();
      await upstream.close();
      expect(recorded[0]?.reasoning).toBeTruthy();
      expect(recorded[1]?.toolCalls[0]?.[1]).toBe("updateIssueList");
      expect(recorded[1]?.finishReason).toBe("tool-calls");
      expect(recorded[2]?.text).toBe(recorded[0]?.text);
      const [id] = await recording.sessionIds();

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      expect(await run(replaying)).toEqual(recorded);
    });
  },
);
