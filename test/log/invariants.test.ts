// The log invariants of docs/log.md, the batch rules and immutability, through SessionLog (seed and append).
import { describe, expect, it } from "vitest";
import {
  deriveMessages,
  InvalidEventError,
  type InvariantRule,
  isSurfaceEligibleType,
  type SessionEvent,
  StorageError,
  validateSessionHeaderLine,
} from "../../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  balancedLog,
  compactEnd,
  compactStart,
  compactSummary,
  contextMessage,
  foreignRecord,
  hookInvoked,
  hookResult,
  promptBlocked,
  simpleTurn,
  steeringMessage,
  stepEnd,
  stepStart,
  testHeader,
  text,
  todoWrite,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";
import { KeptLog } from "../helpers/kept-log.js";

const HEADER = testHeader();

/** Turn 1 open, no step open; next seq 2. */
const IN_TURN: readonly SessionEvent[] = [turnStart(0, 1), userMessage(1, "hi")];
/** Turn 1 and its step 1 open; next seq 3. */
const IN_STEP: readonly SessionEvent[] = [...IN_TURN, stepStart(2, 1, 1)];
/** One balanced turn (turn 1, step 1); nothing open. */
const CLOSED: readonly SessionEvent[] = simpleTurn(0, 1);

/** The error `run` throws; fails the test when it throws none. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return expect.unreachable("expected an error, got none");
}

function invalid(run: () => unknown): InvalidEventError {
  const error = thrown(run);
  expect(error).toBeInstanceOf(InvalidEventError);
  return error as InvalidEventError;
}

function storageError(run: () => unknown): StorageError {
  const error = thrown(run);
  expect(error).toBeInstanceOf(StorageError);
  return error as StorageError;
}

/**
 * Checks that the last event of `batch` breaks `rule`, both when `batch` is appended to a log
 * holding `prefix` (index = its place in the batch) and when `prefix + batch` is seeded (index =
 * its place in the seed); the log is left as it was. Returns the append error.
 */
function expectRefused(
  prefix: readonly SessionEvent[],
  batch: readonly unknown[],
  rule: InvariantRule,
  opts: { readonly seq?: number; readonly instancePath?: string } = {},
): InvalidEventError {
  const index = batch.length - 1;
  const seq = opts.seq ?? prefix.length + index;
  const log = new KeptLog(HEADER, prefix);
  const events = log.events;
  const messages = log.deriveMessages();

  const appended = invalid(() => log.append(batch));
  expect(appended.code).toBe("INVALID_EVENT");
  expect(appended.details).toMatchObject({ rule, seq, index });
  if (opts.instancePath !== undefined) {
    expect(appended.details.instancePath).toBe(opts.instancePath);
  }
  expect(appended.message).toContain("expected");
  expect(appended.message).toContain("got");
  expect(log.length).toBe(prefix.length);
  expect(log.events).toEqual(events);
  expect(log.deriveMessages()).toEqual(messages);

  const seeded = invalid(() => new KeptLog(HEADER, [...prefix, ...batch]));
  expect(seeded.code).toBe("INVALID_EVENT");
  expect(seeded.details).toMatchObject({ rule, seq, index: prefix.length + index });
  return appended;
}

/** Checks that `batch` is accepted after `prefix`, on append and on seed; returns the log. */
function expectAccepted(prefix: readonly SessionEvent[], batch: readonly unknown[]): KeptLog {
  const log = new KeptLog(HEADER, prefix);
  expect(log.append(batch)).toBe(prefix.length + batch.length);
  expect(log.length).toBe(prefix.length + batch.length);
  expect(new KeptLog(HEADER, [...prefix, ...batch]).events).toEqual(log.events);
  return log;
}

/** A copy of `event` without `key`, typed as the union (what a caller iterating raw events holds). */
function without(event: SessionEvent, key: string): unknown {
  const copy: Record<string, unknown> = { ...event };
  delete copy[key];
  return copy;
}

describe("seq-contiguous", () => {
  it("accepts a batch whose seqs continue the log", () => {
    expectAccepted(IN_STEP, [assistantChunk(3, 1, 1), assistantMessage(4, 1, 1)]);
  });

  it("rejects a gap later in a batch, naming the event's own seq", () => {
    expectRefused(IN_STEP, [assistantChunk(3, 1, 1), assistantChunk(5, 1, 1)], "seq-contiguous", {
      seq: 5,
      instancePath: "/seq",
    });
  });

  it("rejects a repeated seq later in a batch", () => {
    expectRefused(IN_STEP, [assistantChunk(3, 1, 1), assistantChunk(3, 1, 1)], "seq-contiguous", {
      seq: 3,
    });
  });
});

