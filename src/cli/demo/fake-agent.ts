// A scripted fake agent for the demo: writes the events a real agent loop records for a turn (streamed chunks included).
import type { SessionEvent, StreamChunk, TokenUsage } from "../../generated.js";
import { assembleMessage } from "../../replay/assemble.js";

/** One model call of a scripted turn: the text it streams and, optionally, one tool call. */
export interface ScriptedStep {
  readonly text: string;
  readonly toolCall?: {
    readonly name: string;
    readonly arguments: Readonly<Record<string, unknown>>;
    /** What the tool returns. */
    readonly result: string;
  };
}

/** Where a fake agent starts writing: the log's next seq and the last turn number used. */
export interface AgentPosition {
  readonly nextSeq: number;
  readonly lastTurn: number;
}

/**
 * Writes the events of scripted turns as a harness would record them: `turn/start`, the user's
 * message, then per step `step/start`, the streamed `assistant/chunk`s, the assembled
 * `assistant/message`, the tool call and its result, `step/end`; and `turn/end` completed.
 * Seqs and turn numbers continue from `position`, so the events append cleanly to a log (a fork
 * child continues its parent's numbering).
 */
export class FakeAgent {
  #seq: number;
  #turn: number;
  #time: number;
  #calls = 0;

  constructor(position: AgentPosition, startTime: number) {
    this.#seq = position.nextSeq;
    this.#turn = position.lastTurn;
    this.#time = startTime;
  }

  /** The `time` of the last event written (the start time before any). */
  get time(): number {
    return this.#time;
  }

  /** The opening of a turn: `turn/start` and the user's message. */
  startTurn(prompt: string): SessionEvent[] {
    const turn = ++this.#turn;
    return [
      this.#event("turn/start", {
        turn,
        trigger: { kind: "message", source: { kind: "user" } },
      }),
      this.#event(
        "user/message",
        { content: [{ type: "text", text: prompt }], source: { kind: "user" } },
        { surfaceOp: "append" },
      ),
    ];
  }

  /** One step (a model call) of the open turn, numbered `step`. */
  step(step: number, script: ScriptedStep): SessionEvent[] {
    const turn = this.#turn;
    const events: SessionEvent[] = [this.#event("step/start", { turn, step })];
    const chunks = streamOf(script, `call_${++this.#calls}`);
    const chunkSeqs: number[] = [];
    for (const chunk of chunks) {
      chunkSeqs.push(this.#seq);
      events.push(this.#event("assistant/chunk", { turn, step, chunk }));
    }
    const usage = (chunks.find((c) => c.type === "usage") as { usage: TokenUsage }).usage;
    events.push(
      this.#event(
        "assistant/message",
        { turn, step, content: assembleMessage(chunks), usage },
        { sourceEventSeqs: chunkSeqs, surfaceOp: "append" },
      ),
    );
    if (script.toolCall) {
      const callId = `call_${this.#calls}`;
      const callSeq = this.#seq;
      events.push(
        this.#event("tool/call", {
          turn,
          step,
          callId,
          name: script.toolCall.name,
          arguments: JSON.stringify(script.toolCall.arguments),
        }),
        this.#event(
          "tool/result",
          {
            turn,
            step,
            callId,
            content: [{ type: "text", text: script.toolCall.result }],
            isError: false,
          },
          { sourceEventSeqs: [callSeq], surfaceOp: "append" },
        ),
      );
    }
    events.push(this.#event("step/end", { turn, step }));
    return events;
  }

  /** The close of the open turn: `turn/end` completed. */
  endTurn(): SessionEvent[] {
    return [this.#event("turn/end", { turn: this.#turn, reason: { kind: "completed" } })];
  }

  #event(type: string, data: unknown, extra: Record<string, unknown> = {}): SessionEvent {
    this.#time += 7;
    return { type, seq: this.#seq++, time: this.#time, data, ...extra } as SessionEvent;
  }
}

/** The chunks a provider streams for a step: the text in pieces, the tool call in pieces, usage, finish. */
function streamOf(script: ScriptedStep, callId: string): StreamChunk[] {
  const chunks: StreamChunk[] = [{ type: "block-start", index: 0, blockType: "text" }];
  for (const piece of script.text.match(/\S+\s*/g) ?? []) {
    chunks.push({ type: "text-delta", index: 0, text: piece });
  }
  chunks.push({ type: "block-end", index: 0, block: { type: "text", text: script.text } });
  const call = script.toolCall;
  if (call) {
    const args = JSON.stringify(call.arguments);
    chunks.push({ type: "block-start", index: 1, blockType: "tool-call" });
    const half = Math.ceil(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)]) {
      chunks.push({
        type: "tool-call-delta",
        index: 1,
        id: callId,
        name: call.name,
        argumentsDelta: part,
      });
    }
    chunks.push({
      type: "block-end",
      index: 1,
      block: { type: "tool-call", id: callId, name: call.name, arguments: args },
    });
  }
  chunks.push({
    type: "usage",
    usage: {
      inputTokens: 40 + script.text.length,
      outputTokens: Math.ceil(script.text.length / 4),
    },
  });
  chunks.push({ type: "finish", reason: { kind: call ? "tool-calls" : "stop" } });
  return chunks;
}
