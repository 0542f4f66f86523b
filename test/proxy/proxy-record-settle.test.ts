// Record mode answers the caller as the upstream does and stores the step just after: settled() and close() wait for it.
import { expect, it } from "vitest";
import { type SessionEvent, seedlineFetch, startProxyServer } from "../../src/index.js";
import {
  describeWith,
  HAVE,
  newDb,
  openaiSse,
  openStore,
  startFakeUpstream,
} from "../helpers/proxy-harness.js";

/** Checks that `events` hold two steps and nothing interleaves inside one: the first ends before the second starts. */
function expectTwoStepsInOrder(events: readonly SessionEvent[]): void {
  const types = events.map((e) => e.type);
  const starts = types.flatMap((t, i) => (t === "step/start" ? [i] : []));
  const ends = types.flatMap((t, i) => (t === "step/end" ? [i] : []));
  expect(starts.length).toBe(2);
  expect(ends.length).toBe(2);
  expect(ends[0] as number).toBeLessThan(starts[1] as number);
}

function chatCall(baseUrl: string, content: string): [string, RequestInit] {
  return [
    `${baseUrl}/chat/completions`,
    {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content }],
        stream: true,
      }),
    },
  ];
}

describeWith("openai-chat", "record mode ends the caller's response with the upstream's", () => {
  const body = HAVE["openai-chat"] ? openaiSse("chat_text_stream.sse") : "";

  // Before the caller's body ended only once its step was stored, so this held trivially; now
  // the step is stored after the body ends and close() must wait for it (without that wait the
  // log ended at step/start or inside the chunks).
  it("stores the step whole when close() follows a fully read response at once", async () => {
    const db = newDb();
    const store = await openStore(db);
    const upstream = await startFakeUpstream([{ sse: body }]);
    const recording = seedlineFetch({ store, mode: "record", sessionId: "closing" });
    const response = await recording(...chatCall(upstream.baseUrl, "hi"));
    // The caller gets exactly the upstream's bytes.
    expect(await response.text()).toBe(body);
    await recording.close();
    await upstream.close();
    const types = (await store.readEvents("closing")).map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["turn/start", "user/message", "step/start"]);
    expect(types.filter((t) => t === "assistant/chunk").length).toBeGreaterThan(1);
    expect(types.slice(-3)).toEqual(["assistant/message", "step/end", "turn/end"]);
    await store.close();
  });

  // The upstream's body is read once a server takes it or the caller reads it; without the read
  // at the next turn of the event loop, a response nobody reads was never recorded and settled()
  // never resolved (seen: the test timed out).
  it("records a call whose response nobody reads", async () => {
    const store = await openStore(newDb());
    const upstream = await startFakeUpstream([{ sse: body }]);
    const recording = seedlineFetch({ store, mode: "record", sessionId: "unread" });
    const response = await recording(...chatCall(upstream.baseUrl, "never read"));
    expect(response.status).toBe(200);
    await recording.settled();
    const types = (await store.readEvents("unread")).map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["turn/start", "user/message", "step/start"]);
    expect(types.slice(-2)).toEqual(["assistant/message", "step/end"]);
    // The body is still there for a caller that reads it late.
    expect(await response.text()).toBe(body);
    await recording.close();
    await upstream.close();
    await store.close();
  });

  it("settled() waits for the step; a second call on the session follows it in order", async () => {
    const db = newDb();
    const store = await openStore(db);
    const upstream = await startFakeUpstream([{ sse: body }, { sse: body }]);
    const recording = seedlineFetch({ store, mode: "record", sessionId: "two" });
    // Both calls at once: the second waits until the first's step is stored whole.
    const [first, second] = await Promise.all([
      recording(...chatCall(upstream.baseUrl, "one")),
      recording(...chatCall(upstream.baseUrl, "two")),
    ]);
    expect(await first.text()).toBe(body);
    expect(await second.text()).toBe(body);
    await recording.settled();
    const events = await store.readEvents("two");
    // Nothing interleaves inside a step: the first ends before the second starts.
    expectTwoStepsInOrder(events);
    await recording.close();
    await upstream.close();
    await store.close();
  });

  // Fails without the fix (the second call waited for the first's turn before going upstream):
  // the second response never came while the first was held, and the test timed out.
  it("answers a second call on the session while the first still streams; their steps stay in order", async () => {
    const db = newDb();
    const store = await openStore(db);
    let letGo!: () => void;
    const hold = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const upstream = await startFakeUpstream([{ sse: body, hold }, { sse: body }]);
    const recording = seedlineFetch({ store, mode: "record", sessionId: "overlap" });
    const first = await recording(...chatCall(upstream.baseUrl, "one"));
    const firstText = first.text();
    const second = await recording(...chatCall(upstream.baseUrl, "two"));
    expect(await second.text()).toBe(body);
    letGo();
    expect(await firstText).toBe(body);
    await recording.settled();
    const events = await store.readEvents("overlap");
    const users = events.flatMap((e) =>
      e.type === "user/message" ? [JSON.stringify(e.data)] : [],
    );
    expect(users.length).toBe(2);
    expect(users[0]).toContain("one");
    expect(users[1]).toContain("two");
    expectTwoStepsInOrder(events);
    await recording.close();
    await upstream.close();
    await store.close();
  });

  // Fails without the wait (each step was stored as soon as its body ended): "quick" was in the
  // log while "held" was still being relayed.
  it("stores a call's step once no call is being relayed, or at once on settled()", async () => {
    const store = await openStore(newDb());
    let letGo!: () => void;
    const hold = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    // The first answer streams its first piece, then waits.
    const upstream = await startFakeUpstream([{ sse: body, hold }, { sse: body }]);
    const server = await startProxyServer({
      store,
      mode: "record",
      upstreams: { openai: upstream.baseUrl },
    });
    const call = (session: string, content: string) =>
      fetch(...chatCall(`${server.url}/s/${session}/openai/v1`, content));
    const prompts = async (session: string) => userMessages(await store.readEvents(session));
    const held = await call("b", "held");
    const heldText = held.text();
    const quick = await call("a", "quick");
    expect(await quick.text()).toBe(body);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // "quick" ended, but "held" is still being relayed: its recording waits for a pause.
    expect(await prompts("a")).toEqual([]);
    // settled() lets the waiting recordings go at once (and then waits for "held" too).
    const settling = server.settled();
    for (let tries = 0; (await prompts("a")).length === 0 && tries < 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await prompts("a")).toEqual(["quick"]);
    letGo();
    expect(await heldText).toBe(body);
    await settling;
    expect(await prompts("b")).toEqual(["held"]);
    await server.close();
    await upstream.close();
    await store.close();
  });
});

/** The text of each user message of `events`, in order. */
function userMessages(events: readonly SessionEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === "user/message" && e.data.content[0]?.type === "text" ? [e.data.content[0].text] : [],
  );
}
