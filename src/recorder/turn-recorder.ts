// Records turns into a session the way an agent loop runs them, numbering and assembling what the log needs.
import { RecordError } from "../errors.js";
import type {
  ContentBlock,
  FinishReason,
  MessageSource,
  PendingToolCall,
  RecordOp,
  RecordToolResultOp,
  SessionRecordResult,
  StreamChunk,
  TurnEndReason,
} from "../generated.js";
import type { Session } from "../store/session-store.js";
import { Recording } from "./recording.js";

/** Options of a {@link TurnRecorder}. */
export interface TurnRecorderOptions {
  /** The `time` of each event (default `Date.now`). */
  readonly now?: () => number;
}

/** What a tool returned, for {@link RecordedStep.toolResult}. */
export type ToolResultOptions = Partial<Pick<RecordToolResultOp, "isError" | "error" | "meta">>;

/** What the finish chunk settled: the assembled message and the tool calls to run. */
export interface FinishedStep {
  readonly content: readonly ContentBlock[];
  readonly toolCalls: readonly PendingToolCall[];
}

/**
 * Writes a session's log turn by turn: seqs, turn and step numbers, the `assistant/message`
 * assembled from the streamed chunks with its `sourceEventSeqs`, a `tool/call` per tool-call
 * block and each `tool/result` paired with its call — and refuses, with `RECORD_REFUSED` and
 * nothing stored, any call that would leave the log invalid or unreplayable (a step ended
 * without its finish chunk, a turn ended inside a step, a result for no pending call).
 *
 * Every call appends its events as one durable batch, in call order. The recorder resumes a turn
 * left open in the stored log, and re-reads the log when another writer appended to it.
 * Open the session with `store.openForWriting(id)` first, so that a turn a dead writer left open
 * is closed before recording starts.
 */
export class TurnRecorder {
  readonly session: Session;
  readonly #now: () => number;
  #recording: Recording | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(session: Session, options: TurnRecorderOptions = {}) {
    this.session = session;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Applies `ops` in order and appends all their events as one batch, or none.
   * @returns where the recording stands once the batch is durable.
   * @throws RecordError RECORD_REFUSED for an op that does not fit (its `index` names it);
   *   InvalidEventError for an event the log refuses (a malformed chunk or block);
   *   the storage errors of `Session.append`.
   */
  record(ops: readonly RecordOp[]): Promise<SessionRecordResult> {
    const run = this.#queue.then(() => this.#record(ops));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Starts the next turn with the user's prompt (a text or content blocks).
   * @throws RecordError RECORD_REFUSED while a turn is open.
   */
  async startTurn(
    prompt: string | readonly ContentBlock[],
    options: { readonly source?: MessageSource } = {},
  ): Promise<RecordedTurn> {
    const state = await this.record([{ op: "turn_start", prompt, ...options }]);
    return new RecordedTurn(this, state.lastTurn);
  }

  async #record(ops: readonly RecordOp[]): Promise<SessionRecordResult> {
    const recording = await this.#current();
    const saved = recording.save();
    try {
      const events = ops.flatMap((op, index) =>
        recording.events(op, { sessionId: this.session.id, index }, this.#now),
      );
      if (events.length > 0) await this.session.append(events);
      return recording.state;
    } catch (error) {
      recording.restore(saved);
      throw error;
    }
  }

  /** The recording, rebuilt from the stored log when it does not end where the recording does. */
  async #current(): Promise<Recording> {
    const session = this.session;
    if (this.#recording?.nextSeq === session.nextSeq) return this.#recording;
    const marker = session.log.lastTurnMarker;
    let recording: Recording;
    if (session.openTurn !== undefined && marker !== undefined) {
      recording = Recording.resume(await session.readEvents({ fromSeq: marker.seq }));
    } else {
      recording = new Recording(session.nextSeq, marker?.turn ?? 0);
    }
    this.#recording = recording;
    return recording;
  }

  /** @internal The state for a handle's check, as of the last call. */
  get lastState(): SessionRecordResult | undefined {
    return this.#recording?.state;
  }

  /** @internal The open step's assembled message content, once its finish chunk is recorded. */
  get openMessage(): readonly ContentBlock[] | undefined {
    return this.#recording?.step?.message;
  }

  /** @internal The highest step number started in the open turn (0 before any). */
  get lastStep(): number {
    return this.#recording?.lastStep ?? 0;
  }
}

/** A turn being recorded: start its steps, then end it. */
export class RecordedTurn {
  readonly recorder: TurnRecorder;
  readonly turn: number;

  /** @internal Made by {@link TurnRecorder.startTurn}. */
  constructor(recorder: TurnRecorder, turn: number) {
    this.recorder = recorder;
    this.turn = turn;
  }

  /**
   * Starts the next step (model call) of this turn.
   * @throws RecordError RECORD_REFUSED when this turn is not open or a step of it is.
   */
  async startStep(): Promise<RecordedStep> {
    checkHandle(this.recorder, this.turn, undefined, "step_start");
    const state = await this.recorder.record([{ op: "step_start" }]);
    return new RecordedStep(this.recorder, this.turn, state.step as number);
  }

