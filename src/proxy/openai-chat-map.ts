// OpenAI Chat Completions responses (SSE chunks or one JSON body) mapped to stream chunks, with the rest kept.
import type {
  ContentBlock,
  FinishReason,
  ModelResponse,
  StreamChunk,
  TokenUsage,
} from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";
import { errorOfBody, isObject, type Json } from "./openai-chat-request.js";
import type { MappedResponse, StreamMapper } from "./types.js";

type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

/** Members of a response that describe the whole response, kept in `meta`. */
const ENVELOPE = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];
/** Random padding OpenAI adds to stream events against length side channels: it carries nothing. */
const PADDING = "obfuscation";
/** Delta members the chunk kinds express. */
const MAPPED_DELTA = new Set(["role", "content", "tool_calls", "reasoning_content", "reasoning"]);

function usageOf(raw: Json): TokenUsage {
  const n = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const prompt = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completion = isObject(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  return {
    inputTokens: n(raw.prompt_tokens),
    outputTokens: n(raw.completion_tokens),
    ...(prompt.cached_tokens === undefined ? {} : { cacheReadTokens: n(prompt.cached_tokens) }),
    ...(completion.reasoning_tokens === undefined
      ? {}
      : { reasoningTokens: n(completion.reasoning_tokens) }),
  };
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
class ChunkBuilder {
  readonly chunks: StreamChunk[] = [];
  readonly meta: Json = {};
  readonly unmapped: Unmapped[] = [];
  #next = 0;
  #text: number | undefined;
  #reasoning: number | undefined;
  readonly #tools = new Map<number, { index: number; id: string }>();
  #finish: unknown = undefined;
  error: { message: string; code?: string } | undefined;

  envelope(event: Json): void {
    for (const key of ENVELOPE) {
      if (this.meta[key] === undefined && event[key] !== undefined) this.meta[key] = event[key];
    }
  }

  keep(event: unknown): void {
    this.unmapped.push({ at: this.chunks.length, event: event as Unmapped["event"] });
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
    this.chunks.push({ type: "usage", usage: usageOf(raw) });
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

  end(): MappedResponse {
    const finished = this.#finish !== undefined && this.error === undefined;
    const chunks = [...this.chunks];
    if (finished) {
      const blocks = assembleMessage(chunks);
      const ends = [...new Set(chunks.map((c) => ("index" in c ? c.index : -1)))]
        .filter((i) => i >= 0)
        .sort((a, b) => a - b);
      ends.forEach((index, i) => {
        chunks.push({ type: "block-end", index, block: blocks[i] as ContentBlock });
      });
      chunks.push({ type: "finish", reason: finishOf(this.#finish) });
    }
    return {
      chunks,
      meta: { ...this.meta },
      unmapped: [...this.unmapped],
      finished,
      ...(this.error === undefined ? {} : { error: this.error }),
    };
  }
}

function empty(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

/** Maps the SSE events of a streamed response. */
export function streamMapper(): StreamMapper {
  const builder = new ChunkBuilder();
  return {
    event(name, data) {
      if (data === "[DONE]") return;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        builder.keep(data);
        return;
      }
      if (!isObject(event)) return builder.keep(event);
      const error = errorOfBody(event);
      if (error !== undefined) {
        builder.error = error;
        // Kept with its SSE event name (`event: error` from compatible servers), as it came.
        builder.keep({ ...event, ...(name === undefined ? {} : { sseEvent: name }) });
        return;
      }
      builder.envelope(event);
      const choices = Array.isArray(event.choices) ? event.choices : [];
      for (const choice of choices) {
        if (!isObject(choice)) continue;
        // Only the first choice streams into the step; others (n > 1) are kept as they came.
        if ((choice.index ?? 0) !== 0) builder.keep({ choice });
        else builder.choice(choice, isObject(choice.delta) ? choice.delta : {});
      }
      if (isObject(event.usage)) builder.usage(event.usage);
      const extra = Object.keys(event).filter(
        (k) =>
          !ENVELOPE.includes(k) &&
          !["choices", "usage", PADDING].includes(k) &&
          event[k] !== null &&
          event[k] !== undefined,
      );
      if (extra.length > 0)
        builder.keep({ extra: Object.fromEntries(extra.map((k) => [k, event[k]])) });
    },
    end: () => builder.end(),
  };
}

/** Maps a whole JSON response body. */
export function mapJson(body: unknown): MappedResponse {
  const builder = new ChunkBuilder();
  if (!isObject(body)) {
    builder.keep(body);
    return builder.end();
  }
  builder.envelope(body);
  const choices = Array.isArray(body.choices) ? body.choices : [];
  for (const choice of choices) {
    if (!isObject(choice)) continue;
    if ((choice.index ?? 0) !== 0) builder.keep({ choice });
    else builder.choice(choice, isObject(choice.message) ? choice.message : {});
  }
  if (isObject(body.usage)) builder.usage(body.usage);
  return builder.end();
}
