// A small tool-using agent on the OpenAI SDK, recorded through seedlineFetch and replayed offline: same tool runs, same answers; a fork replays its inherited prefix.
import OpenAI from "openai";
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { MemoryBackend, SessionStore, seedlineFetch } from "../src/index.js";
import type { ViewItem } from "../src/view/view-items.js";
import { startViewerServer } from "../src/viewer/server/server.js";
import { type FakeAnswer, HAVE_FIXTURES, sse, startFakeUpstream } from "./proxy-harness.js";

const SKIP = "(skipped: ../shared/fixtures-real/openai-sse is absent)";

/** The agent's two tools; the model may ask for others, which the agent answers as unknown. */
const TOOLS: Record<string, (args: Record<string, unknown>) => string> = {
  get_capital: (args) => (args.country === "UK" ? "London" : "unknown"),
  get_country: () => "Mexico",
};

const DEFINITIONS: ChatCompletionTool[] = Object.keys(TOOLS).map((name) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: { country: { type: "string" } } } },
}));

const PROMPTS = [
  "What is the capital of the UK?",
  "Which country are we in?",
  "Thanks, summarise.",
];

/**
 * Three turns; in each, call the model, run the tools it asks for, send the results back, until
 * it answers without tool calls. Returns the tool runs and each turn's final answer.
 */
async function agent(client: OpenAI, turns: number) {
  const messages: ChatCompletionMessageParam[] = [{ role: "system", content: "Use the tools." }];
  const runs: string[] = [];
  const answers: (string | null)[] = [];
  for (const prompt of PROMPTS.slice(0, turns)) {
    messages.push({ role: "user", content: prompt });
    for (;;) {
      const completion = await client.chat.completions
        .stream({
          model: "gpt-4o-mini",
          messages,
          tools: DEFINITIONS,
          stream: true,
          stream_options: { include_usage: true },
        })
        .finalChatCompletion();
      const message = completion.choices[0]?.message;
      if (message === undefined) throw new Error("expected a choice");
      messages.push(message);
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) {
        answers.push(message.content);
        break;
      }
      for (const call of calls) {
        if (call.type !== "function") continue;
        const tool = TOOLS[call.function.name];
        const result = tool
          ? tool(JSON.parse(call.function.arguments || "{}"))
          : `error: no tool ${call.function.name}`;
        runs.push(`${call.function.name}(${call.function.arguments}) = ${result}`);
        messages.push({ role: "tool", tool_call_id: call.id, content: result });
      }
    }
  }
  return { runs, answers };
}

const ANSWERS: FakeAnswer[] = HAVE_FIXTURES
  ? [
      { sse: sse("chat_tool_call_stream.sse") },
      { sse: sse("chat_text_stream.sse") },
      { sse: sse("chat_parallel_tool_calls_stream.sse") },
      { sse: sse("chat_text_stream.sse") },
      { sse: sse("chat_text_stream.sse") },
    ]
  : [];

