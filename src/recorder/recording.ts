// Where a session's recording stands, and the events each recorder op adds: pure, no storage.
import { RecordError, show } from "../errors.js";
import type {
  BlockStartChunk,
  ContentBlock,
  ModelResponse,
  PendingToolCall,
  RecordOp,
  SessionEvent,
  SessionRecordResult,
  StreamChunk,
  TokenUsage,
  TurnEndReason,
} from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";

type BlockKind = BlockStartChunk["blockType"];

/** A content block of the open step as its chunks so far describe it. */
interface BlockState {
  readonly kind: BlockKind;
  ended: boolean;
}

/** A tool call of the open step without a result yet. */
interface OpenCall extends PendingToolCall {
  readonly seq: number;
}

/** The open step: its chunks (with their seqs), blocks, finish and unanswered calls. */
interface OpenStep {
  readonly step: number;
  readonly chunks: StreamChunk[];
  readonly chunkSeqs: number[];
  readonly blocks: Map<number, BlockState>;
  finished: boolean;
  /** The content of the step's assistant/message, once written. */
  message: readonly ContentBlock[] | undefined;
  readonly calls: Map<string, OpenCall>;
}

/** What {@link Recording.save} keeps: enough to return to that point. */
interface Saved {
  readonly nextSeq: number;
  readonly lastTurn: number;
  readonly turn: number | undefined;
  readonly lastStep: number;
  readonly step: OpenStep | undefined;
  readonly chunkCount: number;
}

/** An event as an op makes it, before its seq and time are given. */
interface Draft {
  readonly type: SessionEvent["type"];
  readonly data: unknown;
  readonly sourceEventSeqs?: readonly number[];
  readonly surfaceOp?: "append";
}

/** Where an op was refused: its index in the call's ops and the session. */
interface OpPlace {
  readonly sessionId: string;
  readonly index: number;
}

/**
 * The recording state of one session: the next seq, the open turn and step, the open step's
 * chunks and unanswered tool calls. {@link events} turns an op into the events it adds (checking
 * it fits); {@link observe} moves the state past an event, so stored events and planned ones move
 * it the same way.
 */
export class Recording {
  nextSeq: number;
  lastTurn: number;
  turn: number | undefined = undefined;
  lastStep = 0;
  step: OpenStep | undefined = undefined;

  constructor(nextSeq: number, lastTurn: number) {
    this.nextSeq = nextSeq;
    this.lastTurn = lastTurn;
  }

  /**
   * The recording of a log whose open turn starts with `turnEvents[0]` (its `turn/start`) and
   * runs to the log's end.
   */
  static resume(turnEvents: readonly SessionEvent[]): Recording {
    const first = turnEvents[0] as SessionEvent;
    const recording = new Recording(first.seq, 0);
    for (const event of turnEvents) recording.observe(event);
    return recording;
  }

  /** The state as the wire reports it. */
  get state(): SessionRecordResult {
    const step = this.step;
    return {
      nextSeq: this.nextSeq,
      lastTurn: this.lastTurn,
      ...(this.turn === undefined ? {} : { turn: this.turn }),
      ...(step === undefined ? {} : { step: step.step }),
      finished: step?.finished ?? false,
      pendingToolCalls: step === undefined ? [] : [...step.calls.values()].map(pending),
    };
  }

  /** A point to {@link restore} to. The open step's arrays only grow, so their lengths suffice. */
  save(): Saved {
    const step = this.step;
    return {
      nextSeq: this.nextSeq,
      lastTurn: this.lastTurn,
      turn: this.turn,
      lastStep: this.lastStep,
      step:
        step === undefined
          ? undefined
          : {
              ...step,
              blocks: new Map([...step.blocks].map(([i, b]) => [i, { ...b }])),
              calls: new Map(step.calls),
            },
      chunkCount: step?.chunks.length ?? 0,
    };
  }

  /** Returns to a point {@link save} gave. */
  restore(saved: Saved): void {
    this.nextSeq = saved.nextSeq;
    this.lastTurn = saved.lastTurn;
    this.turn = saved.turn;
    this.lastStep = saved.lastStep;
    this.step = saved.step;
    if (saved.step !== undefined) {
      saved.step.chunks.length = saved.chunkCount;
      saved.step.chunkSeqs.length = saved.chunkCount;
    }
  }

