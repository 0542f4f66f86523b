// A seeded generator of realistic session logs: turns of a user prompt, 1–4 steps of 20–200 stream chunks, tool calls and results.
import type {
  ContentBlock,
  SessionEvent,
  SessionHeader,
  StreamChunk,
  TokenUsage,
} from "../../src/index.js";

/** The epoch ms the first generated event carries. */
export const SYNTHETIC_EPOCH = 1_750_000_000_000;

/**
 * A small, fast, seeded PRNG (mulberry32): the same seed gives the same sequence on every run and
 * every machine, so generated logs repeat byte for byte.
 */
export class Prng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

const WORDS = [
  "the",
  "file",
  "function",
  "returns",
  "error",
  "test",
  "build",
  "config",
  "module",
  "import",
  "value",
  "string",
  "array",
  "object",
  "session",
  "event",
  "append",
  "store",
  "read",
  "write",
  "check",
  "because",
  "should",
  "update",
  "handler",
  "request",
  "response",
  "cache",
  "index",
  "path",
  "directory",
  "command",
  "output",
  "input",
  "parse",
  "format",
  "version",
  "type",
  "schema",
  "valid",
  "line",
  "number",
  "first",
  "last",
  "next",
  "before",
  "after",
  "when",
  "then",
  "with",
  "without",
  "every",
  "some",
  "which",
  "this",
  "that",
  "run",
  "fix",
  "bug",
  "change",
  "diff",
  "patch",
  "commit",
  "review",
] as const;

const TOOLS = ["bash", "read_file", "write_file", "edit", "grep", "list_dir"] as const;

/** `length` characters or so of word salad (stops at the first word that reaches it). */
function prose(rng: Prng, length: number): string {
  let out = "";
  while (out.length < length) out += (out === "" ? "" : " ") + rng.pick(WORDS);
  return out;
}

