// session/load over an in-memory stream pair: a client that stops reading holds the load instead of the server buffering the log.
//
// Seen failing without the backpressure (sendAcpHistory handing every notification to the transport without awaiting
// its write): the unread output held all 20,000 notifications (3,998,253 bytes) against the bound of 256 KiB.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type SessionEvent, SessionStore } from "../../src/index.js";
import {
  assistantChunk,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { frame, type MemoryServer, memoryServer } from "../helpers/rpc-fixtures.js";
import { within } from "../helpers/waits.js";

const CHUNKS = 20_000;

/** One turn whose one step streamed `CHUNKS` text deltas. */
function longLog(): SessionEvent[] {
  const events: SessionEvent[] = [turnStart(0, 1), userMessage(1, "go"), stepStart(2, 1, 1)];
  for (let i = 0; i < CHUNKS; i++) {
    events.push(
      assistantChunk(events.length, 1, 1, { type: "text-delta", index: 0, text: `d${i} ` }),
    );
  }
  events.push(stepEnd(events.length, 1, 1), turnEnd(events.length + 1, 1));
  return events;
}

/** Bytes the server wrote that the client has not read (both sides of the pipe). */
function unread(server: MemoryServer): number {
  return server.toClient.readableLength + server.toClient.writableLength;
}

/** Waits until `value()` has not changed for `quietMs`, then gives it. */
async function settled(value: () => number, quietMs = 400): Promise<number> {
  let last = -1;
  for (;;) {
    const now = value();
    if (now === last) return now;
    last = now;
    await sleep(quietMs);
  }
}

let running: MemoryServer | undefined;
afterEach(async () => {
  running?.toServer.end();
  running?.toClient.resume();
  await running?.server.closed;
  running = undefined;
});

describe("session/load backpressure", () => {
  it("holds the load while the client reads nothing, then sends the rest in order", async () => {
    const store = new SessionStore();
    const log = longLog();
    await store.create({ id: "long", seed: log });
    const server = memoryServer({ store }, false);
    running = server;

    const request = { jsonrpc: "2.0", id: 1, method: "session/load", params: {} };
    const params = { sessionId: "long", cwd: "/w", mcpServers: [] };
    server.toServer.write(frame("ndjson", JSON.stringify({ ...request, params })));

    // Nobody reads: what waits is the pipe's buffers and a window of notifications, not the log.
    const held = await within(
      settled(() => unread(server)),
      "the load to stall",
    );
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(256 * 1024);

    // Reading on, every update arrives, in log order, and then the answer.
    let text = "";
    server.toClient.setEncoding("utf8");
    server.toClient.on("data", (chunk: string) => {
      text += chunk;
    });
    const answer = await within(
      (async () => {
        for (;;) {
          const line = text.split("\n").find((l) => l.includes('"id":1'));
          if (line !== undefined) return JSON.parse(line) as { result: unknown };
          await sleep(20);
        }
      })(),
      "the session/load answer",
    );
    const messages = text
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { method?: string; params?: { update: { content: unknown } } });
    const updates = messages.filter((m) => m.method === "session/update");
    expect(updates.length).toBe(CHUNKS + 1);
    expect(updates[0]?.params?.update.content).toEqual({ type: "text", text: "go" });
    expect(updates.slice(1).map((m) => m.params?.update.content)).toEqual(
      Array.from({ length: CHUNKS }, (_, i) => ({ type: "text", text: `d${i} ` })),
    );
    expect(messages.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      ...answer,
    });
    expect(answer.result).toEqual({ _meta: { seedline: { nextSeq: log.length } } });
  });
});

describe("session/load with the server's tool presenter", () => {
  it("titles tool calls as ServeOptions.presentTool says, on load and on an ACP watch", async () => {
    const store = new SessionStore();
    const turn = (from: number, n: number, id: string): SessionEvent[] => [
      turnStart(from, n),
      userMessage(from + 1, "run it"),
      stepStart(from + 2, n, 1),
      toolCall(from + 3, n, 1, id, "bash", '{"command":"ls"}'),
      toolResult(from + 4, n, 1, id, { sourceEventSeqs: [from + 3] }),
      stepEnd(from + 5, n, 1),
      turnEnd(from + 6, n),
    ];
    await store.create({ id: "tools", seed: turn(0, 1, "c1") });
    const server = memoryServer(
      {
        store,
        presentTool: (c) => ({
          title: `$ ${(JSON.parse(c.arguments) as { command: string }).command}`,
        }),
      },
      false,
    );
    running = server;
    const lines: { id?: number; method?: string; params?: { update: Record<string, unknown> } }[] =
      [];
    let rest = "";
    server.toClient.setEncoding("utf8");
    server.toClient.on("data", (chunk: string) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const part of parts) lines.push(JSON.parse(part));
    });
    const send = (id: number, method: string, params: object) =>
      server.toServer.write(
        frame("ndjson", JSON.stringify({ jsonrpc: "2.0", id, method, params })),
      );
    const answered = (id: number) =>
      within(
        (async () => {
          while (!lines.some((l) => l.id === id)) await sleep(10);
        })(),
        `the answer to request ${id}`,
      );

    send(1, "session/load", { sessionId: "tools", cwd: "/w", mcpServers: [] });
    await answered(1);
    send(2, "session/watch", { sessionId: "tools", fromSeq: 7, format: "acp" });
    await answered(2);
    send(3, "session/append", { sessionId: "tools", events: turn(7, 2, "c2") });
    await within(
      (async () => {
        while (lines.filter((l) => l.method === "session/update").length < 6) await sleep(10);
      })(),
      "the watch's updates",
    );
    const calls = lines
      .filter((l) => l.params?.update.sessionUpdate === "tool_call")
      .map((l) => [l.params?.update.toolCallId, l.params?.update.title, l.params?.update.kind]);
    expect(calls).toEqual([
      ["1.1/c1", "$ ls", "execute"],
      ["2.1/c2", "$ ls", "execute"],
    ]);
    // The watch sent no raw events: an ACP watch speaks session/update only.
    expect(lines.some((l) => l.method === "session/events")).toBe(false);
  });
});