  /** Moves the state past one event of the log (stored or just planned). */
  observe(event: SessionEvent): void {
    this.nextSeq = event.seq + 1;
    switch (event.type) {
      case "turn/start":
        this.turn = event.data.turn;
        this.lastTurn = event.data.turn;
        this.lastStep = 0;
        this.step = undefined;
        break;
      case "step/start":
        this.lastStep = event.data.step;
        this.step = {
          step: event.data.step,
          chunks: [],
          chunkSeqs: [],
          blocks: new Map(),
          finished: false,
          message: undefined,
          calls: new Map(),
        };
        break;
      case "assistant/chunk":
        if (this.step !== undefined) {
          this.step.chunks.push(event.data.chunk);
          this.step.chunkSeqs.push(event.seq);
          trackBlock(this.step.blocks, event.data.chunk);
          if (event.data.chunk.type === "finish") this.step.finished = true;
        }
        break;
      case "assistant/message":
        if (this.step !== undefined) this.step.message = event.data.content;
        break;
      case "tool/call": {
        const { callId, name, arguments: args } = event.data;
        this.step?.calls.set(callId, { callId, name, arguments: args, seq: event.seq });
        break;
      }
      case "tool/result":
        this.step?.calls.delete(event.data.callId);
        break;
      case "step/end":
        this.step = undefined;
        break;
      case "turn/end":
        this.turn = undefined;
        this.step = undefined;
        break;
      default:
        break;
    }
  }

  /**
   * The events `op` adds where the recording stands, each observed as it is made (so the state
   * is past them: {@link save} first to be able to go back).
   * @throws RecordError RECORD_REFUSED when the op does not fit, naming what was expected.
   */
  events(op: RecordOp, place: OpPlace, now: () => number): SessionEvent[] {
    const out: SessionEvent[] = [];
    const emit = (event: Draft): void => {
      const full = { ...event, seq: this.nextSeq, time: now() } as SessionEvent;
      out.push(full);
      this.observe(full);
    };
    const refuse = (expected: string, found: string): never => {
      throw new RecordError(
        "RECORD_REFUSED",
        `expected ${expected}, found ${found} (op ${place.index}, ${op.op})`,
        { sessionId: place.sessionId, index: place.index, expected, found },
      );
    };
    switch (op.op) {
      case "turn_start": {
        if (this.turn !== undefined) refuse("no open turn", `turn ${this.turn} open`);
        const source = op.source ?? { kind: "user" };
        emit({
          type: "turn/start",
          data: { turn: this.lastTurn + 1, trigger: { kind: "message", source } },
        });
        emit({
          type: "user/message",
          data: { content: blocksOf(op.prompt), source },
          surfaceOp: "append",
        });
        break;
      }
      case "step_start": {
        const turn = this.#needTurn(refuse);
        if (this.step !== undefined) {
          refuse(`step ${this.step.step} ended first`, `step ${this.step.step} open`);
        }
        emit({
          type: "step/start",
          data: {
            turn,
            step: this.lastStep + 1,
            ...(op.request === undefined ? {} : { request: op.request }),
          },
        });
        break;
      }
      case "chunks": {
        const turn = this.#needTurn(refuse);
        const step = this.#needStep(refuse);
        op.chunks.forEach((chunk, i) => {
          if (step.finished) {
            refuse(`no chunk after the finish chunk of step ${step.step}`, `a ${chunk.type} chunk`);
          }
          const conflict = blockConflict(step.blocks, chunk);
          if (conflict !== undefined) refuse(conflict.expected, conflict.found);
          if (chunk.type === "finish" && i < op.chunks.length - 1) {
            refuse("the finish chunk last", `${op.chunks.length - 1 - i} chunk(s) after it`);
          }
          emit({ type: "assistant/chunk", data: { turn, step: step.step, chunk } });
        });
        if (step.finished) this.#finish(turn, step, emit, refuse);
        break;
      }
      case "tool_result": {
        const turn = this.#needTurn(refuse);
        const step = this.#needStep(refuse);
        if (!step.finished) {
          refuse(`the finish chunk of step ${step.step} before tool results`, "none yet");
        }
        const call = step.calls.get(op.callId);
        if (call === undefined) {
          refuse(
            `a result for a pending tool call (${pendingIds(step)})`,
            `callId ${show(op.callId)}`,
          );
          return out;
        }
        emit({
          type: "tool/result",
          data: {
            turn,
            step: step.step,
            callId: op.callId,
            content: blocksOf(op.content),
            isError: op.isError ?? false,
            ...(op.error === undefined ? {} : { error: op.error }),
            ...(op.meta === undefined ? {} : { meta: op.meta }),
          },
          sourceEventSeqs: [call.seq],
          surfaceOp: "append",
        });
        break;
      }
      case "step_end": {
        const turn = this.#needTurn(refuse);
        const step = this.#needStep(refuse);
        this.#needComplete(step, refuse);
        emit({ type: "step/end", data: stepEndData(turn, step.step, op.response) });
        break;
      }
      case "turn_end": {
        const turn = this.#needTurn(refuse);
        const reason: TurnEndReason = op.reason ?? { kind: "completed" };
        if (reason.kind === "interrupted") {
          refuse("a turn end reason other than interrupted (crash repair's)", "interrupted");
        }
        const step = this.step;
        if (step !== undefined) {
          if (reason.kind === "error" && !step.finished && reason.step !== step.step) {
            refuse(`an error reason naming the open step ${step.step}`, `step ${reason.step}`);
          }
          // Only an abort or an error may leave a step short of its finish or its results.
          if (reason.kind !== "aborted" && reason.kind !== "error")
            this.#needComplete(step, refuse);
          emit({ type: "step/end", data: stepEndData(turn, step.step, op.response) });
        }
        emit({ type: "turn/end", data: { turn, reason } });
        break;
      }
    }
    return out;
  }