describe("schema", () => {
  it("rejects a data member of the wrong type, with its instancePath", () => {
    const bad = { ...stepEnd(3, 1, 1), data: { turn: 1, step: 1.5 } };
    expectRefused(IN_STEP, [bad], "schema", { instancePath: "/data/step" });
  });

  it("rejects tool/call arguments that are not the raw JSON string", () => {
    const call = toolCall(3, 1, 1, "c1");
    const bad = { ...call, data: { ...call.data, arguments: { cmd: "ls" } } };
    expectRefused(IN_STEP, [bad], "schema", { instancePath: "/data/arguments" });
  });

  it("rejects an unknown envelope key", () => {
    expectRefused([], [{ ...turnStart(0, 1), extra: true }], "schema", { instancePath: "" });
  });

  it("rejects an unknown data member", () => {
    const start = turnStart(0, 1);
    const bad = { ...start, data: { ...start.data, note: "x" } };
    expectRefused([], [bad], "schema", { instancePath: "/data" });
  });

  it("rejects a missing time", () => {
    expectRefused([], [without(turnStart(0, 1), "time")], "schema", { instancePath: "" });
  });

  it("rejects a negative source seq", () => {
    const bad = { ...userMessage(0, "hi"), sourceEventSeqs: [-1] };
    expectRefused([], [bad], "schema", { instancePath: "/sourceEventSeqs/0" });
  });

  it("rejects a value that is not an object, at the seq its position calls for", () => {
    expectRefused(IN_TURN, [null], "schema", { seq: 2 });
  });
});

describe("json-value", () => {
  class Point {
    x = 1;
  }
  const sparse: number[] = [];
  sparse[1] = 1;
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;

  const cases: readonly [string, unknown, string][] = [
    ["NaN", { x: Number.NaN }, "/data/meta/x"],
    ["Infinity", [1, Number.POSITIVE_INFINITY], "/data/meta/1"],
    ["-Infinity", Number.NEGATIVE_INFINITY, "/data/meta"],
    ["an undefined member", { a: 1, b: undefined }, "/data/meta/b"],
    ["a BigInt", { n: 1n }, "/data/meta/n"],
    ["a function", { f: () => 1 }, "/data/meta/f"],
    ["a symbol", { s: Symbol("s") }, "/data/meta/s"],
    ["a Map", { m: new Map([["k", 1]]) }, "/data/meta/m"],
    ["a Set", new Set([1]), "/data/meta"],
    ["a Date", { when: new Date(0) }, "/data/meta/when"],
    ["a class instance", { p: new Point() }, "/data/meta/p"],
    ["a sparse array", { list: sparse }, "/data/meta/list/0"],
    ["a cycle", cycle, "/data/meta/self"],
  ];

  const prefix: readonly SessionEvent[] = [...IN_STEP, toolCall(3, 1, 1, "c1")];

  it.each(cases)("rejects %s, naming the event type and seq", (_name, meta, path) => {
    const bad = toolResult(4, 1, 1, "c1", { meta, sourceEventSeqs: [3] });
    const error = expectRefused(prefix, [bad], "json-value", { instancePath: path });
    expect(error.message).toContain("tool/result");
    expect(error.message).toContain("seq 4");
  });

  it("rejects a non-JSON value in the envelope too", () => {
    expectRefused(IN_TURN, [{ ...todoWrite(2), time: Number.NaN }], "json-value", {
      instancePath: "/time",
    });
  });

  it("accepts lossless JSON of every kind and stores it as given", () => {
    const meta = { n: null, b: true, f: -1.5, s: "é/~", a: [1, [2, {}]], o: { "a/b": { "~": 0 } } };
    const log = expectAccepted(prefix, [toolResult(4, 1, 1, "c1", { meta })]);
    const stored = log.at(4);
    expect(stored?.type === "tool/result" && stored.data.meta).toEqual(meta);
  });
});

describe("surface-marker", () => {
  /** Turn 1, step 1 and call c1 open: every surface-eligible type fits at seq 4. */
  const prefix: readonly SessionEvent[] = [...IN_STEP, toolCall(3, 1, 1, "c1")];
  const surfaceEvents: readonly SessionEvent[] = [
    userMessage(4, "more"),
    contextMessage(4, "context"),
    assistantMessage(4, 1, 1),
    toolResult(4, 1, 1, "c1", { sourceEventSeqs: [3] }),
    steeringMessage(4, 1, "steer"),
  ];

  it.each(surfaceEvents.map((e) => [e.type, e] as const))(
    "accepts a %s carrying surfaceOp",
    (_type, event) => {
      expectAccepted(prefix, [event]);
    },
  );

  it.each(surfaceEvents.map((e) => [e.type, e] as const))(
    "rejects a %s without surfaceOp by its own rule (not schema)",
    (_type, event) => {
      expectRefused(prefix, [without(event, "surfaceOp")], "surface-marker", { instancePath: "" });
    },
  );
});

