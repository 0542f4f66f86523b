// A small tool-using agent recorded and replayed offline: same tool runs, same answers — on the OpenAI SDK through seedlineFetch (a fork replays its inherited prefix; two agents on one session record one step after the other), and on every API through the spawned `seedline proxy`. (Auto mode: proxy-auto.test.ts.)
import type OpenAI from "openai";
import { expect, it } from "vitest";
import type { ViewItem } from "../../src/view/view-items.js";
import { startViewerServer } from "../../src/viewer/server/server.js";
import { AGENTS, PROMPTS } from "../helpers/proxy-agents.js";
import {
  type Api,
  describeWith,
  expectFaithful,
  newDb,
  OPENAI_SDK,
  openaiSse,
  openStore,
  type Provider,
  recordThenReplay,
  type Sdk,
  startFakeUpstream,
  startSeedlineProxy,
} from "../helpers/proxy-harness.js";

const agent = AGENTS["openai-chat"];

/** The agents make their own clients: they are given where to send their calls. */
const AT = (provider: Provider): Sdk<{ baseUrl: string; fetch: typeof fetch }> => ({
  provider,
  client: (baseUrl, _key, fetch) => ({ baseUrl, fetch }),
});

/** The agent's three turns recorded through seedlineFetch, then replayed from the store. */
const recordAgent = () =>
  recordThenReplay({
    sdk: AT("openai"),
    answers: agent.answers(),
    drive: (at) => agent.run(at, PROMPTS),
  });

describeWith("openai-chat", "an agent loop through seedlineFetch", () => {
  it("records three turns with two tools, shows the session in the viewer, and replays it offline with the same tool runs and answers", async () => {
    const run = await recordAgent();
    const { recorded, store, id } = run;
    expect(recorded.runs).toEqual([
      'get_capital({"country":"UK"}) = London',
      expect.stringMatching(/^get_country\(.*\) = Mexico$/),
      expect.stringMatching(/^get_product_name\(.*\) = error: no tool get_product_name$/),
    ]);
    expect(recorded.answers).toHaveLength(3);
    const events = await store.readEvents(id);
    expect(events.filter((e) => e.type === "turn/start")).toHaveLength(3);
    expect(events.filter((e) => e.type === "step/start")).toHaveLength(5);
    expect(events.filter((e) => e.type === "tool/result")).toHaveLength(3);

    // The session shows in the viewer: listed, and its timeline holds the tool calls.
    const viewer = await startViewerServer({ store, storeLabel: "sqlite:", token: "proxy-test" });
    const base = new URL(viewer.url).origin;
    const auth = { headers: { Authorization: "Bearer proxy-test" } };
    const listed = (await (await fetch(`${base}/api/sessions`, auth)).json()) as {
      sessions: { sessionId: string }[];
    };
    expect(listed.sessions.map((s) => s.sessionId)).toContain(id);
    const timeline = (await (await fetch(`${base}/api/sessions/${id}/timeline`, auth)).json()) as {
      items: ViewItem[];
    };
    expect(timeline.items.flatMap((i) => (i.kind === "tool-call" ? [i.name] : []))).toEqual([
      "get_capital",
      "get_country",
      "get_product_name",
    ]);
    await viewer.close();
    expect(run.replayed).toEqual(recorded);
    await store.close();
  });

  it("replays a child forked at the end of turn 2 from its inherited prefix, and refuses the call past it", async () => {
    const run = await recordAgent();
    const { recorded, store, id } = run;
    const events = await store.readEvents(id);
    const endOfTurn2 = events.find((e) => e.type === "turn/end" && e.data.turn === 2);
    const child = await store.fork(id, { boundary: endOfTurn2?.seq as number });

    const replaying = await startSeedlineProxy({
      transport: "fetch",
      mode: "replay",
      db: run.db,
      store,
      sessionId: child.id,
      provider: "openai",
    });
    const twoTurns = await agent.run(replaying, PROMPTS.slice(0, 2));
    expect(twoTurns.runs).toEqual(recorded.runs);
    expect(twoTurns.answers).toEqual(recorded.answers.slice(0, 2));
    await expect(
      OPENAI_SDK.client(replaying.baseUrl, "unused", replaying.fetch).chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: PROMPTS[2] }],
      }),
    ).rejects.toMatchObject({ status: 409, code: "REPLAY_EXHAUSTED" });
    await replaying.stop();
    await store.close();
  });

  it("records two agents calling at once on one session one step after the other", async () => {
    const text = openaiSse("chat_text_stream.sse");
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first answer streams its first piece, then waits while the second agent calls.
    const upstream = await startFakeUpstream([{ sse: text, hold }, { sse: text }]);
    const db = newDb();
    const recording = await startSeedlineProxy({
      transport: "fetch",
      mode: "record",
      db,
      sessionId: "shared",
      provider: "openai",
      upstream: upstream.baseUrl,
    });
    const client: OpenAI = OPENAI_SDK.client(upstream.baseUrl, "k", recording.fetch);
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
    await recording.stop();
    await upstream.close();
    expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
    const store = await openStore(db);
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
    await store.close();
  });
});

/** Where each API's calls reach the upstream. */
const UPSTREAM_PATH: Record<Api, string> = {
  "openai-chat": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
  "anthropic-messages": "/v1/messages",
};

for (const each of Object.values(AGENTS)) {
  describeWith(each.api, `the ${each.api} agent through the spawned seedline proxy`, () => {
    // The session named in the base URL (/s/ID/…) on the OpenAI routes, with --session on Anthropic's.
    const sessionIn = each.provider === "openai" ? "path" : "option";
    it(`records three turns (session given as ${sessionIn}) and replays them offline after a restart, refusing the call past the end`, async () => {
      const id = `${each.api}-turns`;
      const run = await recordThenReplay({
        sdk: AT(each.provider),
        answers: each.answers(),
        transport: "proxy",
        sessionId: id,
        sessionIn,
        drive: (at) => each.run(at, PROMPTS),
        replayDrive: async (at) => {
          const replayed = await each.run(at, PROMPTS);
          const past = await each.run(at, ["One more thing."]).catch((e: unknown) => e);
          const refused = past as { status?: number; error?: unknown; headers?: Headers };
          expect(refused.status).toBe(409);
          expect(JSON.stringify(refused.error)).toContain("REPLAY_EXHAUSTED");
          expect(refused.headers?.get("x-seedline-replayed")).toBe("true");
          expect(refused.headers?.get("x-seedline-session")).toBe(id);
          return replayed;
        },
      });
      expect(run.recorded.runs.length).toBeGreaterThanOrEqual(2);
      expect(run.upstream.seen.map((s) => s.url)).toEqual(
        Array.from({ length: 5 }, () => UPSTREAM_PATH[each.api]),
      );
      await expectFaithful(run);
    });
  });
}
