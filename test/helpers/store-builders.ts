// Helpers for the store, fork and message tests that test/builders.ts does not offer: open turns, a compaction log, a clock, rejections.
import {
  MemoryBackend,
  type SessionEvent,
  SessionStore,
  type SurfaceEligibleType,
} from "../../src/index.js";
import {
  assistantMessage,
  compactEnd,
  compactStart,
  compactSummary,
  contextMessage,
  stepEnd,
  stepStart,
  TIME,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";

/** The error a promise rejects with; fails the test when it resolves instead. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject, but it resolved");
}

/** A clock the test moves by hand, for the store's `now` option. */
export interface ManualClock {
  readonly now: () => number;
  set(time: number): void;
}

export function manualClock(start = 1_000): ManualClock {
  let time = start;
  return {
    now: () => time,
    set: (next) => {
      time = next;
    },
  };
}

/** A store over a backend the test keeps, so that other stores can open the same sessions. */
export function storeOver(
  backend: MemoryBackend = new MemoryBackend(),
  clock: ManualClock = manualClock(),
): SessionStore {
  return new SessionStore({ backend, now: clock.now });
}

/**
 * A turn left open by a crashed writer, from `fromSeq`: `turn/start`, `user/message`, `step/start`,
 * an assistant message asking for two tools, both `tool/call`s and the result of the first only.
 * The last event's time is `lastTime`, so that repair closers can be told to copy it.
 */
export function openTurnTail(fromSeq: number, turn: number, lastTime = TIME + 99): SessionEvent[] {
  let seq = fromSeq;
  const first = `open-${turn}-a`;
  const second = `open-${turn}-b`;
  const events: SessionEvent[] = [
    turnStart(seq++, turn),
    userMessage(seq++, `prompt of open turn ${turn}`),
    stepStart(seq++, turn, 1),
    assistantMessage(seq++, turn, 1, [
      { type: "tool-call", id: first, name: "bash", arguments: "{}" },
      { type: "tool-call", id: second, name: "bash", arguments: "{}" },
    ]),
  ];
  const firstCall = seq;
  events.push(toolCall(seq++, turn, 1, first));
  events.push(toolCall(seq++, turn, 1, second));
  events.push(toolResult(seq++, turn, 1, first, { sourceEventSeqs: [firstCall], time: lastTime }));
  return events;
}

/** The seqs of {@link compactionLog} that the tests name. */
export const COMPACTION = {
  /** The seq of the `compact/summary`, the last event before the replace. */
  summarySeq: 14,
  /** The seq of the replacing `user/message`. */
  replaceSeq: 15,
  /** The surface nodes the replace removes: a user prompt, an assistant message, a tool result. */
  shadowed: [2, 4, 6] as const,
} as const;

/**
 * A two-turn log with a compaction in turn 2:
 * 0 context · turn 1 [2 prompt "q1", step 1: 4 assistant "a1" + call, 6 result; step 2: 9 "a2"] ·
 * turn 2 [13 compact/start, 14 compact/summary, 15 summary replacing 2…6, 16 compact/end,
 * step 1: 18 "a3"], 20 turn/end.
 */
export function compactionLog(): SessionEvent[] {
  const events: SessionEvent[] = [
    contextMessage(0, "repo notes"),
    turnStart(1, 1),
    userMessage(2, "q1"),
    stepStart(3, 1, 1),
    assistantMessage(4, 1, 1, [
      text("a1"),
      { type: "tool-call", id: "c1", name: "bash", arguments: "{}" },
    ]),
    toolCall(5, 1, 1, "c1"),
    toolResult(6, 1, 1, "c1", { sourceEventSeqs: [5], output: "r1" }),
    stepEnd(7, 1, 1),
    stepStart(8, 1, 2),
    assistantMessage(9, 1, 2, [text("a2")]),
    stepEnd(10, 1, 2),
    turnEnd(11, 1),
    turnStart(12, 2, { kind: "injection", source: { kind: "user" } }),
    compactStart(13, 2),
    compactSummary(14, [...COMPACTION.shadowed], "the story so far"),
    userMessage(15, "the story so far", {
      surfaceOp: { op: "replace", start: 2, end: 6 },
      sourceEventSeqs: [...COMPACTION.shadowed],
    }),
    compactEnd(16, 2),
    stepStart(17, 2, 1),
    assistantMessage(18, 2, 1, [text("a3")]),
    stepEnd(19, 2, 1),
    turnEnd(20, 2),
  ];
  return events;
}

/** The role a surface event's message takes (docs/log.md, derived messages). */
export function roleOf(type: SurfaceEligibleType): "user" | "assistant" {
  return type === "assistant/message" ? "assistant" : "user";
}

/**
 * The last `turn/start` or `turn/end` at or before `boundary`, found by a plain scan: the
 * test's own reading of the fork rule, independent of src/log/fork-rules.ts.
 */
export function lastMarkerBefore(
  events: readonly SessionEvent[],
  boundary: number,
): { readonly type: "turn/start" | "turn/end"; readonly turn: number } | undefined {
  let found: { type: "turn/start" | "turn/end"; turn: number } | undefined;
  for (const event of events.slice(0, boundary + 1)) {
    if (event.type === "turn/start" || event.type === "turn/end") {
      found = { type: event.type, turn: event.data.turn };
    }
  }
  return found;
}

/** The highest turn number started in `events` (0 when none). */
export function lastTurnNumber(events: readonly SessionEvent[]): number {
  let turn = 0;
  for (const event of events) if (event.type === "turn/start") turn = event.data.turn;
  return turn;
}
