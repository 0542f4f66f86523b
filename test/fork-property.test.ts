// Property: over generated valid logs, fork accepts exactly the boundaries log.md accepts, and accepted children stay valid.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContentBlock,
  MemoryBackend,
  type SessionEvent,
  SessionForkError,
  SessionLog,
  type SessionStore,
} from "../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  compactSummary,
  contextMessage,
  hookInvoked,
  hookResult,
  simpleTurn,
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
import { lastMarkerBefore, lastTurnNumber, rejectionOf, storeOver } from "./store-builders.js";

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
  readonly inner: "todo" | "context" | undefined;
  readonly steps: readonly StepShape[];
}

interface StandaloneShape {
  readonly kind: "standalone";
  readonly what: "user" | "context" | "todo" | "summary";
}

interface LogShape {
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
  inner: fc.constantFrom("todo" as const, "context" as const, undefined),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
});

const standaloneArb: fc.Arbitrary<StandaloneShape> = fc.record({
  kind: fc.constant("standalone" as const),
  what: fc.constantFrom("user" as const, "context" as const, "todo" as const, "summary" as const),
});

const logShapeArb: fc.Arbitrary<LogShape> = fc.record({
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
function buildLog(shape: LogShape): SessionEvent[] {
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

const validLogArb = logShapeArb.map(buildLog);

/** Forks `source` at every boundary and checks each outcome against the test's reading of log.md. */
async function checkEveryBoundary(
  store: SessionStore,
  events: readonly SessionEvent[],
  prefix: string,
): Promise<void> {
  for (let boundary = 0; boundary < events.length; boundary++) {
    const childId = `${prefix}-${boundary}`;
    const marker = lastMarkerBefore(events, boundary);
    if (marker?.type === "turn/start") {
      const error = await rejectionOf(store.fork("src", boundary, childId));
      expect(error).toBeInstanceOf(SessionForkError);
      expect((error as SessionForkError).code).toBe("OPEN_TURN");
      expect((error as SessionForkError).details).toEqual({ boundary, turn: marker.turn });
      expect(await store.get(childId)).toBeUndefined();
      continue;
    }
    const header = await store.fork("src", boundary, childId);
    expect(header.seedLength).toBe(boundary + 1);
    expect(header.parentSession).toBe("src");
    const child = await store.load(childId);
    const seedLength = child.seedLength;
    expect(seedLength).toBe(boundary + 1);
    expect(child.events).toHaveLength(seedLength);
    expect(child.events.slice(0, seedLength)).toEqual(events.slice(0, boundary + 1));
    expect(() => SessionLog.fromSeed(child.header, child.events)).not.toThrow();
    const next = lastTurnNumber(events.slice(0, boundary + 1)) + 1;
    await expect(child.append(simpleTurn(seedLength, next, { toolCallsPerStep: 1 }))).resolves.toBe(
      seedLength + 9,
    );
  }
}

describe("fork over generated valid logs", () => {
  it("generates valid logs, some ending inside a turn", () => {
    fc.assert(
      fc.property(validLogArb, (events) => {
        expect(() =>
          SessionLog.fromSeed({ version: 0, id: "generated", createdAt: 0 }, events),
        ).not.toThrow();
      }),
      { numRuns: 200 },
    );
    const samples = fc.sample(validLogArb, { numRuns: 200, seed: 1 });
    const openAtEnd = samples.filter(
      (e) => lastMarkerBefore(e, e.length - 1)?.type === "turn/start",
    );
    expect(openAtEnd.length).toBeGreaterThan(10);
    expect(samples.some((e) => e.length > 30)).toBe(true);
  });

  it("accepts exactly the boundaries outside a turn, for a live source and a stored one not loaded", async () => {
    await fc.assert(
      fc.asyncProperty(validLogArb, async (events) => {
        const backend = new MemoryBackend();
        const live = storeOver(backend);
        await live.create("src", { seed: events, meta: { cwd: "/work/src" } });
        await checkEveryBoundary(live, events, "live");
        const cold = storeOver(backend);
        await checkEveryBoundary(cold, events, "cold");
        expect(cold.liveIds().includes("src")).toBe(false);
        // The source is unchanged by every fork of it.
        expect((await backend.load("src"))?.events).toEqual(events);
      }),
      { numRuns: 60 },
    );
  });
});