describe("the surface-marker guard (regression)", () => {
  // The bug this guards against: a caller iterating raw events (typed as the SessionEvent union, so
  // no compile-time overload can insist on surfaceOp) drops the marker, and the event would be
  // stored but silently missing from deriveMessages.
  //
  // Seen failing without the guard (src/log/invariants.ts admitEvent, the surface-marker `if`
  // commented out in a snapshot of HEAD, then restored and diffed clean against HEAD):
  //  - with the generated validator still in place, the schema caught the missing marker instead,
  //    and these tests (and the per-type ones above) failed with
  //    `- "rule": "surface-marker"  + "rule": "schema"`;
  //  - with the validator bypassed as well, nothing refused the event before the invariants, which
  //    crashed on the absent marker: `expected TypeError: Cannot read properties of undefined
  //    (reading 'start') to be an instance of InvalidEventError`.
  const raw: readonly SessionEvent[] = simpleTurn(0, 1, { steps: 2, toolCallsPerStep: 1 });

  it("refuses, on append, every surface event whose surfaceOp a raw loop deleted", () => {
    const log = new KeptLog(HEADER, []);
    let refused = 0;
    for (const event of raw) {
      if (isSurfaceEligibleType(event.type)) {
        const error = invalid(() => log.append([without(event, "surfaceOp")]));
        expect(error.details).toMatchObject({ rule: "surface-marker", seq: event.seq, index: 0 });
        expect(log.length).toBe(event.seq);
        refused++;
      }
      log.append([event]);
    }
    expect(refused).toBe(raw.filter((e) => isSurfaceEligibleType(e.type)).length);
    expect(log.deriveMessages()).toEqual(deriveMessages(raw));
  });

  // An explicit `surfaceOp: undefined` is no marker either: it lies outside `data`, which is what
  // json-value covers, and JSON would drop it, leaving a user/message without surfaceOp.
  it("refuses, on append, a user/message spread with surfaceOp: undefined", () => {
    const log = new KeptLog(HEADER, []);
    for (const event of raw) {
      if (event.type === "user/message") {
        const error = invalid(() => log.append([{ ...event, surfaceOp: undefined }]));
        expect(error.details).toMatchObject({ rule: "surface-marker", seq: event.seq, index: 0 });
      }
      log.append([event]);
    }
    expect(log.deriveMessages()).toEqual(deriveMessages(raw));
  });

  it("refuses, on seed, a log whose user/message lost its surfaceOp", () => {
    const seed = raw.map((e): unknown => (e.type === "user/message" ? without(e, "surfaceOp") : e));
    const error = invalid(() => new KeptLog(HEADER, seed));
    expect(error.details).toMatchObject({ rule: "surface-marker", seq: 1, index: 1 });
  });
});

describe("surface-marker-forbidden", () => {
  it("rejects surfaceOp on a turn/start", () => {
    expectRefused([], [{ ...turnStart(0, 1), surfaceOp: "append" }], "surface-marker-forbidden", {
      instancePath: "/surfaceOp",
    });
  });

  it("rejects sourceEventSeqs on a tool/call", () => {
    const bad = { ...toolCall(3, 1, 1, "c1"), sourceEventSeqs: [2] };
    expectRefused(IN_STEP, [bad], "surface-marker-forbidden", { instancePath: "/sourceEventSeqs" });
  });

  it("rejects surfaceOp on the log-only prompt/blocked and compact/summary", () => {
    const marked = { ...promptBlocked(0, "no"), surfaceOp: "append" };
    expectRefused([], [marked], "surface-marker-forbidden", { instancePath: "/surfaceOp" });
    const summary = { ...compactSummary(2, [1]), surfaceOp: "append" };
    expectRefused(IN_TURN, [summary], "surface-marker-forbidden");
  });

  it("accepts sourceEventSeqs on a surface event", () => {
    expectAccepted(IN_STEP, [
      assistantChunk(3, 1, 1),
      assistantMessage(4, 1, 1, [text("a")], { sourceEventSeqs: [3] }),
    ]);
  });
});

