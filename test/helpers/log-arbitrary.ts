// A fast-check arbitrary of valid session logs: turns with steps, chunks, tool calls and results,
// steering, hooks, standalone events between turns, and sometimes an open turn at the end.
import fc from "fast-check";
import type { ContentBlock, SessionEvent } from "../../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  compactSummary,
  contextMessage,
  foreignRecord,
  hookInvoked,
  hookResult,
  steeringMessage,
  stepEnd,
  stepStart,
  text,
  todoWrite,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";

interface StepShape {
  readonly chunks: number;
  readonly tools: number;
  /** An assistant message with empty content (usage only); only for steps without tools. */
  readonly emptyMessage: boolean;
}

interface TurnShape {
  readonly kind: "turn";
  readonly prompt: boolean;
  readonly hook: boolean;
  /** Steering injected after this many steps (none when undefined). */
  readonly steeringAfter: number | undefined;
  /** A log-only or context event standing inside the turn. */
  readonly inner: "todo" | "context" | "foreign" | undefined;
  readonly steps: readonly StepShape[];
}

interface StandaloneShape {
  readonly kind: "standalone";
  readonly what: "user" | "context" | "todo" | "summary" | "foreign";
}

export interface LogShape {
  readonly segments: readonly (TurnShape | StandaloneShape)[];
  /** A turn cut short at the end: keep this fraction of its events (before its turn/end). */
  readonly openTail: { readonly turn: TurnShape; readonly keep: number } | undefined;
}

const stepArb: fc.Arbitrary<StepShape> = fc.record({
  chunks: fc.integer({ min: 0, max: 2 }),
  tools: fc.integer({ min: 0, max: 2 }),
  emptyMessage: fc.boolean(),
});

const turnArb: fc.Arbitrary<TurnShape> = fc.record({
  kind: fc.constant("turn" as const),
  prompt: fc.boolean(),
  hook: fc.boolean(),
  steeringAfter: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  inner: fc.constantFrom("todo" as const, "context" as const, "foreign" as const, undefined),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
});

const standaloneArb: fc.Arbitrary<StandaloneShape> = fc.record({
  kind: fc.constant("standalone" as const),
  what: fc.constantFrom(
    "user" as const,
    "context" as const,
    "todo" as const,
    "summary" as const,
    "foreign" as const,
  ),
});

export const logShapeArb: fc.Arbitrary<LogShape> = fc.record({
  segments: fc.array(fc.oneof({ weight: 2, arbitrary: turnArb }, standaloneArb), {
    maxLength: 5,
  }),
  openTail: fc.option(
    fc.record({ turn: turnArb, keep: fc.double({ min: 0, max: 1, noNaN: true }) }),
    {
      nil: undefined,
    },
  ),
});

/** Writes valid events for shapes, keeping the seq and turn counters. */
class LogWriter {
  readonly events: SessionEvent[] = [];
  #turn = 0;

  get #seq(): number {
    return this.events.length;
  }

  standalone(shape: StandaloneShape): void {
    const seq = this.#seq;
    switch (shape.what) {
      case "user":
        this.events.push(userMessage(seq, `standalone ${seq}`));
        break;
      case "context":
        this.events.push(
          contextMessage(seq, `context ${seq}`, { source: { kind: "plugin", plugin: "p" } }),
        );
        break;
      case "todo":
        this.events.push(todoWrite(seq));
        break;
      case "summary":
        this.events.push(compactSummary(seq, seq > 0 ? [0, seq - 1] : []));
        break;
      case "foreign":
        this.events.push(foreignRecord(seq, { type: "progress", n: seq }, seq + 1));
        break;
    }
  }

  /** A whole, balanced turn's events (appended to the log), returned too. */
  turn(shape: TurnShape): SessionEvent[] {
    const from = this.#seq;
    const turn = ++this.#turn;
    const push = (make: (seq: number) => SessionEvent) => this.events.push(make(this.#seq));
    push((seq) => turnStart(seq, turn));
    if (shape.prompt) push((seq) => userMessage(seq, `prompt ${turn}`));
    if (shape.hook) {
      push((seq) => hookInvoked(seq, turn));
      push((seq) => hookResult(seq, turn));
    }
    for (const [index, stepShape] of shape.steps.entries()) {
      if (shape.steeringAfter === index && index > 0) {
        push((seq) => steeringMessage(seq, turn, `steer ${turn}`));
      }
      this.#step(turn, index + 1, stepShape);
      if (index === 0 && shape.inner === "todo") push((seq) => todoWrite(seq));
      if (index === 0 && shape.inner === "context") push((seq) => contextMessage(seq, "inner"));
      if (index === 0 && shape.inner === "foreign")
        push((seq) => foreignRecord(seq, [seq], seq + 1));
    }
    push((seq) => turnEnd(seq, turn));
    return this.events.slice(from);
  }

  #step(turn: number, step: number, shape: StepShape): void {
    const push = (make: (seq: number) => SessionEvent) => this.events.push(make(this.#seq));
    push((seq) => stepStart(seq, turn, step));
    const chunkSeqs: number[] = [];
    for (let i = 0; i < shape.chunks; i++) {
      chunkSeqs.push(this.#seq);
      push((seq) => assistantChunk(seq, turn, step));
    }
    const ids = Array.from({ length: shape.tools }, (_, i) => `c-${turn}-${step}-${i}`);
    const content: ContentBlock[] =
      shape.tools === 0 && shape.emptyMessage
        ? []
        : [
            text(`answer ${turn}.${step}`),
            ...ids.map(
              (id): ContentBlock => ({ type: "tool-call", id, name: "bash", arguments: "{}" }),
            ),
          ];
    push((seq) =>
      assistantMessage(
        seq,
        turn,
        step,
        content,
        chunkSeqs.length > 0 ? { sourceEventSeqs: chunkSeqs } : {},
      ),
    );
    const callSeqs = ids.map((id) => {
      const seq = this.#seq;
      push((s) => toolCall(s, turn, step, id));
      return seq;
    });
    for (const [i, id] of ids.entries()) {
      push((seq) => toolResult(seq, turn, step, id, { sourceEventSeqs: [callSeqs[i] ?? 0] }));
    }
    push((seq) => stepEnd(seq, turn, step));
  }
}

/** The events of a log shape; an open tail keeps its turn/start and drops at least its turn/end. */
export function buildLog(shape: LogShape): SessionEvent[] {
  const writer = new LogWriter();
  for (const segment of shape.segments) {
    if (segment.kind === "turn") writer.turn(segment);
    else writer.standalone(segment);
  }
  if (shape.openTail !== undefined) {
    const from = writer.events.length;
    const whole = writer.turn(shape.openTail.turn);
    const keep = 1 + Math.floor(shape.openTail.keep * (whole.length - 2));
    writer.events.splice(from + Math.min(keep, whole.length - 1));
  }
  return writer.events;
}

/** Valid logs, as events. */
export const validLogArb: fc.Arbitrary<SessionEvent[]> = logShapeArb.map(buildLog);
