// A seedline log written event by event from an imported transcript: turns, steps as a recording proxy writes them, the surface, foreign records.
import type {
  ContentBlock,
  ForeignRecordEvent,
  MessageSource,
  SessionEvent,
  StreamChunk,
  TokenUsage,
  TurnEndReason,
  TurnTrigger,
} from "../../generated.js";
import type { TranscriptFormat } from "../transcript.js";

/** How the open turn began: at a task marker, at a user prompt, or at model output with neither. */
export type TurnOrigin = "task" | "prompt" | "output";

/** The open turn. */
export interface OpenTurn {
  readonly number: number;
  origin: TurnOrigin;
  /** Whether the prompt that the turn answers is in it. */
  prompted: boolean;
  /** How many steps it has had. */
  steps: number;
}

/** The open step: one model call, its blocks as they came, and its tool calls once answered. */
export interface OpenStep {
  readonly number: number;
  readonly chunkSeqs: number[];
  readonly blocks: ContentBlock[];
  /** Whether it called a tool the client runs (its finish reason is then `tool-calls`). */
  clientCalls: boolean;
  /** Whether the response is complete: its finish chunk (unless cut off) and assistant/message are written. */
  answered: boolean;
  /** The seqs of its `tool/call`s no result has answered yet, by call id. */
  readonly pendingCalls: Map<string, number>;
}

/** The surface-eligible events this log writes. */
type SurfaceType =
  | "user/message"
  | "context/message"
  | "assistant/message"
  | "tool/result"
  | "steering/message";

/**
 * The events of one imported session, built in order. Every event is written once, when the source
 * line that causes it is read, and never changed: mapping a longer version of the same source gives
 * these events as a prefix. Nothing is written for the end of the source, so a source that stops
 * inside a turn gives a log whose last turn is open.
 *
 * A step is written as `src/proxy/` writes one model call (see docs/proxy.md): `step/start`, per
 * content block `block-start`, one delta holding the whole text (or arguments) and `block-end`,
 * then `usage` when known, the `finish` chunk, the assembled `assistant/message` (its
 * `sourceEventSeqs` the step's chunks) and a `tool/call` per tool-call block; each `tool/result`
 * names its call in `sourceEventSeqs`.
 */
export class ImportedLog {
  readonly events: SessionEvent[] = [];
  /** The `time` of the events written next: the time of the source line being mapped. */
  time = 0;
  turn: OpenTurn | undefined;
  step: OpenStep | undefined;
  #lastTurn = 0;
  /** The seqs of the surface nodes, in surface order. */
  #surface: number[] = [];
  readonly #source: TranscriptFormat;

  constructor(source: TranscriptFormat) {
    this.#source = source;
  }