describe("turn-order", () => {
  it("accepts turns numbered 1, 2, 3 across the log", () => {
    expectAccepted([], balancedLog(3));
  });

  it("accepts a fork child continuing its parent's turn numbering", () => {
    const parent = balancedLog(2);
    expectAccepted(parent, simpleTurn(parent.length, 3));
  });

  it("rejects a turn/start inside an open turn", () => {
    expectRefused(IN_TURN, [turnStart(2, 2)], "turn-order");
  });

  it("rejects a first turn not numbered 1", () => {
    expectRefused([], [turnStart(0, 2)], "turn-order");
    expectRefused([], [turnStart(0, 0)], "turn-order");
  });

  it("rejects a turn number that is not the last one plus 1", () => {
    expectRefused(CLOSED, [turnStart(CLOSED.length, 3)], "turn-order");
    expectRefused(CLOSED, [turnStart(CLOSED.length, 1)], "turn-order");
  });

  it("rejects a turn/end naming another turn", () => {
    expectRefused(IN_TURN, [turnEnd(2, 2)], "turn-order");
  });

  it("rejects a turn/end with a step open", () => {
    expectRefused(IN_STEP, [turnEnd(3, 1)], "turn-order");
  });

  it("rejects a turn/end outside a turn", () => {
    expectRefused(CLOSED, [turnEnd(CLOSED.length, 1)], "turn-order");
    expectRefused([], [turnEnd(0, 1)], "turn-order");
  });
});

describe("step-order", () => {
  it("accepts steps 1, 2, 3 in each turn, restarting at 1", () => {
    expectAccepted([], balancedLog(2, { steps: 3 }));
  });

  it("rejects a step/start outside a turn", () => {
    expectRefused([], [stepStart(0, 1, 1)], "step-order");
    expectRefused(CLOSED, [stepStart(CLOSED.length, 1, 2)], "step-order");
  });

  it("rejects a step/start naming another turn", () => {
    expectRefused(IN_TURN, [stepStart(2, 2, 1)], "step-order");
  });

  it("rejects a step/start while a step is open", () => {
    expectRefused(IN_STEP, [stepStart(3, 1, 2)], "step-order");
  });

  it("rejects a first step not numbered 1", () => {
    expectRefused(IN_TURN, [stepStart(2, 1, 2)], "step-order");
  });

  it("rejects a step number that skips one", () => {
    expectRefused(IN_STEP, [stepEnd(3, 1, 1), stepStart(4, 1, 3)], "step-order");
  });

  it("rejects step numbers that continue from the previous turn", () => {
    const next = CLOSED.length;
    expectRefused(CLOSED, [turnStart(next, 2), stepStart(next + 1, 2, 2)], "step-order");
  });

  /** Turn 1 with step 1 closed and step 2 open, holding call c1; next seq 6. */
  const inStep2: readonly SessionEvent[] = [
    ...IN_STEP,
    stepEnd(3, 1, 1),
    stepStart(4, 1, 2),
    toolCall(5, 1, 2, "c1"),
  ];
  const stepEvents: readonly [string, (seq: number, turn: number, step: number) => unknown][] = [
    ["step/end", (seq, turn, step) => stepEnd(seq, turn, step)],
    ["assistant/chunk", (seq, turn, step) => assistantChunk(seq, turn, step)],
    ["assistant/message", (seq, turn, step) => assistantMessage(seq, turn, step)],
    ["tool/call", (seq, turn, step) => toolCall(seq, turn, step, "c2")],
    ["tool/result", (seq, turn, step) => toolResult(seq, turn, step, "c1")],
  ];

  it.each(stepEvents)("accepts a %s naming the open turn and step", (_type, make) => {
    expectAccepted(inStep2, [make(6, 1, 2)]);
  });

  it.each(stepEvents)("rejects a %s naming an earlier step", (_type, make) => {
    expectRefused(inStep2, [make(6, 1, 1)], "step-order");
  });

  it.each(stepEvents)("rejects a %s naming another turn", (_type, make) => {
    expectRefused(inStep2, [make(6, 2, 2)], "step-order");
  });

  it.each(stepEvents)("rejects a %s outside a step", (_type, make) => {
    expectRefused(IN_TURN, [make(2, 1, 1)], "step-order");
  });

  it.each(stepEvents)("rejects a %s outside a turn", (_type, make) => {
    expectRefused(CLOSED, [make(CLOSED.length, 1, 1)], "step-order");
  });
});