  /**
   * Ends this turn (default reason: completed). An open step is closed first when it is complete;
   * a step short of its finish chunk may only be left by {@link abort} or {@link fail}.
   * @throws RecordError RECORD_REFUSED when this turn is not open, or its open step is incomplete.
   */
  end(reason: TurnEndReason = { kind: "completed" }): Promise<SessionRecordResult> {
    checkHandle(this.recorder, this.turn, undefined, "turn_end");
    return this.recorder.record([{ op: "turn_end", reason }]);
  }

  /** Ends this turn as aborted, closing its open step whatever it holds (replay: a hang). */
  abort(reason?: string): Promise<SessionRecordResult> {
    return this.end({ kind: "aborted", ...(reason === undefined ? {} : { reason }) });
  }

  /**
   * Ends this turn as failed in its open (or last) step, closing that step (replay: a throw
   * with `message` and `code`).
   */
  fail(message: string, code?: string): Promise<SessionRecordResult> {
    const step = this.recorder.lastState?.step ?? Math.max(this.recorder.lastStep, 1);
    return this.end({ kind: "error", step, message, ...(code === undefined ? {} : { code }) });
  }
}

/** A step (one model call) being recorded: its chunks, its finish, its tool results, its end. */
export class RecordedStep {
  readonly recorder: TurnRecorder;
  readonly turn: number;
  readonly step: number;

  /** @internal Made by {@link RecordedTurn.startStep}. */
  constructor(recorder: TurnRecorder, turn: number, step: number) {
    this.recorder = recorder;
    this.turn = turn;
    this.step = step;
  }

  /** Records one streamed chunk; a `finish` chunk settles the message (see {@link finish}). */
  async chunk(chunk: StreamChunk): Promise<SessionRecordResult> {
    return this.chunks([chunk]);
  }

  /**
   * Records streamed chunks in one batch. A `finish` chunk must come last; with it the assembled
   * `assistant/message` and a `tool/call` per tool-call block are written too.
   * @throws RecordError RECORD_REFUSED when this step is not open, after its finish chunk, or for
   *   a delta of another kind than its block.
   */
  async chunks(chunks: readonly StreamChunk[]): Promise<SessionRecordResult> {
    checkHandle(this.recorder, this.turn, this.step, "chunks");
    if (chunks.length === 0) return this.recorder.lastState as SessionRecordResult;
    return this.recorder.record([
      { op: "chunks", chunks: chunks as [StreamChunk, ...StreamChunk[]] },
    ]);
  }

  /**
   * Records the `finish` chunk: the step's message is assembled and its tool calls are written.
   * @returns the message's content and the tool calls awaiting results.
   */
  async finish(reason: FinishReason = { kind: "stop" }): Promise<FinishedStep> {
    const state = await this.chunks([{ type: "finish", reason }]);
    return { content: this.recorder.openMessage ?? [], toolCalls: state.pendingToolCalls };
  }

  /**
   * Records the result of a pending tool call of this step (a text or content blocks).
   * @throws RecordError RECORD_REFUSED before the finish chunk or for a call that is not pending.
   */
  toolResult(
    callId: string,
    content: string | readonly ContentBlock[],
    options: ToolResultOptions = {},
  ): Promise<SessionRecordResult> {
    checkHandle(this.recorder, this.turn, this.step, "tool_result");
    return this.recorder.record([{ op: "tool_result", callId, content, ...options }]);
  }

  /**
   * Ends this step.
   * @throws RecordError RECORD_REFUSED without its finish chunk or with a tool call unanswered.
   */
  end(): Promise<SessionRecordResult> {
    checkHandle(this.recorder, this.turn, this.step, "step_end");
    return this.recorder.record([{ op: "step_end" }]);
  }
}

/**
 * Refuses a call made through a handle whose turn or step is no longer the open one (as far as
 * the recorder knew after its last call; the op itself is checked against the log again).
 */
function checkHandle(
  recorder: TurnRecorder,
  turn: number,
  step: number | undefined,
  op: RecordOp["op"],
): void {
  const state = recorder.lastState;
  if (state === undefined) return;
  const here = step === undefined ? `turn ${turn}` : `step ${step} of turn ${turn}`;
  const open =
    state.turn === undefined
      ? "no open turn"
      : state.step === undefined
        ? `turn ${state.turn} open`
        : `step ${state.step} of turn ${state.turn} open`;
  const stale = state.turn !== turn || (step !== undefined && state.step !== step);
  if (!stale) return;
  const expected = `a call on the open ${step === undefined ? "turn" : "step"}`;
  throw new RecordError(
    "RECORD_REFUSED",
    `expected ${expected}, found ${op} on ${here} while ${open}`,
    { sessionId: recorder.session.id, index: 0, expected, found: `${op} on ${here} (${open})` },
  );
}