  /** After the finish chunk: the assembled assistant/message, then a tool/call per tool-call block. */
  #finish(
    turn: number,
    step: OpenStep,
    emit: (event: Draft) => void,
    refuse: (expected: string, found: string) => never,
  ): void {
    const content = assembleMessage(step.chunks);
    const calls = content.filter((b) => b.type === "tool-call");
    const ids = new Set<string>();
    for (const call of calls) {
      if (ids.has(call.id)) refuse("distinct tool call ids in a step", `${show(call.id)} twice`);
      ids.add(call.id);
    }
    const usage = lastUsage(step.chunks);
    emit({
      type: "assistant/message",
      data: {
        turn,
        step: step.step,
        content,
        ...(usage === undefined ? {} : { usage }),
      },
      sourceEventSeqs: [...step.chunkSeqs],
      surfaceOp: "append",
    });
    for (const call of calls) {
      emit({
        type: "tool/call",
        data: {
          turn,
          step: step.step,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
        },
      });
    }
  }

  #needTurn(refuse: (expected: string, found: string) => never): number {
    return this.turn ?? refuse("an open turn (turn_start first)", "none");
  }

  #needStep(refuse: (expected: string, found: string) => never): OpenStep {
    return this.step ?? refuse(`an open step of turn ${this.turn} (step_start first)`, "none");
  }

  #needComplete(step: OpenStep, refuse: (expected: string, found: string) => never): void {
    if (!step.finished) {
      refuse(`the finish chunk of step ${step.step}`, `${step.chunks.length} chunk(s), no finish`);
    }
    if (step.calls.size > 0) {
      refuse(`a result for every tool call of step ${step.step}`, `${pendingIds(step)} pending`);
    }
  }
}

function stepEndData(turn: number, step: number, response: ModelResponse | undefined): object {
  return { turn, step, ...(response === undefined ? {} : { response }) };
}

function pending(call: OpenCall): PendingToolCall {
  return { callId: call.callId, name: call.name, arguments: call.arguments };
}

function pendingIds(step: OpenStep): string {
  return step.calls.size === 0 ? "none pending" : [...step.calls.keys()].map(show).join(", ");
}

function blocksOf(value: string | readonly ContentBlock[]): readonly ContentBlock[] {
  return typeof value === "string" ? [{ type: "text", text: value }] : value;
}

function lastUsage(chunks: readonly StreamChunk[]): TokenUsage | undefined {
  for (let i = chunks.length - 1; i >= 0; i--) {
    const chunk = chunks[i] as StreamChunk;
    if (chunk.type === "usage") return chunk.usage;
  }
  return undefined;
}

/** The kind a delta chunk adds to, if it is one. */
function deltaKind(chunk: StreamChunk): BlockKind | undefined {
  switch (chunk.type) {
    case "text-delta":
      return "text";
    case "reasoning-delta":
      return "reasoning";
    case "tool-call-delta":
      return "tool-call";
    default:
      return undefined;
  }
}

/**
 * Why `chunk` cannot follow the step's blocks, as `assembleMessage` would refuse it: a delta of
 * another kind than its block, while that block is open.
 */
function blockConflict(
  blocks: ReadonlyMap<number, BlockState>,
  chunk: StreamChunk,
): { expected: string; found: string } | undefined {
  const kind = deltaKind(chunk);
  if (kind === undefined || !("index" in chunk)) return undefined;
  const block = blocks.get(chunk.index);
  if (block === undefined || block.ended || block.kind === kind) return undefined;
  return {
    expected: `a ${block.kind} delta for block ${chunk.index}`,
    found: `a ${kind} delta`,
  };
}

/** Follows a chunk into the step's blocks, the way `assembleMessage` drafts them. */
function trackBlock(blocks: Map<number, BlockState>, chunk: StreamChunk): void {
  switch (chunk.type) {
    case "block-start":
      blocks.set(chunk.index, { kind: chunk.blockType, ended: false });
      break;
    case "block-end": {
      const block = blocks.get(chunk.index);
      if (block === undefined) {
        const kind: BlockKind = chunk.block.type === "tool-result" ? "text" : chunk.block.type;
        blocks.set(chunk.index, { kind, ended: true });
      } else block.ended = true;
      break;
    }
    default: {
      const kind = deltaKind(chunk);
      if (kind !== undefined && "index" in chunk && !blocks.has(chunk.index)) {
        blocks.set(chunk.index, { kind, ended: false });
      }
    }
  }
}
