// The turn recorder through its SDK handles: what it writes for a tool-call turn, what it refuses, how it resumes.
import { describe, expect, it } from "vitest";
import {
  deriveReplayScript,
  MemoryBackend,
  RecordError,
  type Session,
  SessionStore,
  TurnRecorder,
} from "../../src/index.js";
import { rejectionOf } from "../helpers/store-builders.js";

async function freshSession(): Promise<{ store: SessionStore; session: Session }> {
  const store = new SessionStore({ backend: new MemoryBackend(), now: () => 1 });
  await store.create({ id: "r" });
  return { store, session: await store.openForWriting("r") };
}

function clock(): () => number {
  let time = 100;
  return () => time++;
}

describe("TurnRecorder", () => {
  it("records a tool-call turn: numbers, the assembled message with its sources, paired results", async () => {
    const { session } = await freshSession();
    const recorder = new TurnRecorder(session, { now: clock() });
    const turn = await recorder.startTurn("list the files");
    const step = await turn.startStep();
    await step.chunks([
      { type: "text-delta", index: 0, text: "Let me " },
      { type: "text-delta", index: 0, text: "look." },
      { type: "tool-call-delta", index: 1, id: "c1", name: "ls", argumentsDelta: '{"dir":' },
      { type: "tool-call-delta", index: 1, id: "c1", argumentsDelta: '"."}' },
      { type: "usage", usage: { inputTokens: 10, outputTokens: 4 } },
    ]);
    const finished = await step.finish({ kind: "tool-calls" });
    expect(finished.toolCalls).toEqual([{ callId: "c1", name: "ls", arguments: '{"dir":"."}' }]);
    await step.toolResult("c1", "a.txt\nb.txt");
    await step.end();
    const answer = await turn.startStep();
    await answer.chunks([
      { type: "text-delta", index: 0, text: "Two files." },
      { type: "finish", reason: { kind: "stop" } },
    ]);
    await answer.end();
    expect(await turn.end()).toEqual({
      nextSeq: 19,
      lastTurn: 1,
      finished: false,
      pendingToolCalls: [],
    });

    const events = await session.readEvents();
    expect(events.map((e) => `${e.seq} ${e.type}`)).toEqual([
      "0 turn/start",
      "1 user/message",
      "2 step/start",
      "3 assistant/chunk",
      "4 assistant/chunk",
      "5 assistant/chunk",
      "6 assistant/chunk",
      "7 assistant/chunk",
      "8 assistant/chunk",
      "9 assistant/message",
      "10 tool/call",
      "11 tool/result",
      "12 step/end",
      "13 step/start",
      "14 assistant/chunk",
      "15 assistant/chunk",
      "16 assistant/message",
      "17 step/end",
      "18 turn/end",
    ]);
    expect(events[9]).toMatchObject({
      sourceEventSeqs: [3, 4, 5, 6, 7, 8],
      data: {
        turn: 1,
        step: 1,
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool-call", id: "c1", name: "ls", arguments: '{"dir":"."}' },
        ],
        usage: { inputTokens: 10, outputTokens: 4 },
      },
    });
    expect(events[11]).toMatchObject({ sourceEventSeqs: [10], data: { callId: "c1", step: 1 } });
    expect(events.map((e) => e.time)).toEqual(events.map((_, i) => 100 + i));
    expect(deriveReplayScript(events).map((e) => e.kind)).toEqual(["chunks", "chunks"]);
    const messages = session.deriveMessages();
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(messages[2]?.content).toMatchObject([{ type: "tool-result", toolCallId: "c1" }]);
  });

  it("refuses a step end before the finish chunk, naming what it expected, and stores nothing", async () => {
    const { session } = await freshSession();
    const turn = await new TurnRecorder(session).startTurn("hi");
    const step = await turn.startStep();
    await step.chunk({ type: "text-delta", index: 0, text: "partial" });
    const before = session.nextSeq;
    const error = await rejectionOf(step.end());
    expect(error).toBeInstanceOf(RecordError);
    expect((error as RecordError).code).toBe("RECORD_REFUSED");
    expect((error as RecordError).details).toEqual({
      sessionId: "r",
      index: 0,
      expected: "the finish chunk of step 1",
      found: "1 chunk(s), no finish",
    });
    expect(session.nextSeq).toBe(before);
    // A turn may still be left, as aborted: the open step replays as a hang.
    await turn.abort("user cancelled");
    expect(deriveReplayScript(await session.readEvents()).map((e) => e.kind)).toEqual(["hang"]);
  });

  it("refuses a result for a call that is not pending, and a step end with a call unanswered", async () => {
    const { session } = await freshSession();
    const turn = await new TurnRecorder(session).startTurn("hi");
    const step = await turn.startStep();
    await step.chunk({
      type: "tool-call-delta",
      index: 0,
      id: "c1",
      name: "ls",
      argumentsDelta: "{}",
    });
    await step.finish({ kind: "tool-calls" });
    const wrong = (await rejectionOf(step.toolResult("c2", "x"))) as RecordError;
    expect(wrong.details).toMatchObject({ found: 'callId "c2"' });
    expect(wrong.expected).toContain('"c1"');
    const early = (await rejectionOf(step.end())) as RecordError;
    expect(early.code).toBe("RECORD_REFUSED");
    expect(early.expected).toBe("a result for every tool call of step 1");
    const ended = (await rejectionOf(turn.end())) as RecordError;
    expect(ended.code).toBe("RECORD_REFUSED");
  });

  it("ends a turn as failed in its open step, which replays as a throw", async () => {
    const { session } = await freshSession();
    const turn = await new TurnRecorder(session).startTurn("hi");
    await turn.startStep();
    await turn.fail("provider down", "E503");
    const events = await session.readEvents();
    expect(events.at(-1)).toMatchObject({
      type: "turn/end",
      data: { reason: { kind: "error", step: 1, message: "provider down", code: "E503" } },
    });
    expect(deriveReplayScript(events)).toEqual([
      { kind: "throw", chunks: [], message: "provider down", code: "E503" },
    ]);
  });

  it("refuses a handle whose step is no longer open", async () => {
    const { session } = await freshSession();
    const turn = await new TurnRecorder(session).startTurn("hi");
    const first = await turn.startStep();
    await first.finish();
    await first.end();
    await turn.startStep();
    const stale = (await rejectionOf(
      first.chunk({ type: "text-delta", index: 0, text: "x" }),
    )) as RecordError;
    expect(stale.code).toBe("RECORD_REFUSED");
    expect(stale.found).toBe("chunks on step 1 of turn 1 (step 2 of turn 1 open)");
  });

  it("resumes a turn left open by another recorder, and continues the turn numbering", async () => {
    const { store, session } = await freshSession();
    const first = new TurnRecorder(session);
    await first.record([
      { op: "turn_start", prompt: "one" },
      { op: "step_start" },
      { op: "chunks", chunks: [{ type: "text-delta", index: 0, text: "a" }] },
    ]);
    // Another recorder over the same session reads the open step back from the store.
    const second = new TurnRecorder(session);
    const state = await second.record([
      { op: "chunks", chunks: [{ type: "finish", reason: { kind: "stop" } }] },
      { op: "turn_end" },
    ]);
    expect(state).toMatchObject({ lastTurn: 1, finished: false });
    const events = await store.readEvents("r");
    expect(events.find((e) => e.type === "assistant/message")).toMatchObject({
      sourceEventSeqs: [3, 4],
      data: { content: [{ type: "text", text: "a" }] },
    });
    // The first recorder sees the log moved on and reads it again before its next call.
    const next = await first.startTurn("two");
    expect(next.turn).toBe(2);
  });

  it("records nothing of a batch whose later op is refused", async () => {
    const { session } = await freshSession();
    const error = await rejectionOf(
      new TurnRecorder(session).record([
        { op: "turn_start", prompt: "hi" },
        { op: "step_start" },
        { op: "turn_end", reason: { kind: "interrupted" } },
      ]),
    );
    expect((error as RecordError).details).toMatchObject({ index: 2, found: "interrupted" });
    expect(session.nextSeq).toBe(0);
  });
});