/** Splits `text` into `parts` non-empty pieces (fewer when the text is shorter). */
function split(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length));
  const size = Math.ceil(text.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** How the generated turns look; the defaults give ~300-byte events on average. */
export interface SyntheticShape {
  /** Characters per text or reasoning delta, on average. */
  readonly deltaChars: number;
  /** Characters of a tool result's output, at least and at most. */
  readonly resultChars: readonly [number, number];
  /** Steps per turn, at least and at most. */
  readonly steps: readonly [number, number];
  /** Stream chunks per step, at least (no fewer than 12) and at most. */
  readonly chunks: readonly [number, number];
}

/** docs/performance.md's shape: 1–4 steps of 20–200 chunks; 55-character deltas make ~300-byte events. */
export const DEFAULT_SHAPE: SyntheticShape = {
  deltaChars: 55,
  resultChars: [200, 3000],
  steps: [1, 4],
  chunks: [20, 200],
};

/**
 * Generates balanced turns forever (the caller stops): each turn is `turn/start`, a
 * `user/message`, 1–4 steps, `turn/end`. A step is `step/start`, 20–200 `assistant/chunk`s
 * (a reasoning block, a text block, a tool-call block per tool the step calls, then `usage` and
 * `finish`), the assembled `assistant/message` (its `sourceEventSeqs` are the chunks), a
 * `tool/call` and a `tool/result` per tool, `step/end`. Every step but the last calls 1–2 tools
 * and finishes with `tool-calls`; the last finishes with `stop`. Every event is valid and every
 * step has a faithful replay.
 */
export function* syntheticTurns(
  seed: number,
  shape: SyntheticShape = DEFAULT_SHAPE,
  firstSeq = 0,
  firstTurn = 1,
): Generator<SessionEvent[]> {
  const rng = new Prng(seed);
  let seq = firstSeq;
  let time = SYNTHETIC_EPOCH + firstSeq;
  const tick = () => (time += rng.int(0, 3));
  for (let turn = firstTurn; ; turn++) {
    const events: SessionEvent[] = [];
    events.push({
      type: "turn/start",
      seq: seq++,
      time: tick(),
      data: { turn, trigger: { kind: "message", source: { kind: "user" } } },
    });
    events.push({
      type: "user/message",
      seq: seq++,
      time: tick(),
      data: {
        content: [{ type: "text", text: prose(rng, rng.int(40, 600)) }],
        source: { kind: "user" },
      },
      surfaceOp: "append",
    });
    const steps = rng.int(shape.steps[0], shape.steps[1]);
    for (let step = 1; step <= steps; step++) {
      const last = step === steps;
      events.push({ type: "step/start", seq: seq++, time: tick(), data: { turn, step } });
      const chunkCount = rng.int(shape.chunks[0], shape.chunks[1]);
      const tools = last ? 0 : rng.int(1, 2);
      // block-start + block-end per block, plus usage and finish.
      const overhead = 2 * (2 + tools) + 2;
      const deltas = chunkCount - overhead;
      const toolDeltas = tools === 0 ? 0 : Math.max(tools, Math.floor(deltas * 0.15));
      const reasoningDeltas = Math.max(1, Math.floor((deltas - toolDeltas) * 0.4));
      const textDeltas = Math.max(1, deltas - toolDeltas - reasoningDeltas);
      const chunks: StreamChunk[] = [];
      const content: ContentBlock[] = [];
      const block = (index: number, blockType: "reasoning" | "text", count: number) => {
        const text = prose(rng, count * shape.deltaChars);
        chunks.push({ type: "block-start", index, blockType });
        for (const piece of split(text, count)) {
          chunks.push({
            type: blockType === "text" ? "text-delta" : "reasoning-delta",
            index,
            text: piece,
          });
        }
        const assembled: ContentBlock = { type: blockType, text };
        chunks.push({ type: "block-end", index, block: assembled });
        content.push(assembled);
      };
      block(0, "reasoning", reasoningDeltas);
      block(1, "text", textDeltas);
      const calls: { id: string; name: string; args: string }[] = [];
      for (let t = 0; t < tools; t++) {
        const index = 2 + t;
        const id = `call_${turn}_${step}_${t}_${rng.int(0, 0xffffff).toString(16)}`;
        const name = rng.pick(TOOLS);
        const args = JSON.stringify({ command: prose(rng, rng.int(20, 200)), timeout: 60 });
        chunks.push({ type: "block-start", index, blockType: "tool-call" });
        for (const piece of split(args, Math.max(1, Math.floor(toolDeltas / tools)))) {
          chunks.push({ type: "tool-call-delta", index, id, name, argumentsDelta: piece });
        }
        const assembled: ContentBlock = { type: "tool-call", id, name, arguments: args };
        chunks.push({ type: "block-end", index, block: assembled });
        content.push(assembled);
        calls.push({ id, name, args });
      }
      const usage: TokenUsage = {
        inputTokens: rng.int(500, 60_000),
        outputTokens: rng.int(20, 4000),
        cacheReadTokens: rng.int(0, 50_000),
      };
      chunks.push({ type: "usage", usage });
      chunks.push({ type: "finish", reason: { kind: last ? "stop" : "tool-calls" } });
      const chunkSeqs: number[] = [];
      for (const chunk of chunks) {
        chunkSeqs.push(seq);
        events.push({
          type: "assistant/chunk",
          seq: seq++,
          time: tick(),
          data: { turn, step, chunk },
        });
      }
      events.push({
        type: "assistant/message",
        seq: seq++,
        time: tick(),
        data: { turn, step, content, usage },
        sourceEventSeqs: chunkSeqs,
        surfaceOp: "append",
      });
      const callSeqs: number[] = [];
      for (const call of calls) {
        callSeqs.push(seq);
        events.push({
          type: "tool/call",
          seq: seq++,
          time: tick(),
          data: { turn, step, callId: call.id, name: call.name, arguments: call.args },
        });
      }
      calls.forEach((call, i) => {
        const output = prose(rng, rng.int(shape.resultChars[0], shape.resultChars[1]));
        events.push({
          type: "tool/result",
          seq: seq++,
          time: tick(),
          data: {
            turn,
            step,
            callId: call.id,
            content: [{ type: "text", text: output }],
            isError: false,
          },
          sourceEventSeqs: [callSeqs[i] as number],
          surfaceOp: "append",
        });
      });
      events.push({ type: "step/end", seq: seq++, time: tick(), data: { turn, step } });
    }
    events.push({
      type: "turn/end",
      seq: seq++,
      time: tick(),
      data: { turn, reason: { kind: "completed" } },
    });
    yield events;
  }
}

/** A generated log: its header, its events, and the same events as one batch per turn. */
export interface SyntheticLog {
  readonly header: SessionHeader;
  readonly events: SessionEvent[];
  /** One batch per turn, in order: what an agent appends when it checkpoints per turn. */
  readonly batches: SessionEvent[][];
  /** The JSONL bytes of the event lines (header excluded). */
  readonly eventBytes: number;
}

/**
 * Whole turns from seq 0 until at least `minEvents` events, under a header with `id`.
 * The same seed gives the same log.
 */
export function syntheticLog(
  seed: number,
  minEvents: number,
  id = `synthetic-${seed}`,
  shape: SyntheticShape = DEFAULT_SHAPE,
): SyntheticLog {
  const events: SessionEvent[] = [];
  const batches: SessionEvent[][] = [];
  let eventBytes = 0;
  for (const turn of syntheticTurns(seed, shape)) {
    if (events.length >= minEvents) break;
    batches.push(turn);
    for (const event of turn) {
      events.push(event);
      eventBytes += Buffer.byteLength(JSON.stringify(event)) + 1;
    }
  }
  return {
    header: { version: 0, id, createdAt: SYNTHETIC_EPOCH, cwd: "/work/bench" },
    events,
    batches,
    eventBytes,
  };
}

/**
 * The seq of the `turn/end` nearest the middle of `events`: a fork boundary after a completed
 * turn (a boundary inside a turn is OPEN_TURN).
 */
export function middleTurnEnd(events: readonly SessionEvent[]): number {
  const middle = events.length / 2;
  let best = -1;
  for (const event of events) {
    if (event.type !== "turn/end") continue;
    if (best < 0 || Math.abs(event.seq - middle) < Math.abs(best - middle)) best = event.seq;
  }
  if (best < 0) throw new Error("expected a log with a completed turn to fork at");
  return best;
}
