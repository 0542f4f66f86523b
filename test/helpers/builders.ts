// Shared fixture builders for tests: valid session events, balanced turns and headers, typed with the generated types.

import type { SourceEventSeqs, TodoItem } from "../../src/generated.js";
import type {
  ContentBlock,
  EventOf,
  MessageSource,
  SessionEvent,
  SessionHeader,
  StreamChunk,
  SurfaceOp,
  ToolError,
  TurnEndReason,
  TurnTrigger,
} from "../../src/index.js";

/** The `time` every builder stamps unless told otherwise (epoch ms). */
export const TIME = 1_700_000_000_000;

/** The message source of a user prompt. */
export const USER: MessageSource = { kind: "user" };

/** A session header for logs built in memory. */
export function testHeader(id = "test-session"): SessionHeader {
  return { version: 0, id, createdAt: TIME };
}

/** One text content block. */
export function text(value: string): ContentBlock {
  return { type: "text", text: value };
}

/** The envelope options of a surface-eligible event. */
export interface SurfaceOptions {
  readonly surfaceOp?: SurfaceOp;
  readonly sourceEventSeqs?: SourceEventSeqs;
  readonly time?: number;
}

/** `surfaceOp` (default "append") and `sourceEventSeqs` (only when given), in envelope key order. */
function marker(opts: SurfaceOptions): {
  sourceEventSeqs?: SourceEventSeqs;
  surfaceOp: SurfaceOp;
} {
  return {
    ...(opts.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: opts.sourceEventSeqs }),
    surfaceOp: opts.surfaceOp ?? "append",
  };
}

export function turnStart(
  seq: number,
  turn: number,
  trigger: TurnTrigger = { kind: "message", source: USER },
  time = TIME,
): EventOf<"turn/start"> {
  return { type: "turn/start", seq, time, data: { turn, trigger } };
}

export function turnEnd(
  seq: number,
  turn: number,
  reason: TurnEndReason = { kind: "completed" },
  time = TIME,
): EventOf<"turn/end"> {
  return { type: "turn/end", seq, time, data: { turn, reason } };
}

export function stepStart(
  seq: number,
  turn: number,
  step: number,
  time = TIME,
): EventOf<"step/start"> {
  return { type: "step/start", seq, time, data: { turn, step } };
}

export function stepEnd(seq: number, turn: number, step: number, time = TIME): EventOf<"step/end"> {
  return { type: "step/end", seq, time, data: { turn, step } };
}

export function userMessage(
  seq: number,
  prompt: string,
  opts: SurfaceOptions = {},
): EventOf<"user/message"> {
  return {
    type: "user/message",
    seq,
    time: opts.time ?? TIME,
    data: { content: [text(prompt)], source: USER },
    ...marker(opts),
  };
}

export function contextMessage(
  seq: number,
  body: string,
  opts: SurfaceOptions & { readonly source?: MessageSource } = {},
): EventOf<"context/message"> {
  return {
    type: "context/message",
    seq,
    time: opts.time ?? TIME,
    data: { content: [text(body)], source: opts.source ?? USER },
    ...marker(opts),
  };
}

export function steeringMessage(
  seq: number,
  turn: number,
  body: string,
  opts: SurfaceOptions & { readonly source?: MessageSource } = {},
): EventOf<"steering/message"> {
  return {
    type: "steering/message",
    seq,
    time: opts.time ?? TIME,
    data: { turn, content: [text(body)], source: opts.source ?? USER },
    ...marker(opts),
  };
}

export function promptBlocked(
  seq: number,
  prompt: string,
  reason = "blocked by a hook",
  time = TIME,
): EventOf<"prompt/blocked"> {
  return {
    type: "prompt/blocked",
    seq,
    time,
    data: { content: [text(prompt)], source: USER, reason },
  };
}

export function assistantChunk(
  seq: number,
  turn: number,
  step: number,
  chunk: StreamChunk = { type: "text-delta", index: 0, text: "…" },
  time = TIME,
): EventOf<"assistant/chunk"> {
  return { type: "assistant/chunk", seq, time, data: { turn, step, chunk } };
}

export function assistantMessage(
  seq: number,
  turn: number,
  step: number,
  content: readonly ContentBlock[] = [text("done")],
  opts: SurfaceOptions = {},
): EventOf<"assistant/message"> {
  return {
    type: "assistant/message",
    seq,
    time: opts.time ?? TIME,
    data: { turn, step, content },
    ...marker(opts),
  };
}

export function toolCall(
  seq: number,
  turn: number,
  step: number,
  callId: string,
  name = "bash",
  args = "{}",
  time = TIME,
): EventOf<"tool/call"> {
  return { type: "tool/call", seq, time, data: { turn, step, callId, name, arguments: args } };
}

/** The result of `callId`; `sourceEventSeqs` is usually `[seq of the call]`. */
export function toolResult(
  seq: number,
  turn: number,
  step: number,
  callId: string,
  opts: SurfaceOptions & {
    readonly output?: string;
    readonly isError?: boolean;
    readonly error?: ToolError;
    readonly meta?: unknown;
  } = {},
): EventOf<"tool/result"> {
  return {
    type: "tool/result",
    seq,
    time: opts.time ?? TIME,
    data: {
      turn,
      step,
      callId,
      content: [text(opts.output ?? "ok")],
      isError: opts.isError ?? false,
      ...(opts.error === undefined ? {} : { error: opts.error }),
      ...(opts.meta === undefined ? {} : { meta: opts.meta }),
    },
    ...marker(opts),
  };
}