describe.skipIf(!HAVE_FIXTURES)(
  `an agent loop through seedlineFetch ${HAVE_FIXTURES ? "" : SKIP}`,
  () => {
    it("records three turns with two tools, shows the session in the viewer, and replays it offline with the same tool runs and answers", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const upstream = await startFakeUpstream(ANSWERS);
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await agent(
        new OpenAI({ apiKey: "k", baseURL: upstream.baseUrl, fetch: recording }),
        3,
      );
      await recording.close();
      await upstream.close();
      expect(recorded.runs).toEqual([
        'get_capital({"country":"UK"}) = London',
        expect.stringMatching(/^get_country\(.*\) = Mexico$/),
        expect.stringMatching(/^get_product_name\(.*\) = error: no tool get_product_name$/),
      ]);
      expect(recorded.answers).toHaveLength(3);
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(3);
      expect(events.filter((e) => e.type === "step/start")).toHaveLength(5);
      expect(events.filter((e) => e.type === "tool/result")).toHaveLength(3);

      // The session shows in the viewer: listed, and its timeline holds the tool calls.
      const viewer = await startViewerServer({ store, storeLabel: "memory:", token: "proxy-test" });
      const base = new URL(viewer.url).origin;
      const auth = { headers: { Authorization: "Bearer proxy-test" } };
      const listed = (await (await fetch(`${base}/api/sessions`, auth)).json()) as {
        sessions: { sessionId: string }[];
      };
      expect(listed.sessions.map((s) => s.sessionId)).toContain(id);
      const timeline = (await (
        await fetch(`${base}/api/sessions/${id}/timeline`, auth)
      ).json()) as {
        items: ViewItem[];
      };
      expect(timeline.items.flatMap((i) => (i.kind === "tool-call" ? [i.name] : []))).toEqual([
        "get_capital",
        "get_country",
        "get_product_name",
      ]);
      await viewer.close();

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: id as string });
      const replayed = await agent(
        new OpenAI({ apiKey: "unused", baseURL: upstream.baseUrl, fetch: replaying }),
        3,
      );
      expect(replayed).toEqual(recorded);
    });

    it("replays a child forked at the end of turn 2 from its inherited prefix, and refuses the call past it", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const upstream = await startFakeUpstream(ANSWERS);
      const recording = seedlineFetch({ store, mode: "record" });
      const recorded = await agent(
        new OpenAI({ apiKey: "k", baseURL: upstream.baseUrl, fetch: recording }),
        3,
      );
      await recording.close();
      await upstream.close();
      const [id] = await recording.sessionIds();
      const events = await store.readEvents(id as string);
      const endOfTurn2 = events.find((e) => e.type === "turn/end" && e.data.turn === 2);
      const child = await store.fork(id as string, { boundary: endOfTurn2?.seq as number });

      const replaying = seedlineFetch({ store, mode: "replay", sessionId: child.id });
      const client = new OpenAI({
        apiKey: "unused",
        baseURL: upstream.baseUrl,
        fetch: replaying,
        maxRetries: 0,
      });
      const twoTurns = await agent(client, 2);
      expect(twoTurns.runs).toEqual(recorded.runs);
      expect(twoTurns.answers).toEqual(recorded.answers.slice(0, 2));
      await expect(
        client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: PROMPTS[2] as string }],
        }),
      ).rejects.toMatchObject({ status: 409, code: "REPLAY_EXHAUSTED" });
    });

    it("records two agents calling at once on one session one step after the other", async () => {
      const store = new SessionStore({ backend: new MemoryBackend() });
      const text = sse("chat_text_stream.sse");
      let release!: () => void;
      const hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The first answer streams its first piece, then waits while the second agent calls.
      const upstream = await startFakeUpstream([{ sse: text, hold }, { sse: text }]);
      const recording = seedlineFetch({ store, mode: "record", sessionId: "shared" });
      const client = new OpenAI({
        apiKey: "k",
        baseURL: upstream.baseUrl,
        fetch: recording,
        maxRetries: 0,
      });
      const ask = (content: string) =>
        client.chat.completions
          .stream({ model: "gpt-4o-mini", messages: [{ role: "user", content }], stream: true })
          .finalChatCompletion();
      const first = ask("first agent");
      while (upstream.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const second = ask("second agent");
      // Fails without the session's call queue: the second call, recorded inside the first's
      // open step, was refused (RECORD_REFUSED: that step had no finish chunk yet).
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      const [a, b] = await Promise.all([first, second]);
      await recording.close();
      await upstream.close();
      expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
      const events = await store.readEvents("shared");
      // Each step's events stand together: no step/start before the previous step/end.
      const marks = events
        .filter((e) => e.type === "step/start" || e.type === "step/end")
        .map((e) => e.type);
      expect(marks).toEqual(["step/start", "step/end", "step/start", "step/end"]);
      const prompts = events.flatMap((e) =>
        e.type === "user/message" && e.data.content[0]?.type === "text"
          ? [e.data.content[0].text]
          : [],
      );
      expect(prompts).toEqual(["first agent", "second agent"]);
    });
  },
);
