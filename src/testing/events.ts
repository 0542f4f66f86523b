// Valid session events for the backend contract: balanced turns, an open turn, and headers.
import { SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from "../generated.js";

/** The `time` of seq 0 in every contract log; seq n is stamped `BASE_TIME + n`. */
export const BASE_TIME = 1_700_000_000_000;

/** The number of events of one {@link balancedTurn}. */
export const TURN_LENGTH = 9;

/** A header of the current format version; `extra` adds `cwd`, `parentSession`, `seedLength`. */
export function header(
  id: string,
  extra: Partial<Omit<SessionHeader, "version" | "id">> = {},
): SessionHeader {
  return { version: SESSION_FORMAT_VERSION, id, createdAt: BASE_TIME, ...extra };
}

/** The first events of turn `turn` from `fromSeq`: turn/start, user/message, step/start, one chunk. */
export function openTurn(fromSeq: number, turn: number): SessionEvent[] {
  const time = (seq: number) => BASE_TIME + seq;
  let seq = fromSeq;
  return [
    {
      type: "turn/start",
      seq,
      time: time(seq++),
      data: { turn, trigger: { kind: "message", source: { kind: "user" } } },
    },
    {
      type: "user/message",
      seq,
      time: time(seq++),
      data: { content: [{ type: "text", text: `prompt ${turn}` }], source: { kind: "user" } },
      surfaceOp: "append",
    },
    { type: "step/start", seq, time: time(seq++), data: { turn, step: 1 } },
    {
      type: "assistant/chunk",
      seq,
      time: time(seq++),
      data: { turn, step: 1, chunk: { type: "text-delta", index: 0, text: "…" } },
    },
  ];
}

/**
 * The shape of a {@link balancedTurn}. The default, one step with one chunk and one tool call,
 * makes {@link TURN_LENGTH} events.
 */
export interface TurnShape {
  /** Steps (model calls), at least 1. */
  readonly steps?: number;
  /** Stream chunks before each step's assistant message. */
  readonly chunksPerStep?: number;
  /** Tool calls in every step, each answered inside its step. */
  readonly toolCallsPerStep?: number;
  /** The `time` of every event, instead of `BASE_TIME + seq`. */
  readonly time?: number;
}

/**
 * A balanced turn from `fromSeq`: turn/start, user/message, then per step step/start, the chunks,
 * assistant/message (its tool-call blocks; `sourceEventSeqs`, the chunks), the tool/calls, their
 * tool/results, step/end; then turn/end. With the default {@link TurnShape}: {@link openTurn},
 * then assistant/message, tool/call, tool/result, step/end, turn/end ({@link TURN_LENGTH} events).
 */
export function balancedTurn(fromSeq: number, turn: number, shape: TurnShape = {}): SessionEvent[] {
  const time = (seq: number) => shape.time ?? BASE_TIME + seq;
  // The first call of the first step keeps the plain id the default turn has always had.
  const callIdOf = (step: number, index: number) =>
    step === 1 && index === 0 ? `call-${turn}` : `call-${turn}-${step}-${index}`;
  const events: SessionEvent[] = [];
  let seq = fromSeq;
  events.push(
    {
      type: "turn/start",
      seq,
      time: time(seq++),
      data: { turn, trigger: { kind: "message", source: { kind: "user" } } },
    },
    {
      type: "user/message",
      seq,
      time: time(seq++),
      data: { content: [{ type: "text", text: `prompt ${turn}` }], source: { kind: "user" } },
      surfaceOp: "append",
    },
  );
  for (let step = 1; step <= (shape.steps ?? 1); step++) {
    events.push({ type: "step/start", seq, time: time(seq++), data: { turn, step } });
    const chunkSeqs: number[] = [];
    for (let i = 0; i < (shape.chunksPerStep ?? 1); i++) {
      chunkSeqs.push(seq);
      events.push({
        type: "assistant/chunk",
        seq,
        time: time(seq++),
        data: { turn, step, chunk: { type: "text-delta", index: 0, text: "…" } },
      });
    }
    const callIds = Array.from({ length: shape.toolCallsPerStep ?? 1 }, (_, i) =>
      callIdOf(step, i),
    );
    events.push({
      type: "assistant/message",
      seq,
      time: time(seq++),
      data: {
        turn,
        step,
        content: [
          { type: "text", text: step === 1 ? `answer ${turn}` : `answer ${turn}.${step}` },
          ...callIds.map((id) => ({
            type: "tool-call" as const,
            id,
            name: "bash",
            arguments: "{}",
          })),
        ],
      },
      ...(chunkSeqs.length === 0 ? {} : { sourceEventSeqs: chunkSeqs }),
      surfaceOp: "append",
    });
    const callSeq = seq;
    for (const callId of callIds) {
      events.push({
        type: "tool/call",
        seq,
        time: time(seq++),
        data: { turn, step, callId, name: "bash", arguments: "{}" },
      });
    }
    for (const [i, callId] of callIds.entries()) {
      events.push({
        type: "tool/result",
        seq,
        time: time(seq++),
        data: { turn, step, callId, content: [{ type: "text", text: "ok" }], isError: false },
        sourceEventSeqs: [callSeq + i],
        surfaceOp: "append",
      });
    }
    events.push({ type: "step/end", seq, time: time(seq++), data: { turn, step } });
  }
  events.push({
    type: "turn/end",
    seq,
    time: time(seq++),
    data: { turn, reason: { kind: "completed" } },
  });
  return events;
}

/** `count` balanced turns from seq 0 (turns 1…count), each of `shape`. */
export function balancedLog(count: number, shape: TurnShape = {}): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let turn = 1; turn <= count; turn++)
    events.push(...balancedTurn(events.length, turn, shape));
  return events;
}

/**
 * What closes the {@link openTurn} that started at `openedAt`, as crash repair would: step/end,
 * then turn/end interrupted, stamped with the time of the open turn's last event.
 */
export function closers(openedAt: number, turn: number): SessionEvent[] {
  const seq = openedAt + 4;
  const time = BASE_TIME + seq - 1;
  return [
    { type: "step/end", seq, time, data: { turn, step: 1 } },
    { type: "turn/end", seq: seq + 1, time, data: { turn, reason: { kind: "interrupted" } } },
  ];
}
