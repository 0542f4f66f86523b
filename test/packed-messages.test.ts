// A writer's older derived messages kept deflated: the messages stay what a derivation from scratch gives.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type DerivedMessage,
  deriveMessages,
  JsonlBackend,
  type SessionEvent,
  SessionLog,
  SessionStore,
} from "../src/index.js";
import { PackedBlock } from "../src/log/packed-messages.js";
import {
  assistantMessage,
  compactEnd,
  compactStart,
  compactSummary,
  simpleTurn,
  stepEnd,
  stepStart,
  testHeader,
  text,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";

/** Turns with two steps of one tool call each: seven messages a turn. */
function turns(fromTurn: number, count: number, fromSeq: number): SessionEvent[][] {
  const out: SessionEvent[][] = [];
  let seq = fromSeq;
  for (let turn = fromTurn; turn < fromTurn + count; turn++) {
    const events = simpleTurn(seq, turn, { steps: 2, toolCallsPerStep: 1, prompt: `p${turn}` });
    out.push(events);
    seq += events.length;
  }
  return out;
}

function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

describe("packed derived messages", () => {
  it("equal deriving from scratch after every batch of a long log, frozen throughout", () => {
    const log = SessionLog.fromSeed(testHeader(), []);
    const all: SessionEvent[] = [];
    for (const batch of turns(1, 12, 0)) {
      log.append(batch);
      all.push(...batch);
      const messages = log.deriveMessages();
      expect(messages).toEqual(deriveMessages(all));
      expect(isDeeplyFrozen(messages)).toBe(true);
    }
  });

  it("keeps the older messages packed, as copies of the events' content", () => {
    // Without packing every message shares its content with its frozen event.
    const log = SessionLog.fromSeed(testHeader(), []);
    const admitted: SessionEvent[] = [];
    for (const batch of turns(1, 6, 0)) {
      const prepared = log.prepare(batch);
      log.commit(prepared);
      admitted.push(...prepared.events);
    }
    const first = admitted.find((e) => e.type === "user/message");
    const message = log.deriveMessages()[0] as DerivedMessage;
    expect(message).toEqual({ role: "user", content: [text("p1")] });
    expect(message.content).not.toBe((first as { data: { content: unknown } }).data.content);
  });

  it("leaves no message unpacked after a commit", () => {
    // A server holds many open sessions: every message it keeps unpacked stays in its live heap,
    // and the heap's size follows the live heap (M2). Kept as derived, a message shares its
    // event's content; packed, it is a copy. Seen failing with the newest four nodes kept as
    // derived and only full blocks of four packed (five messages shared after a commit).
    const log = SessionLog.fromSeed(testHeader(), []);
    const contents = new Set<unknown>();
    for (const batch of turns(1, 6, 0)) {
      const prepared = log.prepare(batch);
      log.commit(prepared);
      for (const event of prepared.events) {
        const content = (event.data as { content?: unknown }).content;
        if (!Array.isArray(content)) continue;
        contents.add(content);
        for (const block of content) contents.add(block);
      }
      const messages = log.deriveMessages();
      const shared = messages.filter(
        (m) =>
          contents.has(m.content) ||
          m.content.some(
            (b) => contents.has(b) || contents.has((b as { content?: unknown }).content),
          ),
      );
      expect(messages.length).toBeGreaterThan(4);
      expect(shared).toEqual([]);
    }
  });

  it("replaces packed nodes in a compaction", () => {
    const log = SessionLog.fromSeed(testHeader(), []);
    const all = turns(1, 8, 0).flat();
    log.append(all);
    // A second commit packs what the first left waiting.
    const more = turns(9, 2, all.length).flat();
    log.append(more);
    all.push(...more);
    const surfaceSeqs = all
      .filter((e) => "surfaceOp" in e && e.surfaceOp !== undefined)
      .map((e) => e.seq);
    const shadowed = surfaceSeqs.slice(2, 30);
    let seq = all.length;
    const compaction: SessionEvent[] = [
      turnStart(seq++, 11, { kind: "injection", source: { kind: "user" } }),
      compactStart(seq++, 11),
      compactSummary(seq++, shadowed, "so far"),
      userMessage(seq++, "so far", {
        surfaceOp: { op: "replace", start: shadowed[0] as number, end: shadowed.at(-1) as number },
        sourceEventSeqs: shadowed,
      }),
      compactEnd(seq++, 11),
      stepStart(seq++, 11, 1),
      assistantMessage(seq++, 11, 1, [text("after")]),
      stepEnd(seq++, 11, 1),
      turnEnd(seq++, 11),
    ];
    log.append(compaction);
    all.push(...compaction);
    expect(log.deriveMessages()).toEqual(deriveMessages(all));
    const next = turns(12, 4, all.length);
    for (const batch of next) {
      log.append(batch);
      all.push(...batch);
      expect(log.deriveMessages()).toEqual(deriveMessages(all));
    }
  });

  // Packing runs on a later turn of the event loop, which a loop of appends whose writes and
  // flushes all complete on this thread (JSONL, a lone writer) never reaches. Seen failing before
  // the in-line packing past a backlog: all 1,500 messages were left unpacked when the loop ended.
  it("keeps a writer's unpacked messages bounded while it appends without letting the event loop turn", async () => {
    const root = mkdtempSync(join(tmpdir(), "seedline-packed-"));
    try {
      const store = new SessionStore({ backend: new JsonlBackend(root) });
      const session = await store.create({ id: "tight-loop" });
      const all: SessionEvent[] = [];
      let most = 0;
      for (const batch of turns(1, 300, 0)) {
        await session.append(batch);
        all.push(...batch);
        most = Math.max(most, session.log.unpackedMessages);
      }
      // The last batches' messages at most wait past the backlog (1,024), not the whole log's.
      expect(all.length).toBeGreaterThan(2000);
      expect(session.log.deriveMessages().length).toBe(1500);
      expect(most).toBeLessThan(1024 + 16 * 8);
      expect(session.deriveMessages()).toEqual(deriveMessages(all));
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("leaves the messages as they were when a batch is refused after packing", async () => {
    const session = await new SessionStore().create({ id: "packed-refused" });
    const all: SessionEvent[] = [];
    for (const batch of turns(1, 6, 0)) {
      await session.append(batch);
      all.push(...batch);
    }
    const before = session.deriveMessages();
    // A turn/end with no open turn breaks turn-order.
    await expect(session.append([turnEnd(all.length, 7)])).rejects.toMatchObject({
      code: "INVALID_EVENT",
    });
    expect(session.deriveMessages()).toBe(before);
    expect(session.deriveMessages()).toEqual(deriveMessages(all));
  });
});

describe("PackedBlock", () => {
  it("gives back equal, frozen messages, the same array while it is held", () => {
    const messages: DerivedMessage[] = [
      { role: "user", content: [text("é ☃ \u{1F600}")] },
      { role: "assistant", content: [{ type: "tool-call", id: "c", name: "n", arguments: "{}" }] },
    ];
    const block = new PackedBlock(messages);
    const expanded = block.messages();
    expect(expanded).toEqual(messages);
    expect(isDeeplyFrozen(expanded)).toBe(true);
    expect(block.messages()).toBe(expanded);
  });
});