describe("turn-scope", () => {
  const turnEvents: readonly [string, (seq: number, turn: number) => unknown][] = [
    ["steering/message", (seq, turn) => steeringMessage(seq, turn, "steer")],
    ["compact/start", (seq, turn) => compactStart(seq, turn)],
    ["compact/end", (seq, turn) => compactEnd(seq, turn)],
    ["hook/invoked", (seq, turn) => hookInvoked(seq, turn)],
    ["hook/result", (seq, turn) => hookResult(seq, turn)],
  ];

  it.each(turnEvents)("accepts a %s naming the open turn, inside or between steps", (_t, make) => {
    expectAccepted(IN_TURN, [make(2, 1)]);
    expectAccepted(IN_STEP, [make(3, 1)]);
  });

  it.each(turnEvents)("rejects a %s outside a turn", (_type, make) => {
    expectRefused([], [make(0, 1)], "turn-scope");
    expectRefused(CLOSED, [make(CLOSED.length, 1)], "turn-scope");
  });

  it.each(turnEvents)("rejects a %s naming another turn", (_type, make) => {
    expectRefused(IN_TURN, [make(2, 2)], "turn-scope");
  });
});

describe("events allowed anywhere", () => {
  const anywhere: readonly [string, (seq: number) => SessionEvent][] = [
    ["user/message", (seq) => userMessage(seq, "standalone")],
    ["context/message", (seq) => contextMessage(seq, "context")],
    ["prompt/blocked", (seq) => promptBlocked(seq, "vetoed")],
    ["todo/write", (seq) => todoWrite(seq)],
    ["compact/summary", (seq) => compactSummary(seq, [])],
    ["foreign/record", (seq) => foreignRecord(seq)],
  ];

  it.each(anywhere)(
    "accepts a %s before any turn, inside a turn and step, and after one",
    (_t, make) => {
      expectAccepted([], [make(0)]);
      expectAccepted(IN_TURN, [make(2)]);
      expectAccepted(IN_STEP, [make(3)]);
      expectAccepted(CLOSED, [make(CLOSED.length)]);
    },
  );
});

describe("tool-pairing", () => {
  const twoCalls: readonly SessionEvent[] = [
    ...IN_STEP,
    toolCall(3, 1, 1, "c1"),
    toolCall(4, 1, 1, "c2"),
  ];

  it("accepts results answering the calls of the same step, in any order", () => {
    expectAccepted(twoCalls, [
      toolResult(5, 1, 1, "c2", { sourceEventSeqs: [4] }),
      toolResult(6, 1, 1, "c1", { sourceEventSeqs: [3] }),
      stepEnd(7, 1, 1),
      turnEnd(8, 1),
    ]);
  });

  it("rejects a result without its call", () => {
    expectRefused(twoCalls, [toolResult(5, 1, 1, "c3")], "tool-pairing");
  });

  it("rejects a second result for the same call", () => {
    expectRefused(twoCalls, [toolResult(5, 1, 1, "c1"), toolResult(6, 1, 1, "c1")], "tool-pairing");
  });

  it("rejects a result for a call of an earlier step", () => {
    const prefix = [...IN_STEP, toolCall(3, 1, 1, "c1"), stepEnd(4, 1, 1), stepStart(5, 1, 2)];
    expectRefused(prefix, [toolResult(6, 1, 2, "c1")], "tool-pairing");
  });

  it("accepts the synthetic interrupted result without a call", () => {
    const interrupted = toolResult(3, 1, 1, "never-called", {
      isError: true,
      error: { name: "InterruptedError", code: "interrupted" },
    });
    expectAccepted(IN_STEP, [interrupted]);
  });

  it("rejects an error result without a call unless its code is interrupted", () => {
    const failed = toolResult(3, 1, 1, "never-called", {
      isError: true,
      error: { name: "ToolError", code: "failed" },
    });
    expectRefused(IN_STEP, [failed], "tool-pairing");
    const notAnError = toolResult(3, 1, 1, "never-called", {
      isError: false,
      error: { name: "InterruptedError", code: "interrupted" },
    });
    expectRefused(IN_STEP, [notAnError], "tool-pairing");
  });
});

describe("provenance", () => {
  const prefix: readonly SessionEvent[] = [...IN_STEP, toolCall(3, 1, 1, "c1")];

  it("accepts source seqs lower than the event's own", () => {
    expectAccepted(prefix, [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [3, 0, 2] })]);
  });

  it("rejects a source seq equal to the event's own", () => {
    expectRefused(prefix, [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [3, 4] })], "provenance");
  });

  it("rejects a source seq after the event's own", () => {
    expectRefused(prefix, [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [9] })], "provenance");
  });

  it("rejects a duplicate source seq", () => {
    expectRefused(prefix, [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [3, 3] })], "provenance");
  });

  // Seqs in increasing order are checked without a set; any other order with one.
  it("accepts increasing source seqs, and rejects one that repeats or reaches the event's own after them", () => {
    expectAccepted(prefix, [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [0, 1, 2, 3] })]);
    expectRefused(
      prefix,
      [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [0, 1, 3, 2, 3] })],
      "provenance",
    );
    expectRefused(
      prefix,
      [toolResult(4, 1, 1, "c1", { sourceEventSeqs: [0, 1, 4] })],
      "provenance",
    );
  });
});

