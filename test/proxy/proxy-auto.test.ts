// Auto mode on every API (Chat Completions, Responses, Messages), streamed and not, through seedlineFetch and the spawned `seedline proxy`: replay while the agent repeats the recording, fork where it diverges, record the branch live in the child.
// Seen failing without auto mode: seedlineFetch took "auto" for record mode (the upstream heard
// every call: [1, 2, …] instead of [0, 0, 1, 2]) and `seedline proxy --mode auto` exited 2.
import { expect, it } from "vitest";
import { type SessionStore, seedlineFetch } from "../../src/index.js";
import { AGENTS, type Agent, type AgentOptions, PROMPTS } from "../helpers/proxy-agents.js";
import {
  type Api,
  describeWith,
  newDb,
  openStore,
  startFakeUpstream,
  startSeedlineProxy,
  type Transport,
  validateReplayable,
} from "../helpers/proxy-harness.js";

/** The prompts of an agent that asks something else in its third turn. */
const CHANGED = [PROMPTS[0], PROMPTS[1], "Now, the capital of France?"];

/** The three turns of {@link PROMPTS} recorded into the store at `db` under `id`; the store closed after. */
async function recordThreeTurns(agent: Agent, db: string, id: string, options: AgentOptions) {
  const upstream = await startFakeUpstream(agent.answers(), agent.provider);
  const recording = await startSeedlineProxy({
    transport: "fetch",
    mode: "record",
    db,
    sessionId: id,
    provider: agent.provider,
    upstream: upstream.baseUrl,
  });
  const recorded = await agent.run(recording, PROMPTS, options);
  await recording.stop();
  await upstream.close();
  // Each of the first two turns ran tools, and each turn ended with an answer.
  expect(recorded.runs.length).toBeGreaterThanOrEqual(2);
  expect(recorded.answers.map((a) => (a ?? "").length > 0)).toEqual([true, true, true]);
  return recorded;
}

/** The seq of the `turn/end` of `turn` in `id`. */
async function endOfTurn(store: SessionStore, id: string, turn: number): Promise<number> {
  const events = await store.readEvents(id);
  const end = events.find((e) => e.type === "turn/end" && e.data.turn === turn);
  return end?.seq as number;
}

/**
 * The recorded session `loop` run again in auto mode by an agent with `prompts`, the upstream
 * answering `live` text answers: what the agent did, the upstream's request count after each
 * turn, and the answers' seedline headers.
 */
async function runAuto(
  agent: Agent,
  db: string,
  transport: Transport,
  prompts: readonly string[],
  live: number,
  stream: boolean,
) {
  const upstream = await startFakeUpstream(
    Array.from({ length: live }, () => agent.text()),
    agent.provider,
  );
  const auto = await startSeedlineProxy({
    transport,
    mode: "auto",
    db,
    sessionId: "loop",
    provider: agent.provider,
    upstream: upstream.baseUrl,
  });
  const heard: number[] = [];
  const run = await agent.run(auto, prompts, {
    stream,
    afterTurn: () => heard.push(upstream.seen.length),
  });
  const listed = await auto.sessionIds?.();
  await auto.stop();
  await upstream.close();
  const asked = upstream.seen.map((r) => agent.promptOf(r.body));
  if (listed !== undefined) expect(listed).toEqual(auto.sessions());
  return { run, heard, asked, seen: auto.seen, sessions: auto.sessions() };
}

const replayedFrom = (session: string, n: number) =>
  Array.from({ length: n }, () => ({ session, replayed: "true" }));