export function todoWrite(
  seq: number,
  todos: readonly TodoItem[] = [{ content: "write tests", status: "pending" }],
  time = TIME,
): EventOf<"todo/write"> {
  return { type: "todo/write", seq, time, data: { todos } };
}

export function compactStart(seq: number, turn: number, time = TIME): EventOf<"compact/start"> {
  return { type: "compact/start", seq, time, data: { turn } };
}

/** A summary of the surface nodes `shadowedSeqs` (range from the first to the last). */
export function compactSummary(
  seq: number,
  shadowedSeqs: readonly number[],
  summary = "summary",
  time = TIME,
): EventOf<"compact/summary"> {
  return {
    type: "compact/summary",
    seq,
    time,
    data: {
      summary,
      shadowedRange: { start: shadowedSeqs[0] ?? 0, end: shadowedSeqs.at(-1) ?? 0 },
      shadowedSeqs,
      shadowedTokenCount: 100,
    },
  };
}

export function compactEnd(seq: number, turn: number, time = TIME): EventOf<"compact/end"> {
  return { type: "compact/end", seq, time, data: { turn } };
}

export function hookInvoked(
  seq: number,
  turn: number,
  handlerId = "hook-1",
  time = TIME,
): EventOf<"hook/invoked"> {
  return {
    type: "hook/invoked",
    seq,
    time,
    data: { turn, point: "PreToolUse", dialect: "claude-code", handlerId },
  };
}

export function hookResult(
  seq: number,
  turn: number,
  handlerId = "hook-1",
  time = TIME,
): EventOf<"hook/result"> {
  return {
    type: "hook/result",
    seq,
    time,
    data: { turn, point: "PreToolUse", handlerId, decision: "allow", durationMs: 1.5 },
  };
}

/** A foreign record: line `line` of a `source` transcript, kept as `record`. */
export function foreignRecord(
  seq: number,
  record: unknown = { type: "file-history-snapshot", messageId: "m1" },
  line = 1,
  time = TIME,
): EventOf<"foreign/record"> {
  return { type: "foreign/record", seq, time, data: { source: "claude-code", line, record } };
}

/** The callId `simpleTurn` gives the `index`-th tool call of a step. */
export function callIdOf(turn: number, step: number, index: number): string {
  return `call-${turn}-${step}-${index}`;
}

/** The shape of a turn built by {@link simpleTurn}. */
export interface SimpleTurnOptions {
  /** The user prompt that opens the turn. */
  readonly prompt?: string;
  /** How many steps (model calls); at least 1. */
  readonly steps?: number;
  /** Stream chunks before each step's assistant message. */
  readonly chunksPerStep?: number;
  /** Tool calls in every step, each answered inside its step. */
  readonly toolCallsPerStep?: number;
  readonly reason?: TurnEndReason;
  readonly time?: number;
}

/**
 * A balanced turn starting at `fromSeq`: `turn/start`, `user/message`, then per step
 * `step/start`, chunks, `assistant/message` (its tool-call blocks, `sourceEventSeqs` = the
 * chunks), the `tool/call`s, their `tool/result`s, `step/end`; then `turn/end`. The next seq
 * after it is `fromSeq + result.length`.
 */
export function simpleTurn(
  fromSeq: number,
  turn: number,
  opts: SimpleTurnOptions = {},
): SessionEvent[] {
  const time = opts.time ?? TIME;
  const events: SessionEvent[] = [];
  let seq = fromSeq;
  events.push(turnStart(seq++, turn, undefined, time));
  events.push(userMessage(seq++, opts.prompt ?? `prompt of turn ${turn}`, { time }));
  for (let step = 1; step <= (opts.steps ?? 1); step++) {
    events.push(stepStart(seq++, turn, step, time));
    const chunkSeqs: number[] = [];
    for (let i = 0; i < (opts.chunksPerStep ?? 1); i++) {
      chunkSeqs.push(seq);
      events.push(assistantChunk(seq++, turn, step, undefined, time));
    }
    const calls = Array.from({ length: opts.toolCallsPerStep ?? 0 }, (_, i) =>
      callIdOf(turn, step, i),
    );
    const content: ContentBlock[] = [text(`answer ${turn}.${step}`)];
    for (const id of calls) content.push({ type: "tool-call", id, name: "bash", arguments: "{}" });
    events.push(
      assistantMessage(seq++, turn, step, content, {
        time,
        ...(chunkSeqs.length === 0 ? {} : { sourceEventSeqs: chunkSeqs }),
      }),
    );
    const callSeqs = new Map<string, number>();
    for (const id of calls) {
      callSeqs.set(id, seq);
      events.push(toolCall(seq++, turn, step, id, "bash", "{}", time));
    }
    for (const id of calls) {
      const callSeq = callSeqs.get(id) ?? 0;
      events.push(toolResult(seq++, turn, step, id, { time, sourceEventSeqs: [callSeq] }));
    }
    events.push(stepEnd(seq++, turn, step, time));
  }
  events.push(turnEnd(seq++, turn, opts.reason, time));
  return events;
}

/** `count` balanced turns from seq 0 (turns 1…count), each shaped by `opts`. */
export function balancedLog(count: number, opts: SimpleTurnOptions = {}): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let turn = 1; turn <= count; turn++) events.push(...simpleTurn(events.length, turn, opts));
  return events;
}
