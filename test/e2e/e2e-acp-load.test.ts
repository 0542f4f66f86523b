// session/load driven by the official ACP SDK against the built server: every recorded session streamed back as session/update.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  balancedLog,
  stepEnd,
  stepStart,
  text,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { type CorpusLog, corpusLogs } from "../helpers/corpus.js";
import { firstTurnEnd, STDIO_MAIN, spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";
import { waitUntil } from "../helpers/waits.js";

const temp = tempDir("seedline-acp-load-");
const store = `sqlite:${temp.dir}/corpus.db`;
afterAll(() => temp.remove());

/** The id each corpus log is imported under (ids repeat across the corpus's folders). */
const idOf = (log: CorpusLog) => `corpus:${log.name}`;
const logs = corpusLogs();

beforeAll(async () => {
  const seeded = spawnedClient(store, "ndjson").client;
  for (const log of logs) await seeded.sessionImport({ log: log.text, sessionId: idOf(log) });
  await seeded.close();
});

/** One session/update notification as received. */
type Received = acp.SessionNotification;

/**
 * Runs `op` as an ACP client of a fresh built server on `store`, every session/update it receives
 * collected in `received`, then ends the server's input.
 */
async function asAcpClient<T>(
  op: (agent: acp.ClientContext, received: Received[]) => Promise<T>,
): Promise<T> {
  const child = spawn(process.execPath, [STDIO_MAIN, "--store", store], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const received: Received[] = [];
  try {
    return await acp
      .client({ name: "seedline-e2e" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        received.push(params);
      })
      .connectWith(stream, (agent) => op(agent, received));
  } finally {
    child.stdin.end();
    expect(await exited).toBe(0);
  }
}

/** What a client should see, as comparable rows, computed from the log's events directly. */
function expectedRows(events: readonly SessionEvent[]): unknown[][] {
  const rows: unknown[][] = [];
  for (const e of events) {
    if (e.type === "user/message" || e.type === "steering/message") {
      for (const b of e.data.content) if (b.type === "text") rows.push([e.seq, "user", b.text]);
    } else if (e.type === "assistant/chunk") {
      const c = e.data.chunk;
      if (c.type === "text-delta") rows.push([e.seq, "message", c.text]);
      if (c.type === "reasoning-delta") rows.push([e.seq, "thought", c.text]);
    } else if (e.type === "tool/call") {
      rows.push([
        e.seq,
        "tool_call",
        stepCallId(e.data),
        e.data.name,
        parsedOrRaw(e.data.arguments),
      ]);
    } else if (e.type === "tool/result") {
      const texts = e.data.content.flatMap((b) => (b.type === "text" ? [b.text] : []));
      rows.push([
        e.seq,
        "result",
        stepCallId(e.data),
        e.data.isError ? "failed" : "completed",
        texts,
      ]);
    } else if (e.type === "todo/write") {
      rows.push([e.seq, "plan", e.data.todos.map((t) => [t.content, t.status])]);
    }
  }
  return rows;
}

/** The received notifications of `sessionId` as the same rows. */
function receivedRows(received: readonly Received[], sessionId: string): unknown[][] {
  return received
    .filter((n) => n.sessionId === sessionId)
    .map((n) => {
      const seq = (n._meta as { seedline: { seq: number } }).seedline.seq;
      const u = n.update;
      switch (u.sessionUpdate) {
        case "user_message_chunk":
          return [seq, "user", u.content.type === "text" ? u.content.text : u.content];
        case "agent_message_chunk":
          return [seq, "message", u.content.type === "text" ? u.content.text : u.content];
        case "agent_thought_chunk":
          return [seq, "thought", u.content.type === "text" ? u.content.text : u.content];
        case "tool_call":
          expect(u.status).toBe("in_progress");
          return [seq, "tool_call", u.toolCallId, u.title, u.rawInput];
        case "tool_call_update":
          return [
            seq,
            "result",
            u.toolCallId,
            u.status,
            (u.content ?? []).map((c) =>
              c.type === "content" && c.content.type === "text" ? c.content.text : c,
            ),
          ];
        case "plan":
          return [seq, "plan", u.entries.map((p) => [p.content, p.status])];
        default:
          return [seq, "unexpected", u];
      }
    });
}

/** The ACP tool call id of a call or result: its call id scoped to its step, `TURN.STEP/CALLID`. */
function stepCallId(data: { turn: number; step: number; callId: string }): string {
  return `${data.turn}.${data.step}/${data.callId}`;
}

/** A tool call's arguments as a client gets them: parsed, or the string when not JSON. */
function parsedOrRaw(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

async function load(agent: acp.ClientContext, sessionId: string) {
  return agent.request(acp.methods.agent.session.load, {
    sessionId,
    cwd: "/work/loaded",
    mcpServers: [],
  });
}

describe("session/load with the official ACP client", () => {
  it("advertises loadSession and loads every recorded session, event by event", async () => {
    const seen = await asAcpClient(async (agent, received) => {
      const init = await agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: "seedline-e2e", version: "1.0.0" },
      });
      const answers: unknown[] = [];
      for (const log of logs) {
        // A session is loaded once the answer is in: every update came before it.
        answers.push(await load(agent, idOf(log)));
        expect(receivedRows(received, idOf(log)), log.name).toEqual(
          expectedRows(log.events as SessionEvent[]),
        );
      }
      return { init, answers, received };
    });

    expect(seen.init.agentCapabilities?.loadSession).toBe(true);
    expect(seen.answers).toEqual(
      logs.map((log) => ({ _meta: { seedline: { nextSeq: log.events.length } } })),
    );
    // The corpus exercises every kind the mapping sends.
    const kinds = new Set(seen.received.map((n) => n.update.sessionUpdate));
    expect([...kinds].sort()).toEqual([
      "agent_message_chunk",
      "agent_thought_chunk",
      "plan",
      "tool_call",
      "tool_call_update",
      "user_message_chunk",
    ]);
    // Every tool call ends with the status of its result, and the kinds come from the tool names.
    const calls = seen.received.flatMap((n) => (n.update.sessionUpdate === "tool_call" ? [n] : []));
    expect(calls.length).toBe(32);
    expect(
      calls.find((n) => n.update.sessionUpdate === "tool_call" && n.update.title === "bash")
        ?.update,
    ).toMatchObject({ kind: "execute" });
  });

  it("loads a forked session with its inherited prefix", async () => {
    const source = logs.find((l) => l.name === "subagent-fork/session.jsonl");
    if (source === undefined) throw new Error("expected the subagent-fork scenario");
    const events = source.events as SessionEvent[];
    const boundary = firstTurnEnd(events);
    const seeded = spawnedClient(store, "ndjson").client;
    const fork = await seeded.sessionFork({
      sessionId: idOf(source),
      boundary,
      childSessionId: "forked-for-load",
    });
    await seeded.close();
    expect(fork.header.seedLength).toBe(boundary + 1);

    const rows = await asAcpClient(async (agent, received) => {
      await load(agent, "forked-for-load");
      return receivedRows(received, "forked-for-load");
    });
    const prefix = expectedRows(events.slice(0, boundary + 1));
    expect(prefix.length).toBeGreaterThan(0);
    expect(rows).toEqual(prefix);
  });

  it("answers an unknown session with ACP's resource-not-found code", async () => {
    const error = await asAcpClient((agent) =>
      load(agent, "nope").then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toMatchObject({
      code: -32002,
      data: { code: "SESSION_NOT_FOUND", sessionId: "nope" },
    });
  });

  it("goes on with live appends as session/update through session/watch with format acp", async () => {
    const id = "watched-live";
    const seeded = spawnedClient(store, "ndjson").client;
    // Stored without a cwd: it loads with the cwd the client gives.
    await seeded.sessionCreate({ sessionId: id, seed: balancedLog(1) });
    await seeded.close();

    const rows = await asAcpClient(async (agent, received) => {
      const loaded = await load(agent, id);
      const nextSeq = loaded._meta?.seedline as { nextSeq: number };
      const watch = await agent.request<{ watchId: string }>("session/watch", {
        sessionId: id,
        fromSeq: nextSeq.nextSeq,
        format: "acp",
      });
      const appended: SessionEvent[] = [
        turnStart(7, 2),
        userMessage(8, "again"),
        stepStart(9, 2, 1),
        assistantChunk(10, 2, 1, { type: "reasoning-delta", index: 0, text: "hm" }),
        assistantChunk(11, 2, 1, { type: "text-delta", index: 1, text: "hi " }),
        assistantChunk(12, 2, 1, { type: "text-delta", index: 1, text: "there" }),
        assistantMessage(13, 2, 1, [text("hi there")], { sourceEventSeqs: [11, 12] }),
        stepEnd(14, 2, 1),
        turnEnd(15, 2),
      ];
      await agent.request("session/append", { sessionId: id, events: appended });
      await waitUntil(
        () => received.filter((n) => n.sessionId === id).length === 6,
        "the appended events' updates",
      );
      // The first two came from the load, the rest from the watch.
      for (const n of received.slice(2)) {
        expect(n._meta).toMatchObject({ seedline: { watchId: watch.watchId } });
      }
      return receivedRows(received, id);
    });
    expect(rows).toEqual([
      [1, "user", "prompt of turn 1"],
      [3, "message", "…"],
      [8, "user", "again"],
      [10, "thought", "hm"],
      [11, "message", "hi "],
      [12, "message", "there"],
    ]);
  });
});