describe("replace", () => {
  /** Surface [0, 1, 2]. */
  const three: readonly SessionEvent[] = [
    userMessage(0, "a"),
    userMessage(1, "b"),
    userMessage(2, "c"),
  ];
  const replace = (start: number, end: number) => ({ op: "replace", start, end }) as const;

  it("accepts a replace of a surface range, and derives its message in their place", () => {
    const summary = contextMessage(3, "summary of a and b", {
      surfaceOp: replace(0, 1),
      sourceEventSeqs: [0, 1],
    });
    const log = expectAccepted(three, [summary]);
    expect(log.deriveMessages()).toEqual([
      {
        role: "user",
        content: [text('<context source="user">'), text("summary of a and b"), text("</context>")],
      },
      { role: "user", content: [text("c")] },
    ]);
  });

  it("accepts a whole compaction inside a turn", () => {
    const prefix = [...IN_TURN, userMessage(2, "b")];
    expectAccepted(prefix, [
      compactStart(3, 1),
      compactSummary(4, [1, 2]),
      userMessage(5, "summary", { surfaceOp: replace(1, 2), sourceEventSeqs: [1, 2] }),
      compactEnd(6, 1),
    ]);
  });

  it("rejects a start not on the surface", () => {
    const bad = userMessage(3, "s", { surfaceOp: replace(7, 2), sourceEventSeqs: [0, 1, 2] });
    expectRefused(three, [bad], "replace");
    // A seq that exists but is not surface-eligible is not on the surface either.
    const prefix = [turnStart(0, 1), userMessage(1, "a")];
    const overTurn = userMessage(2, "s", { surfaceOp: replace(0, 1), sourceEventSeqs: [0, 1] });
    expectRefused(prefix, [overTurn], "replace");
  });

  it("rejects an end not on the surface", () => {
    const bad = userMessage(3, "s", { surfaceOp: replace(0, 7), sourceEventSeqs: [0, 1, 2] });
    expectRefused(three, [bad], "replace");
  });

  it("rejects a node that an earlier replace removed", () => {
    const first = userMessage(3, "s", { surfaceOp: replace(0, 1), sourceEventSeqs: [0, 1] });
    const again = userMessage(4, "t", { surfaceOp: replace(1, 2), sourceEventSeqs: [1, 2] });
    expectRefused(three, [first, again], "replace");
  });

  it("orders start and end by the surface, not by seq", () => {
    // Replacing node 1 by seq 3 makes the surface [0, 3, 2].
    const middle = userMessage(3, "m", { surfaceOp: replace(1, 1), sourceEventSeqs: [1] });
    const byStart3 = userMessage(4, "s", { surfaceOp: replace(3, 2), sourceEventSeqs: [2, 3] });
    expectAccepted(three, [middle, byStart3]);
    const byStart2 = userMessage(4, "s", { surfaceOp: replace(2, 3), sourceEventSeqs: [2, 3] });
    expectRefused(three, [middle, byStart2], "replace");
  });

  it("rejects start after end in surface order", () => {
    const bad = userMessage(3, "s", { surfaceOp: replace(2, 0), sourceEventSeqs: [0, 1, 2] });
    expectRefused(three, [bad], "replace");
  });

  it("rejects sourceEventSeqs missing a removed node", () => {
    const missing = userMessage(3, "s", { surfaceOp: replace(0, 2), sourceEventSeqs: [0, 2] });
    expectRefused(three, [missing], "replace");
    const none = userMessage(3, "s", { surfaceOp: replace(0, 0) });
    expectRefused(three, [none], "replace");
  });
});

