// Watching a session: SessionStore.watch in process, and session/watch with its session/events
// notifications over an in-memory stream pair (the spawned-process cases are in readers-processes).
import { afterEach, describe, expect, it } from "vitest";
import { RPC_NOTIFICATIONS } from "../../src/generated.js";
import {
  MemoryBackend,
  type SessionEvent,
  SessionStore,
  type WatchBatch,
} from "../../src/index.js";
import { balancedLog, simpleTurn } from "../helpers/builders.js";
import { expectCode, memoryServer } from "../helpers/rpc-fixtures.js";
import { within } from "../helpers/waits.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("SessionStore.watch", () => {
  it("delivers a long catch-up in batches of at most maxBatchEvents, contiguous, then live events", async () => {
    const store = new SessionStore();
    const log = balancedLog(3, { steps: 2, chunksPerStep: 4, toolCallsPerStep: 1 });
    await store.create({ id: "s", seed: log });
    const watch = store.watch("s", { fromSeq: 0, maxBatchEvents: 10 });
    const batches: WatchBatch[] = [];
    for await (const batch of watch) {
      batches.push(batch);
      if (batch.nextSeq === log.length) break;
    }
    expect(batches.every((b) => b.events.length <= 10)).toBe(true);
    expect(batches.flatMap((b) => b.events)).toEqual(log);
    expect(watch.ended).toBe(true);
  });

  // Seen failing when the watch took a log shorter than fromSeq for a deleted one: the first
  // batch was `deleted` with no events.
  it("waits at a fromSeq past the end until the log reaches it", async () => {
    const store = new SessionStore();
    const session = await store.create({ id: "s", seed: simpleTurn(0, 1) });
    const turn2 = simpleTurn(7, 2);
    const watch = store.watch("s", { fromSeq: 10 });
    expect((await watch.ready).nextSeq).toBe(10);
    const first = watch.next();
    await session.append(turn2);
    const batch = await within(first, "the events from seq 10");
    expect(batch.value?.events).toEqual(turn2.slice(3));
    await watch.return();
  });

  it("ends when its signal aborts, also while a next() waits", async () => {
    const store = new SessionStore();
    await store.create({ id: "s", seed: simpleTurn(0, 1) });
    const controller = new AbortController();
    const watch = store.watch("s", { signal: controller.signal });
    await watch.ready;
    const waiting = watch.next();
    controller.abort();
    expect(await within(waiting, "the aborted watch to end")).toEqual({
      done: true,
      value: undefined,
    });
  });

  // Seen failing when a failed `ready` ended the watch first: next() resolved done instead.
  it("rejects ready and next for a session that does not exist", async () => {
    const store = new SessionStore();
    const watch = store.watch("missing");
    await expect(watch.ready).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(watch.next()).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("refuses a negative or fractional fromSeq at once", () => {
    const store = new SessionStore();
    expect(() => store.watch("s", { fromSeq: -1 })).toThrow(
      expect.objectContaining({ code: "INVALID_PARAMS" }),
    );
    expect(() => store.watch("s", { fromSeq: 1.5 })).toThrow(
      expect.objectContaining({ code: "INVALID_PARAMS" }),
    );
  });

  it("ends with a deleted batch when the session is deleted and created anew", async () => {
    const backend = new MemoryBackend();
    const store = new SessionStore({ backend });
    await store.create({ id: "s", seed: simpleTurn(0, 1), meta: { createdAt: 1 } });
    const watch = store.watch("s");
    await watch.ready;
    const next = watch.next();
    const other = new SessionStore({ backend });
    await store.unload("s");
    await other.delete("s");
    await other.create({ id: "s", seed: simpleTurn(0, 1), meta: { createdAt: 2 } });
    const ended = await within(next, "the deleted batch");
    expect(ended.value).toMatchObject({ deleted: true, events: [] });
    expect(await watch.next()).toEqual({ done: true, value: undefined });
  });
});

describe("session/watch over the wire", () => {
  function server() {
    const running = memoryServer();
    cleanups.push(async () => {
      await running.client.close();
      await running.server.closed;
    });
    // A second reader of the server's output: every notification, as sent.
    const notifications: unknown[] = [];
    let buffered = "";
    running.toClient.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        const message = JSON.parse(line) as { method?: string; params?: unknown };
        if (message.method === "session/events") notifications.push(message.params);
      }
    });
    return { ...running, notifications };
  }

  it("sends notifications that match the schema, continuing exactly where the last one stopped", async () => {
    const { client, notifications } = server();
    await client.sessionCreate({ sessionId: "s", seed: simpleTurn(0, 1) });
    const watch = client.watch("s", { fromSeq: 3 });
    const events: SessionEvent[] = [];
    const consumed = (async () => {
      for await (const batch of watch) {
        events.push(...batch.events);
        if (batch.nextSeq === 21) break;
      }
    })();
    await client.sessionAppend({ sessionId: "s", events: simpleTurn(7, 2) });
    await client.sessionAppend({ sessionId: "s", events: simpleTurn(14, 3) });
    await within(consumed, "every event up to seq 20");
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 18 }, (_, i) => i + 3));
    const validate = RPC_NOTIFICATIONS["session/events"].validateParams;
    for (const params of notifications) expect(validate(params), JSON.stringify(params)).toBe(true);
  });

  // Seen failing before ClientWatch.return woke a waiting next(): the first await hung forever.
  it("ends a next() that waits when the client watch is returned", async () => {
    const { client } = server();
    await client.sessionCreate({ sessionId: "s", seed: simpleTurn(0, 1) });
    const watch = client.watch("s");
    await watch.ready;
    const waiting = watch.next();
    await watch.return();
    expect(await within(waiting, "the waiting next to end")).toEqual({
      done: true,
      value: undefined,
    });
  });

  // Seen failing (a hang) when the deleting store forgot its live session only after the backend
  // had told the watch: the watch read the writer's memory, still holding the session, and waited.
  it("ends the watch with end.reason deleted when the session is deleted by the same server", async () => {
    const { client, notifications } = server();
    await client.sessionCreate({ sessionId: "s", seed: simpleTurn(0, 1) });
    const watch = client.watch("s");
    const { watchId } = await watch.ready;
    const next = watch.next();
    await client.sessionDelete({ sessionId: "s" });
    expect((await within(next, "the deleted batch")).value).toMatchObject({ deleted: true });
    expect(notifications.at(-1)).toEqual({
      watchId,
      sessionId: "s",
      events: [],
      nextSeq: 7,
      end: { reason: "deleted" },
    });
  });

  it("answers SESSION_NOT_FOUND for a missing session, and unwatch of an unknown id with {}", async () => {
    const { client } = server();
    await expectCode(client.sessionWatch({ sessionId: "missing" }), "SESSION_NOT_FOUND");
    expect(await client.sessionUnwatch({ watchId: "never" })).toEqual({});
  });
});
