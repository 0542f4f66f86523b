// OpenAI Chat Completions responses (SSE chunks or one JSON body) mapped to stream chunks, with the rest kept.
import type { FinishReason, TokenUsage } from "../generated.js";
import { ChunkBuilder, jsonStreamMapper, mapBody, tokenUsage } from "./chunk-builder.js";
import { errorOfBody, isObject, type Json } from "./openai-chat-request.js";
import type { MappedResponse, StreamMapper } from "./types.js";

/** Members of a response that describe the whole response, kept in `meta`. */
const ENVELOPE = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];
/** Random padding OpenAI adds to stream events against length side channels: it carries nothing. */
const PADDING = "obfuscation";
/** Delta members the chunk kinds express. */
const MAPPED_DELTA = new Set(["role", "content", "tool_calls", "reasoning_content", "reasoning"]);

/**
 * An OpenAI usage object in the log's terms, named as Chat Completions (`prompt_tokens`,
 * `completion_tokens`) or Responses (`input_tokens`, `output_tokens`) names it, each with its
 * `…_details` (cached and reasoning tokens).
 */
export function openaiUsage(raw: Json, input: string, output: string): TokenUsage {
  const inputDetails = raw[`${input}_details`];
  const outputDetails = raw[`${output}_details`];
  return tokenUsage(raw[input], raw[output], {
    cacheReadTokens: isObject(inputDetails) ? inputDetails.cached_tokens : undefined,
    reasoningTokens: isObject(outputDetails) ? outputDetails.reasoning_tokens : undefined,
  });
}

function finishOf(reason: unknown): FinishReason {
  switch (reason) {
    case "length":
      return { kind: "max-tokens" };
    case "tool_calls":
    case "function_call":
      return { kind: "tool-calls" };
    default:
      // `stop`, `content_filter` and any later reason: the raw one stays in meta.finish_reason.
      return { kind: "stop" };
  }
}

/** Collects chunks block by block: Chat Completions has one text block and one block per tool call. */
class ChatBuilder extends ChunkBuilder {
  #next = 0;
  #text: number | undefined;
  #reasoning: number | undefined;
  readonly #tools = new Map<number, { index: number; id: string }>();
  #finish: unknown = undefined;

  envelope(event: Json): void {
    for (const key of ENVELOPE) {
      if (this.meta[key] === undefined && event[key] !== undefined) this.meta[key] = event[key];
    }
  }

  text(text: string): void {
    if (text === "") return;
    if (this.#text === undefined) {
      this.#text = this.#next++;
      this.chunks.push({ type: "block-start", index: this.#text, blockType: "text" });
    }
    this.chunks.push({ type: "text-delta", index: this.#text, text });
  }

  reasoning(text: string, field: string): void {
    if (text === "") return;
    this.meta.reasoning_field = field;
    if (this.#reasoning === undefined) {
      this.#reasoning = this.#next++;
      this.chunks.push({ type: "block-start", index: this.#reasoning, blockType: "reasoning" });
    }
    this.chunks.push({ type: "reasoning-delta", index: this.#reasoning, text });
  }

  toolCall(call: Json, position: number): void {
    const at = typeof call.index === "number" ? call.index : position;
    const fn = isObject(call.function) ? call.function : {};
    let tool = this.#tools.get(at);
    const first = tool === undefined;
    if (tool === undefined) {
      tool = { index: this.#next++, id: typeof call.id === "string" ? call.id : `call_${at}` };
      this.#tools.set(at, tool);
      this.chunks.push({ type: "block-start", index: tool.index, blockType: "tool-call" });
    }
    this.chunks.push({
      type: "tool-call-delta",
      index: tool.index,
      id: tool.id,
      ...(first || typeof fn.name === "string" ? { name: String(fn.name ?? "") } : {}),
      argumentsDelta: typeof fn.arguments === "string" ? fn.arguments : "",
    });
  }

  usage(raw: Json): void {
    this.meta.usage = raw;
    this.chunks.push({
      type: "usage",
      usage: openaiUsage(raw, "prompt_tokens", "completion_tokens"),
    });
  }

  finish(reason: unknown): void {
    this.#finish = reason;
    this.meta.finish_reason = reason;
  }

  /** One choice of a chunk or response; `delta` is its delta or message. */
  choice(choice: Json, delta: Json): void {
    if (typeof delta.content === "string") this.text(delta.content);
    for (const field of ["reasoning_content", "reasoning"]) {
      const value = delta[field];
      if (typeof value === "string") this.reasoning(value, field);
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((call, i) => {
        if (isObject(call)) this.toolCall(call, i);
      });
    }
    const rest = Object.fromEntries(
      Object.entries(delta).filter(([k, v]) => !MAPPED_DELTA.has(k) && v !== null && !empty(v)),
    );
    const logprobs = choice.logprobs ?? null;
    if (Object.keys(rest).length > 0 || logprobs !== null) {
      this.keep({
        choice: choice.index ?? 0,
        ...(Object.keys(rest).length > 0 ? { delta: rest } : {}),
        ...(logprobs === null ? {} : { logprobs }),
      });
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.finish(choice.finish_reason);
    }
  }

  /** A stream chunk (its choices' `delta`) or a whole response (their `message`): envelope, choices and usage. */
  body(body: Json, member: "delta" | "message"): void {
    this.envelope(body);
    const choices = Array.isArray(body.choices) ? body.choices : [];
    for (const choice of choices) {
      if (!isObject(choice)) continue;
      // Only the first choice streams into the step; others (n > 1) are kept as they came.
      if ((choice.index ?? 0) !== 0) this.keep({ choice });
      else this.choice(choice, isObject(choice[member]) ? choice[member] : {});
    }
    if (isObject(body.usage)) this.usage(body.usage);
  }

  end(): MappedResponse {
    const finish = this.#finish === undefined ? undefined : finishOf(this.#finish);
    // A block per chunk index, in order: the text, the reasoning and each tool call.
    const blocks = [...new Set(this.chunks.map((c) => ("index" in c ? c.index : -1)))]
      .filter((i) => i >= 0)
      .sort((a, b) => a - b);
    return this.mapped(finish && { type: "finish", reason: finish }, blocks);
  }
}

function empty(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

/** Maps the SSE events of a streamed response. */
export function streamMapper(): StreamMapper {
  const builder = new ChatBuilder();
  const mapper = jsonStreamMapper(builder, (event, name) => {
    const error = errorOfBody(event);
    if (error !== undefined) {
      builder.error = error;
      // Kept with its SSE event name (`event: error` from compatible servers), as it came.
      builder.keep({ ...event, ...(name === undefined ? {} : { sseEvent: name }) });
      return;
    }
    builder.body(event, "delta");
    const extra = Object.keys(event).filter(
      (k) =>
        !ENVELOPE.includes(k) &&
        !["choices", "usage", PADDING].includes(k) &&
        event[k] !== null &&
        event[k] !== undefined,
    );
    if (extra.length > 0)
      builder.keep({ extra: Object.fromEntries(extra.map((k) => [k, event[k]])) });
  });
  return {
    // The stream's `[DONE]` carries nothing (replay writes it back).
    event: (name, data) => (data === "[DONE]" ? undefined : mapper.event(name, data)),
    end: mapper.end,
  };
}

/** Maps a whole JSON response body. */
export function mapJson(body: unknown): MappedResponse {
  return mapBody(new ChatBuilder(), body, (builder, json) => builder.body(json, "message"));
}