describe("append batches", () => {
  const stored: readonly SessionEvent[] = simpleTurn(0, 1, { toolCallsPerStep: 1 });

  it("answers SEQ_CONFLICT with the expected seq when the first seq is past the next one", () => {
    const log = new KeptLog(HEADER, stored);
    const error = storageError(() => log.append([turnStart(stored.length + 1, 2)]));
    expect(error.code).toBe("SEQ_CONFLICT");
    expect(error.details).toEqual({ expectedSeq: stored.length });
    expect(log.length).toBe(stored.length);
  });

  it("refuses a seed that does not start at seq 0: INVALID_EVENT seq-contiguous, not SEQ_CONFLICT", () => {
    // Seen failing before the fix: SEQ_CONFLICT {expectedSeq: 0}, a code session/create does not declare.
    const late = invalid(() => new KeptLog(HEADER, [turnStart(1, 1)]));
    expect(late.code).toBe("INVALID_EVENT");
    expect(late.details).toEqual({
      seq: 1,
      index: 0,
      rule: "seq-contiguous",
      instancePath: "/seq",
      problems: [
        {
          seq: 1,
          index: 0,
          rule: "seq-contiguous",
          instancePath: "/seq",
          message: "expected seq 0 (the index in the log), got 1",
        },
      ],
      problemCount: 1,
    });
    // A negative seq is no seq: the error names the seq the event's place calls for (the wire
    // schema's seq is at least 0).
    const negative = invalid(() => new KeptLog(HEADER, [turnStart(-1, 1)]));
    expect(negative.details).toEqual({
      seq: 0,
      index: 0,
      rule: "seq-contiguous",
      instancePath: "/seq",
      problems: [
        {
          seq: 0,
          index: 0,
          rule: "seq-contiguous",
          instancePath: "/seq",
          message: "expected seq 0 (the index in the log), got -1",
        },
      ],
      problemCount: 1,
    });
  });

  it("acknowledges a batch that repeats stored events exactly, changing nothing", () => {
    const log = new KeptLog(HEADER, stored);
    const events = log.events;
    const messages = log.deriveMessages();
    expect(log.append(stored.slice(2))).toBe(stored.length);
    expect(log.append(stored)).toBe(stored.length);
    expect(log.length).toBe(stored.length);
    expect(log.events).toEqual(events);
    expect(log.deriveMessages()).toEqual(messages);
  });

  it("takes only the new events of a retry that repeats stored ones and continues", () => {
    const log = new KeptLog(HEADER, stored);
    const next = simpleTurn(stored.length, 2);
    expect(log.append([...stored.slice(-2), ...next])).toBe(stored.length + next.length);
    expect(log.events).toEqual([...stored, ...next]);
  });

  it("answers SEQ_CONFLICT for a different event at an old seq, changing nothing", () => {
    const log = new KeptLog(HEADER, stored);
    const events = log.events;
    const error = storageError(() => log.append([userMessage(1, "something else")]));
    expect(error.code).toBe("SEQ_CONFLICT");
    expect(error.details).toEqual({ expectedSeq: stored.length });
    expect(log.events).toEqual(events);
  });

  it("answers SEQ_CONFLICT when a retry diverges after its first repeated event", () => {
    const log = new KeptLog(HEADER, stored);
    const error = storageError(() => log.append([stored[0], turnStart(1, 1)]));
    expect(error.code).toBe("SEQ_CONFLICT");
    expect(log.length).toBe(stored.length);
  });

  // An event at an old seq holding a value JSON cannot represent is not identical to the stored
  // one; it must be refused as a conflict, not crash the comparison or compare equal as JSON text.
  const answered: readonly SessionEvent[] = [
    ...IN_STEP,
    toolCall(3, 1, 1, "c1"),
    toolResult(4, 1, 1, "c1", { meta: { v: null }, sourceEventSeqs: [3] }),
  ];
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  it.each([
    ["NaN", Number.NaN],
    ["a BigInt", 1n],
    ["a cycle", cycle],
  ] as const)("answers SEQ_CONFLICT for an event at an old seq holding %s", (_name, value) => {
    const log = new KeptLog(HEADER, answered);
    const retry = toolResult(4, 1, 1, "c1", { meta: { v: value }, sourceEventSeqs: [3] });
    const error = storageError(() => log.append([retry]));
    expect(error.code).toBe("SEQ_CONFLICT");
    expect(log.length).toBe(answered.length);
  });

  it("leaves the log unchanged when a batch is rejected part-way", () => {
    const log = new KeptLog(HEADER, stored);
    const events = log.events;
    const messages = log.deriveMessages();
    const next = stored.length;
    const error = invalid(() =>
      log.append([turnStart(next, 2), userMessage(next + 1, "b"), stepStart(next + 2, 2, 2)]),
    );
    expect(error.details).toMatchObject({ rule: "step-order", seq: next + 2, index: 2 });
    expect(log.length).toBe(stored.length);
    expect(log.events).toEqual(events);
    expect(log.events).toEqual(stored);
    expect(log.deriveMessages()).toEqual(messages);
    expect(log.openTurn).toBeUndefined();
    // The state did not move either: turn 2 is still the next turn.
    expect(log.append(simpleTurn(next, 2))).toBe(next + simpleTurn(next, 2).length);
  });

  it("refuses an unknown event type as FORMAT_UNSUPPORTED on append, not INVALID_EVENT", () => {
    const log = new KeptLog(HEADER, stored);
    const next = stored.length;
    const unknown = { type: "turn/pause", seq: next + 1, time: 1, data: {} };
    const error = storageError(() => log.append([turnStart(next, 2), unknown]));
    expect(error).not.toBeInstanceOf(InvalidEventError);
    expect(error.code).toBe("FORMAT_UNSUPPORTED");
    expect(error.details).toEqual({ found: "turn/pause", supported: 0 });
    expect(log.length).toBe(stored.length);
  });

  it("refuses an unknown event type as FORMAT_UNSUPPORTED on seed", () => {
    const unknown = { type: "memory/write", seq: 0, time: 1, data: {} };
    const error = storageError(() => new KeptLog(HEADER, [unknown]));
    expect(error.code).toBe("FORMAT_UNSUPPORTED");
    expect(error.details).toMatchObject({ found: "memory/write" });
  });
});

