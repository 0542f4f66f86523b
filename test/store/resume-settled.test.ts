// Resuming a log from its settled part without its chunks (SQLite, PostgreSQL, JSONL): the state a full read gives, damage still found.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  MemoryBackend,
  type SessionBackend,
  type SessionEvent,
  SessionStore,
} from "../../src/index.js";
import { serializeEvents } from "../../src/log/serialized-event.js";
import type { JsonlBackend } from "../../src/store/jsonl/jsonl-backend.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import {
  assistantChunk,
  balancedLog,
  stepStart,
  TIME,
  toolCall,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { makeJsonlHarness } from "../helpers/jsonl-harness.js";
import { makePostgresHarness, POSTGRES_SKIP } from "../helpers/postgres-harness.js";
import { makeSqliteHarness } from "../helpers/sqlite-harness.js";

/** A backend kind over fresh storage, with raw SQL to remove a row in place. */
interface Resumable {
  open(): Promise<SessionBackend>;
  /** Deletes the event row at `seq`, as another program damaging the store would. */
  dropRow(id: string, seq: number): Promise<void>;
  garble(id: string, seq: number): Promise<void>;
  cleanup(): Promise<void>;
  /**
   * Whether resuming finds a missing row among those it does not read (SQLite counts the rows);
   * PostgreSQL rows are written whole by transactions, and are checked when read.
   */
  readonly findsHoles: boolean;
  /**
   * Whether resuming finds a garbled chunk (JSONL: a line that is not in canonical form is read
   * with every check); the SQL backends check such rows when they are read.
   */
  readonly findsGarbled: boolean;
  /** Whether `loadSettled` with a tail limit reads the last turn/end and the page after it along. */
  readonly readsTail: boolean;
}

const kinds: [string, () => Promise<Resumable>][] = [
  [
    "sqlite",
    async () => {
      const harness = await makeSqliteHarness();
      let path: string | undefined;
      return {
        open: async () => {
          const backend = await harness.open();
          path = (backend as unknown as { path: string }).path;
          return backend;
        },
        dropRow: async (id, seq) => {
          const db = new Database(path as string);
          db.prepare("DELETE FROM events WHERE session_id = ? AND seq = ?").run(id, seq);
          db.close();
        },
        garble: (id, seq) => harness.tamper.garble(id, seq),
        cleanup: () => harness.cleanup(),
        findsHoles: true,
        findsGarbled: false,
        readsTail: false,
      };
    },
  ],
  [
    "jsonl",
    async () => {
      const harness = await makeJsonlHarness();
      const root = { dir: "" };
      return {
        open: async () => {
          const backend = (await harness.open()) as JsonlBackend;
          root.dir = backend.root;
          return backend;
        },
        dropRow: async (id, seq) => {
          const path = join(root.dir, "sessions", logFileName(id));
          const lines = readFileSync(path, "utf8").split("\n");
          lines.splice(seq + 1, 1);
          writeFileSync(path, lines.join("\n"));
        },
        garble: (id, seq) => harness.tamper.garble(id, seq),
        cleanup: () => harness.cleanup(),
        // A missing line moves every later line off its seq: the next parsed line shows it.
        findsHoles: true,
        findsGarbled: true,
        readsTail: false,
      };
    },
  ],
  ...(POSTGRES_SKIP === undefined
    ? [
        [
          "postgres",
          async (): Promise<Resumable> => {
            const harness = await makePostgresHarness();
            return {
              open: () => harness.open(),
              dropRow: async (id, seq) => {
                await harness.sql("DELETE FROM events WHERE session_id = $1 AND seq = $2", [
                  id,
                  seq,
                ]);
              },
              garble: (id, seq) => harness.tamper.garble(id, seq),
              cleanup: () => harness.cleanup(),
              findsHoles: false,
              findsGarbled: false,
              readsTail: true,
            };
          },
        ] as [string, () => Promise<Resumable>],
      ]
    : []),
];