for (const api of Object.keys(AGENTS) as Api[]) {
  const agent = AGENTS[api];
  describeWith(api, `auto mode on ${api}`, () => {
    for (const transport of ["fetch", "proxy"] as const) {
      for (const stream of [true, false]) {
        const how = `${stream ? "streamed" : "not streamed"}, through ${transport === "fetch" ? "seedlineFetch" : "the spawned `seedline proxy --mode auto`"}`;
        it(`replays turns 1–2, forks at the end of turn 2 when the third prompt changes, and records turns 3 and 4 live in the child (${how})`, async () => {
          const db = newDb();
          const recorded = await recordThreeTurns(agent, db, "loop", { stream });
          const store = await openStore(db);
          const parentBefore = JSON.stringify(await store.readEvents("loop"));
          const boundary = await endOfTurn(store, "loop", 2);
          await store.close();

          const prompts = [...CHANGED, "Thank you."];
          const auto = await runAuto(agent, db, transport, prompts, 2, stream);
          // Turns 1–2 (four calls) came from the recording; turns 3 and 4 (one call each) went live.
          expect(auto.heard).toEqual([0, 0, 1, 2]);
          expect(auto.run.runs).toEqual(recorded.runs);
          expect(auto.run.answers.slice(0, 2)).toEqual(recorded.answers.slice(0, 2));
          expect(auto.asked).toEqual([CHANGED[2], "Thank you."]);
          const [parent, child] = auto.sessions;
          expect(parent).toBe("loop");
          expect(child).toBeDefined();
          expect(child).not.toBe("loop");
          expect(auto.seen).toEqual([
            ...replayedFrom("loop", 4),
            { session: child, replayed: "false" },
            { session: child, replayed: "false" },
          ]);

          const reopened = await openStore(db);
          const header = (await reopened.read(child as string)).header;
          expect(header).toMatchObject({ parentSession: "loop", seedLength: boundary + 1 });
          const own = (await reopened.readEvents(child as string)).slice(boundary + 1);
          expect(own.flatMap((e) => (e.type === "turn/start" ? [e.data.turn] : []))).toEqual([
            3, 4,
          ]);
          expect(own.filter((e) => e.type === "step/start")).toHaveLength(2);
          const prompt = own.find((e) => e.type === "user/message");
          expect(prompt?.type === "user/message" && prompt.data.content).toEqual([
            { type: "text", text: CHANGED[2] },
          ]);
          expect(JSON.stringify(await reopened.readEvents("loop"))).toBe(parentBefore);
          await reopened.close();
          await validateReplayable(`sqlite:${db}`, child as string);
        });
      }
    }

    it("goes live past the end of the recording: forks at its end and records the new turn in the child", async () => {
      const db = newDb();
      const recorded = await recordThreeTurns(agent, db, "loop", { stream: false });
      const store = await openStore(db);
      const length = (await store.readEvents("loop")).length;
      await store.close();
      const auto = await runAuto(agent, db, "fetch", [...PROMPTS, "One more thing."], 1, false);
      expect(auto.heard).toEqual([0, 0, 0, 1]);
      expect(auto.run.answers.slice(0, 3)).toEqual(recorded.answers);
      const [, child] = auto.sessions;
      const reopened = await openStore(db);
      const header = (await reopened.read(child as string)).header;
      expect(header).toMatchObject({ parentSession: "loop", seedLength: length });
      const own = (await reopened.readEvents(child as string)).slice(length);
      expect(own.flatMap((e) => (e.type === "turn/start" ? [e.data.turn] : []))).toEqual([4]);
      expect((await reopened.readEvents("loop")).length).toBe(length);
      await reopened.close();
    });

    it("diverging in turn 1 records into a new session naming the recorded one as parent, inheriting nothing (through the spawned proxy)", async () => {
      const db = newDb();
      await recordThreeTurns(agent, db, "loop", { stream: true });
      const store = await openStore(db);
      const before = JSON.stringify(await store.readEvents("loop"));
      expect(() => seedlineFetch({ store, mode: "auto" })).toThrow(TypeError);
      await store.close();
      const auto = await runAuto(agent, db, "proxy", ["Something else entirely."], 1, true);
      const [child] = auto.sessions;
      expect(auto.seen).toEqual([{ session: child, replayed: "false" }]);
      expect(child).not.toBe("loop");
      const reopened = await openStore(db);
      const header = (await reopened.read(child as string)).header;
      expect(header.parentSession).toBe("loop");
      expect(header.seedLength ?? 0).toBe(0);
      const events = await reopened.readEvents(child as string);
      expect(events.filter((e) => e.type === "turn/start")).toHaveLength(1);
      expect(JSON.stringify(await reopened.readEvents("loop"))).toBe(before);
      await reopened.close();
      await validateReplayable(`sqlite:${db}`, child as string);
    });
  });
}
