// The AI SDK's OpenAI chat model (createOpenAI({fetch}).chat) recorded through seedlineFetch and replayed offline.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { MemoryBackend, SessionStore, seedlineFetch } from "../src/index.js";
import { HAVE_FIXTURES, sse, startFakeUpstream } from "./proxy-harness.js";

const SKIP = "(skipped: ../shared/fixtures-real/openai-sse is absent)";

describe.skipIf(!HAVE_FIXTURES)(
  `the AI SDK through seedlineFetch ${HAVE_FIXTURES ? "" : SKIP}`,
  () => {
    it("records streamText and generateText calls and replays them offline with the same text, usage and finish reason", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const text = sse("chat_text_stream.sse");
      const upstream = await startFakeUpstream([{ sse: text }, { sse: text }]);
      const run = async (fetch: typeof globalThis.fetch) => {
        const openai = createOpenAI({ apiKey: "k", baseURL: upstream.baseUrl, fetch });
        const model = openai.chat("gpt-4o-mini");
        const streamed = streamText({
          model,
          prompt: "What is the capital of the UK?",
          maxRetries: 0,
        });
        const first = {
          text: await streamed.text,
          usage: await streamed.usage,
          finishReason: await streamed.finishReason,
        };
        const generated = await generateText({ model, prompt: "And again?", maxRetries: 0 });
        const second = {
          text: generated.text,
          usage: generated.usage,
          finishReason: generated.finishReason,
        };
        return [first, second];
      };
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await run(recording);
      await recording.close();
      await upstream.close();
      expect(recorded[0]?.text).toBe("The capital of the UK is London.");
      expect(recorded[0]?.finishReason).toBe("stop");
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(2);

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      expect(await run(replaying)).toEqual(recorded);
    });
  },
);