/** Three turns of 1–2 steps with chunks and tool calls, then a turn left open inside a step. */
function interruptedLog(): SessionEvent[] {
  const events = balancedLog(3, { steps: 2, chunksPerStep: 6, toolCallsPerStep: 1 });
  let seq = events.length;
  events.push(turnStart(seq++, 4), userMessage(seq++, "still going"), stepStart(seq++, 4, 1));
  for (let i = 0; i < 5; i++) events.push(assistantChunk(seq++, 4, 1));
  events.push(toolCall(seq++, 4, 1, "open-call"), assistantChunk(seq++, 4, 1));
  return events;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(kinds)("resuming from the settled part (%s)", (_kind, make) => {
  async function fresh(): Promise<Resumable> {
    const kind = await make();
    cleanups.push(() => kind.cleanup());
    return kind;
  }

  it("reads only the message-producing events of the settled part, and nothing after the last turn/end", async () => {
    const kind = await fresh();
    const backend = await kind.open();
    const events = interruptedLog();
    await backend.create({ version: 0, id: "s", createdAt: TIME }, serializeEvents(events));
    const lastTurnEnd = events.findLastIndex((e) => e.type === "turn/end");
    const part = await backend.loadSettled?.("s");
    expect(part?.settled).toBe(lastTurnEnd + 1);
    expect(part?.events).toEqual(events.slice(0, lastTurnEnd + 1).filter((e) => "surfaceOp" in e));
    expect(await backend.loadSettled?.("missing")).toBeUndefined();
  });

  it("answers the last turn/end and the page after it, with a tail limit, as loadFrom does", async () => {
    // Seen failing (PostgreSQL) with the page of a log without a turn/end one row too long, and
    // with its first event dropped as if it were the turn/end before the page.
    const kind = await fresh();
    const backend = await kind.open();
    const settledLog = balancedLog(2, { steps: 2, chunksPerStep: 3, toolCallsPerStep: 1 });
    const open = interruptedLog();
    const unsettled = open.slice(open.findLastIndex((e) => e.type === "turn/end") + 1);
    const logs: Record<string, SessionEvent[]> = {
      interrupted: open,
      settled: settledLog,
      // No turn/end at all: the tail is the log from seq 0.
      unsettled: unsettled.map((e, seq) => ({ ...e, seq })),
      empty: [],
    };
    for (const [id, events] of Object.entries(logs)) {
      await backend.create({ version: 0, id, createdAt: TIME }, serializeEvents(events));
    }
    // A torn last row: the page after the last turn/end ends before it.
    await backend.create({ version: 0, id: "torn", createdAt: TIME }, serializeEvents(open));
    await kind.garble("torn", open.length - 1);
    for (const id of [...Object.keys(logs), "torn"]) {
      const events = logs[id] ?? open;
      for (const limit of [1, 3, 1000]) {
        const part = await backend.loadSettled?.(id, limit);
        const settled = events.findLastIndex((e) => e.type === "turn/end") + 1;
        expect(part?.settled, id).toBe(settled);
        if (!kind.readsTail) {
          expect(part?.tail).toBeUndefined();
          continue;
        }
        expect(part?.end, `${id} end`).toEqual(settled > 0 ? events[settled - 1] : undefined);
        expect(part?.tail, `${id} tail ${limit}`).toEqual(
          await backend.loadFrom(id, settled, limit),
        );
      }
    }
    expect(await backend.loadSettled?.("missing", 10)).toBeUndefined();
  });

  it("resumes to the state a full read gives: length, open turn, messages, the repair and the next append", async () => {
    const kind = await fresh();
    const events = interruptedLog();
    const written = new SessionStore({ backend: await kind.open() });
    await written.create({ id: "s", seed: events });
    await written.close();
    // The same log through the memory backend, which has no settled read: every event is read.
    // Read by a store that did not write it: to that store, the open turn is a dead writer's (the
    // writer's own store would go on with it).
    const memory = new MemoryBackend();
    const creator = new SessionStore({ backend: memory });
    await creator.create({ id: "s", seed: events });
    await creator.unload("s");
    const reference = new SessionStore({ backend: memory });

    const reader = new SessionStore({ backend: await kind.open() });
    const read = await reader.load("s");
    const whole = await reference.load("s");
    expect([read.nextSeq, read.openTurn]).toEqual([events.length, 4]);
    expect(read.deriveMessages()).toEqual(whole.deriveMessages());

    const resumed = await reader.openForWriting("s");
    const repaired = await reference.openForWriting("s");
    expect(resumed.nextSeq).toBe(repaired.nextSeq);
    expect(await resumed.readEvents()).toEqual(await repaired.readEvents());
    expect(resumed.deriveMessages()).toEqual(repaired.deriveMessages());
    const next = balancedLog(5).slice(-balancedLog(1).length);
    const turn5 = next.map((e, i) => ({ ...e, seq: resumed.nextSeq + i }));
    expect(await resumed.append(turn5)).toBe(await repaired.append(turn5));
    expect(resumed.deriveMessages()).toEqual(repaired.deriveMessages());
    await reader.close();
  });

  it("stops a resume at a damaged message-producing row before the last turn/end, and goes on serving", async () => {
    // PostgreSQL builds these events as the rows arrive: the damage is found inside the row
    // handler, and the statement must still end cleanly (its connection goes back to the pool).
    const kind = await fresh();
    const events = interruptedLog();
    const store = new SessionStore({ backend: await kind.open() });
    await store.create({ id: "garbled-message", seed: events });
    await store.create({ id: "intact", seed: events });
    await store.close();
    const message = events.findIndex((e) => e.type === "user/message");
    await kind.garble("garbled-message", message);
    const again = new SessionStore({ backend: await kind.open() });
    await expect(again.openForWriting("garbled-message")).rejects.toMatchObject({
      code: "CORRUPT_LOG",
      details: { location: expect.stringContaining("garbled-message"), seq: message },
    });
    const intact = await again.openForWriting("intact");
    expect(intact.deriveMessages().length).toBeGreaterThan(0);
    await again.close();
  });

  it("reports a damaged or a missing chunk row before the last turn/end as CORRUPT_LOG when read, and a missing one on resume where the backend counts rows", async () => {
    // Seen failing with the settled read as first written (settled rows not counted): the missing
    // row resumed without a word on SQLite, giving a log one event short of its seqs.
    const kind = await fresh();
    const events = interruptedLog();
    const store = new SessionStore({ backend: await kind.open() });
    await store.create({ id: "garbled", seed: events });
    await store.create({ id: "holed", seed: events });
    await store.close();
    const chunk = events.findIndex((e) => e.type === "assistant/chunk");
    await kind.garble("garbled", chunk);
    await kind.dropRow("holed", chunk + 1);
    const again = new SessionStore({ backend: await kind.open() });
    for (const id of ["garbled", "holed"]) {
      let repaired = 0;
      const corrupt = { code: "CORRUPT_LOG", details: { location: expect.stringContaining(id) } };
      if ((id === "holed" && kind.findsHoles) || (id === "garbled" && kind.findsGarbled)) {
        await expect(again.openForWriting(id), id).rejects.toMatchObject(corrupt);
      } else {
        repaired = (await again.openForWriting(id)).nextSeq;
        await again.unload(id);
      }
      // A reader loads as a writer resumes (the settled part's messages, its rows counted where
      // the backend counts them); every event is checked when the events are read.
      const loading = new SessionStore({ backend: await kind.open() }).load(id);
      if ((id === "holed" && kind.findsHoles) || (id === "garbled" && kind.findsGarbled)) {
        await expect(loading, id).rejects.toMatchObject(corrupt);
      } else {
        // Loaded as the writer left it (its interrupted turn closed).
        expect((await loading).nextSeq, id).toBe(repaired);
      }
      await expect(again.readEvents(id), id).rejects.toMatchObject(corrupt);
    }
    await again.close();
  });
});
