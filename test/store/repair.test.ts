// Crash repair: the closers interruptedTurnClosers gives a log that ends inside a turn.
import { describe, expect, it } from "vitest";
import {
  type EventOf,
  interruptedTurnClosers,
  type SessionEvent,
  validateSessionHeaderLine,
} from "../../src/index.js";
import { INTERRUPTED_RESULT_TEXT } from "../../src/log/repair.js";
import {
  assistantChunk,
  assistantMessage,
  balancedLog,
  simpleTurn,
  stepEnd,
  stepStart,
  testHeader,
  text,
  toolCall,
  toolResult,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";
import { KeptLog } from "../helpers/kept-log.js";

const HEADER = testHeader();
const LAST_TIME = 1_700_000_009_999;

/**
 * One finished turn, then turn 2 left open in its step 2 with calls c-a, c-b and c-c; c-b was
 * answered. The last event carries LAST_TIME.
 */
function crashedInStep(): SessionEvent[] {
  const events = balancedLog(1, { toolCallsPerStep: 1 });
  const at = events.length;
  events.push(
    turnStart(at, 2),
    userMessage(at + 1, "go on"),
    stepStart(at + 2, 2, 1),
    assistantMessage(at + 3, 2, 1),
    stepEnd(at + 4, 2, 1),
    stepStart(at + 5, 2, 2),
    assistantChunk(at + 6, 2, 2),
    assistantMessage(at + 7, 2, 2, [text("calling")]),
    toolCall(at + 8, 2, 2, "c-a"),
    toolCall(at + 9, 2, 2, "c-b"),
    toolCall(at + 10, 2, 2, "c-c"),
    toolResult(at + 11, 2, 2, "c-b", { sourceEventSeqs: [at + 9], time: LAST_TIME }),
  );
  return events;
}

/** The seq of the `tool/call` with `callId`. */
function callSeq(events: readonly SessionEvent[], callId: string): number {
  const call = events.find((e) => e.type === "tool/call" && e.data.callId === callId);
  if (call === undefined) throw new Error(`expected a tool/call ${callId}, got none`);
  return call.seq;
}

describe("interruptedTurnClosers", () => {
  it("uses the spec's text for the synthetic result", () => {
    expect(INTERRUPTED_RESULT_TEXT).toBe(
      "interrupted: the session stopped before this tool call returned; no result was recorded",
    );
  });

  it("closes an open step with two unanswered calls: results in call order, step/end, turn/end", () => {
    const events = crashedInStep();
    const next = events.length;
    const closers = interruptedTurnClosers(events);
    expect(closers.map((e) => e.type)).toEqual([
      "tool/result",
      "tool/result",
      "step/end",
      "turn/end",
    ]);
    expect(closers.map((e) => e.seq)).toEqual([next, next + 1, next + 2, next + 3]);
    expect(closers.every((e) => e.time === LAST_TIME)).toBe(true);

    const [first, second, stepEndEvent, turnEndEvent] = closers;
    for (const [result, callId] of [
      [first, "c-a"],
      [second, "c-c"],
    ] as const) {
      expect(result).toEqual({
        type: "tool/result",
        seq: result?.seq,
        time: LAST_TIME,
        data: {
          turn: 2,
          step: 2,
          callId,
          content: [{ type: "text", text: INTERRUPTED_RESULT_TEXT }],
          isError: true,
          error: { name: "InterruptedError", code: "interrupted" },
        },
        sourceEventSeqs: [callSeq(events, callId)],
        surfaceOp: "append",
      });
    }
    expect(stepEndEvent).toEqual({
      type: "step/end",
      seq: next + 2,
      time: LAST_TIME,
      data: { turn: 2, step: 2 },
    });
    expect(turnEndEvent).toEqual({
      type: "turn/end",
      seq: next + 3,
      time: LAST_TIME,
      data: { turn: 2, reason: { kind: "interrupted" } },
    });
  });

  it("writes the synthetic result's keys in the spec's order", () => {
    const events = crashedInStep();
    const [result] = interruptedTurnClosers(events) as [EventOf<"tool/result">];
    expect(Object.keys(result)).toEqual([
      "type",
      "seq",
      "time",
      "data",
      "sourceEventSeqs",
      "surfaceOp",
    ]);
    expect(Object.keys(result.data)).toEqual([
      "turn",
      "step",
      "callId",
      "content",
      "isError",
      "error",
    ]);
    const seq = events.length;
    const call = callSeq(events, "c-a");
    expect(JSON.stringify(result)).toBe(
      `{"type":"tool/result","seq":${seq},"time":${LAST_TIME},"data":{"turn":2,"step":2,` +
        `"callId":"c-a","content":[{"type":"text","text":"interrupted: the session stopped ` +
        `before this tool call returned; no result was recorded"}],"isError":true,` +
        `"error":{"name":"InterruptedError","code":"interrupted"}},"sourceEventSeqs":[${call}],` +
        `"surfaceOp":"append"}`,
    );
  });

  it("gives closers that make the log valid and leave no open turn", () => {
    const events = crashedInStep();
    const before = new KeptLog(HEADER, events);
    expect(before.openTurn).toBe(2);

    const closers = interruptedTurnClosers(events);
    const seeded = new KeptLog(HEADER, [...events, ...closers]);
    expect(seeded.openTurn).toBeUndefined();
    expect(interruptedTurnClosers(seeded.events)).toEqual([]);

    expect(before.append(closers)).toBe(events.length + closers.length);
    expect(before.openTurn).toBeUndefined();
    expect(before.events).toEqual(seeded.events);
    // The synthetic results reach the model as tool results, so the next turn can follow them.
    const lastMessages = before.deriveMessages().slice(-2);
    expect(lastMessages.map((m) => m.content[0]?.type)).toEqual(["tool-result", "tool-result"]);
    expect(before.append(simpleTurn(before.length, 3))).toBeGreaterThan(seeded.length);
  });

  it("gives an open turn without an open step only its turn/end", () => {
    const events: SessionEvent[] = [
      turnStart(0, 1),
      userMessage(1, "hi"),
      stepStart(2, 1, 1),
      toolCall(3, 1, 1, "left-behind"),
      stepEnd(4, 1, 1),
    ];
    const closers = interruptedTurnClosers(events);
    expect(closers).toEqual([
      {
        type: "turn/end",
        seq: 5,
        time: events[4]?.time,
        data: { turn: 1, reason: { kind: "interrupted" } },
      },
    ]);
    expect(new KeptLog(HEADER, [...events, ...closers]).openTurn).toBeUndefined();
  });

  it("gives an open step without calls step/end and turn/end", () => {
    const events: SessionEvent[] = [turnStart(0, 1), stepStart(1, 1, 1), assistantChunk(2, 1, 1)];
    expect(interruptedTurnClosers(events).map((e) => [e.type, e.seq])).toEqual([
      ["step/end", 3],
      ["turn/end", 4],
    ]);
  });

  it("gives answered calls no synthetic result", () => {
    const events: SessionEvent[] = [
      turnStart(0, 1),
      stepStart(1, 1, 1),
      toolCall(2, 1, 1, "c1"),
      toolResult(3, 1, 1, "c1", { sourceEventSeqs: [2] }),
    ];
    expect(interruptedTurnClosers(events).map((e) => e.type)).toEqual(["step/end", "turn/end"]);
  });

  it("gives a balanced log no closers", () => {
    expect(interruptedTurnClosers([])).toEqual([]);
    expect(interruptedTurnClosers(balancedLog(3, { steps: 2, toolCallsPerStep: 2 }))).toEqual([]);
    const trailing = [...balancedLog(1), userMessage(balancedLog(1).length, "after the turn")];
    expect(interruptedTurnClosers(trailing)).toEqual([]);
  });

  it.each(corpusLogs().map((l) => [l.name, l] as const))(
    "gives the corpus log %s no closers",
    (_name, corpus) => {
      if (!validateSessionHeaderLine(corpus.header)) {
        return expect.unreachable(`expected a header line in ${corpus.name}`);
      }
      const { type: _type, ...header } = corpus.header;
      const log = new KeptLog(header, corpus.events);
      expect(interruptedTurnClosers(log.events)).toEqual([]);
    },
  );
});