describe("immutability", () => {
  function expectDeepFrozen(value: unknown, path = ""): void {
    if (typeof value !== "object" || value === null) return;
    expect(Object.isFrozen(value), `frozen at ${path || "/"}`).toBe(true);
    for (const [key, child] of Object.entries(value)) expectDeepFrozen(child, `${path}/${key}`);
  }

  it("copies appended events in: changing the caller's object afterwards changes nothing", () => {
    const block = { type: "text" as const, text: "original" };
    const content = [block];
    const event = { ...userMessage(0, "x"), data: { content, source: { kind: "user" as const } } };
    const log = new KeptLog(HEADER, []);
    log.append([event]);
    block.text = "changed";
    content.push({ type: "text", text: "added" });
    event.seq = 5;
    expect(log.at(0)).toEqual(userMessage(0, "original"));
    expect(log.deriveMessages()).toEqual([{ role: "user", content: [text("original")] }]);
    expect(Object.isFrozen(block)).toBe(false);
  });

  it("copies seeded events in", () => {
    const seed = balancedLog(1).map((e) => structuredClone(e) as { seq: number });
    const log = new KeptLog(HEADER, seed);
    for (const event of seed) event.seq += 100;
    expect(log.events).toEqual(balancedLog(1));
  });

  it("hands out events, the event list and messages deeply frozen", () => {
    const log = new KeptLog(HEADER, balancedLog(2, { toolCallsPerStep: 2, steps: 2 }));
    log.append(simpleTurn(log.length, 3, { chunksPerStep: 2 }));
    expectDeepFrozen(log.events);
    expectDeepFrozen(log.deriveMessages());
    expect(Object.isFrozen(log.at(0))).toBe(true);
  });

  it("throws on assignment to a stored event (strict mode)", () => {
    const log = new KeptLog(HEADER, [userMessage(0, "x")]);
    const event = log.at(0) as unknown as { seq: number; data: { content: { text: string }[] } };
    expect(() => {
      event.seq = 9;
    }).toThrow(TypeError);
    expect(() => {
      const [block] = event.data.content;
      if (block) block.text = "changed";
    }).toThrow(TypeError);
    expect(() => {
      (log.events as SessionEvent[]).push(userMessage(1, "y"));
    }).toThrow(TypeError);
    expect(log.at(0)).toEqual(userMessage(0, "x"));
  });
});

describe("the recorded corpus", () => {
  const logs = corpusLogs();

  it("holds recorded logs", () => {
    expect(logs.length).toBeGreaterThan(0);
  });

  it.each(logs.map((l) => [l.name, l] as const))("%s loads as a seed", (_name, corpus) => {
    if (!validateSessionHeaderLine(corpus.header)) {
      return expect.unreachable(`expected a header line in ${corpus.name}`);
    }
    const { type: _type, ...header } = corpus.header;
    const log = new KeptLog(header, corpus.events);
    expect(log.length).toBe(corpus.events.length);
    expect(log.openTurn).toBeUndefined();
    expect(new KeptLog(header, structuredClone(corpus.events), "parsed").events).toEqual(
      log.events,
    );

    // The messages follow the surface: one per surface event in log order (the corpus has no
    // replace), except assistant messages with empty content.
    const surface = log.events.filter((e) => isSurfaceEligibleType(e.type));
    expect(surface.every((e) => "surfaceOp" in e && e.surfaceOp === "append")).toBe(true);
    const producing = surface.filter(
      (e) => !(e.type === "assistant/message" && e.data.content.length === 0),
    );
    const messages = log.deriveMessages();
    expect(messages).toHaveLength(producing.length);
    expect(messages.map((m) => m.role)).toEqual(
      producing.map((e) => (e.type === "assistant/message" ? "assistant" : "user")),
    );
    expect(messages).toEqual(deriveMessages(log.events));
  });
});