  /** Writes one event at the next seq, members in the canonical order; returns its seq. */
  #write(
    type: SessionEvent["type"],
    data: object,
    markers?: { sourceEventSeqs?: readonly number[]; surfaceOp: unknown },
  ): number {
    const seq = this.events.length;
    const event =
      markers === undefined
        ? { type, seq, time: this.time, data }
        : markers.sourceEventSeqs === undefined
          ? { type, seq, time: this.time, data, surfaceOp: markers.surfaceOp }
          : {
              type,
              seq,
              time: this.time,
              data,
              sourceEventSeqs: markers.sourceEventSeqs,
              surfaceOp: markers.surfaceOp,
            };
    this.events.push(event as SessionEvent);
    return seq;
  }

  /** Appends a surface-eligible event to the surface; returns its seq. */
  #append(type: SurfaceType, data: object, sourceEventSeqs?: readonly number[]): number {
    const seq = this.#write(type, data, {
      ...(sourceEventSeqs === undefined ? {} : { sourceEventSeqs }),
      surfaceOp: "append",
    });
    this.#surface.push(seq);
    return seq;
  }

  /** Keeps source line `line` whole as a `foreign/record {source, line, record}`. */
  foreign(line: number, record: unknown): void {
    const event: ForeignRecordEvent = {
      type: "foreign/record",
      seq: this.events.length,
      time: this.time,
      data: { source: this.#source, line, record },
    };
    this.events.push(event);
  }

  startTurn(trigger: TurnTrigger, origin: TurnOrigin): OpenTurn {
    const number = ++this.#lastTurn;
    this.#write("turn/start", { turn: number, trigger });
    this.turn = { number, origin, prompted: false, steps: 0 };
    return this.turn;
  }

  /** Ends the open turn, ending its step first (answered without a finish chunk when `reason` is an abort). */
  endTurn(reason: TurnEndReason): void {
    const turn = this.turn;
    if (turn === undefined) return;
    if (this.step !== undefined) this.endStep(reason.kind === "aborted");
    this.#write("turn/end", { turn: turn.number, reason });
    this.turn = undefined;
  }

  /** The step model output goes to: the open one while it streams, else a new one (the open turn must exist). */
  streamingStep(): OpenStep {
    const turn = this.turn as OpenTurn;
    if (this.step?.answered === false) return this.step;
    if (this.step !== undefined) this.endStep(false);
    const number = ++turn.steps;
    this.#write("step/start", { turn: turn.number, step: number });
    this.step = {
      number,
      chunkSeqs: [],
      blocks: [],
      clientCalls: false,
      answered: false,
      pendingCalls: new Map(),
    };
    return this.step;
  }

  /** Ends the open step; one still streaming is answered first (`cut`: without a finish chunk). */
  endStep(cut: boolean): void {
    const step = this.step;
    if (step === undefined) return;
    if (!step.answered) this.answer(undefined, cut);
    this.#write("step/end", { turn: this.turn?.number, step: step.number });
    this.step = undefined;
  }

  #chunk(step: OpenStep, chunk: StreamChunk): void {
    const seq = this.#write("assistant/chunk", {
      turn: this.turn?.number,
      step: step.number,
      chunk,
    });
    step.chunkSeqs.push(seq);
  }

  /** Streams one content block into the streaming step: its start, one delta with all of it, its end. */
  addBlock(block: ContentBlock): void {
    const step = this.streamingStep();
    const index = step.blocks.length;
    step.blocks.push(block);
    switch (block.type) {
      case "text":
      case "reasoning":
        this.#chunk(step, { type: "block-start", index, blockType: block.type });
        if (block.text !== "") {
          this.#chunk(
            step,
            block.type === "text"
              ? { type: "text-delta", index, text: block.text }
              : { type: "reasoning-delta", index, text: block.text },
          );
        }
        break;
      case "tool-call":
        this.#chunk(step, { type: "block-start", index, blockType: "tool-call" });
        this.#chunk(step, {
          type: "tool-call-delta",
          index,
          id: block.id,
          name: block.name,
          argumentsDelta: block.arguments,
        });
        break;
      case "tool-result":
        // No model output is a tool result; kept for completeness of the block kinds.
        break;
    }
    this.#chunk(step, { type: "block-end", index, block });
  }

  /**
   * Completes the streaming step's response: `usage` when known, the `finish` chunk unless the
   * response was cut off (`tool-calls` when it called a client tool, else `stop`), the assembled
   * `assistant/message`, and a `tool/call` per tool-call block.
   */
  answer(usage: TokenUsage | undefined, cut: boolean): void {
    const step = this.step;
    if (step === undefined || step.answered) return;
    const turn = this.turn?.number;
    if (usage !== undefined) this.#chunk(step, { type: "usage", usage });
    if (!cut) {
      this.#chunk(step, {
        type: "finish",
        reason: { kind: step.clientCalls ? "tool-calls" : "stop" },
      });
    }
    this.#append(
      "assistant/message",
      {
        turn,
        step: step.number,
        content: step.blocks,
        ...(usage === undefined ? {} : { usage }),
      },
      step.chunkSeqs,
    );
    for (const block of step.blocks) {
      if (block.type !== "tool-call") continue;
      const seq = this.#write("tool/call", {
        turn,
        step: step.number,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
      });
      step.pendingCalls.set(block.id, seq);
    }
    step.answered = true;
  }

  /** Writes the result of a pending call of the open (answered) step; false when no such call is pending. */
  toolResult(callId: string, content: readonly ContentBlock[], isError: boolean): boolean {
    const step = this.step;
    const call = step?.pendingCalls.get(callId);
    if (step === undefined || call === undefined) return false;
    step.pendingCalls.delete(callId);
    this.#append(
      "tool/result",
      { turn: this.turn?.number, step: step.number, callId, content, isError },
      [call],
    );
    return true;
  }

  userMessage(content: readonly ContentBlock[]): void {
    this.#append("user/message", { content, source: { kind: "user" } });
  }

  /** A message the user sent while the open turn ran. */
  steeringMessage(content: readonly ContentBlock[]): void {
    this.#append("steering/message", {
      turn: this.turn?.number,
      content,
      source: { kind: "user" },
    });
  }

  contextMessage(content: readonly ContentBlock[], source: MessageSource): void {
    this.#append("context/message", { content, source });
  }

  /**
   * A compaction that replaces the whole surface with `content`: `compact/start` and `compact/end`
   * around it when a turn is open (they name it), `compact/summary` (every surface node shadowed)
   * and a `context/message` replacing those nodes. On an empty surface the message is appended.
   */
  compaction(
    summary: string,
    content: readonly ContentBlock[],
    source: MessageSource,
    shadowedTokenCount: number,
  ): void {
    const turn = this.turn?.number;
    if (turn !== undefined) this.#write("compact/start", { turn });
    const shadowed = this.#surface;
    const start = shadowed[0];
    const end = shadowed.at(-1);
    if (start === undefined || end === undefined) {
      this.#append("context/message", { content, source });
    } else {
      this.#write("compact/summary", {
        summary,
        shadowedRange: { start, end },
        shadowedSeqs: [...shadowed],
        shadowedTokenCount,
      });
      const seq = this.#write(
        "context/message",
        { content, source },
        { sourceEventSeqs: shadowed, surfaceOp: { op: "replace", start, end } },
      );
      this.#surface = [seq];
    }
    if (turn !== undefined) this.#write("compact/end", { turn });
  }
}
