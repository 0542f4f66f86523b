// Anthropic Messages responses (SSE events or one JSON message) mapped to stream chunks, with the rest kept.
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

/** Content block kinds the chunk kinds express; any other kind is kept whole, events and all. */
const MAPPED_BLOCKS: Readonly<Record<string, "text" | "reasoning" | "tool-call">> = {
  text: "text",
  thinking: "reasoning",
  tool_use: "tool-call",
};

function count(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

/** Anthropic's usage in the log's terms: cache reads and writes are counted apart from input. */
export function usageOf(raw: Json): TokenUsage {
  return {
    inputTokens: count(raw.input_tokens),
    outputTokens: count(raw.output_tokens),
    ...(raw.cache_read_input_tokens === undefined || raw.cache_read_input_tokens === null
      ? {}
      : { cacheReadTokens: count(raw.cache_read_input_tokens) }),
    ...(raw.cache_creation_input_tokens === undefined || raw.cache_creation_input_tokens === null
      ? {}
      : { cacheWriteTokens: count(raw.cache_creation_input_tokens) }),
  };
}

function finishOf(reason: unknown): FinishReason {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return { kind: "max-tokens" };
    case "tool_use":
      return { kind: "tool-calls" };
    default:
      // `end_turn`, `stop_sequence`, `pause_turn`, `refusal`, any later one: the raw reason stays in meta.stop_reason.
      return { kind: "stop" };
  }
}

/**
 * Collects chunks as Messages events come. A chunk's `index` is the content block's own index,
 * so the blocks kept unmapped (redacted thinking, server tool use and results) keep their place.
 */
class ChunkBuilder {
  readonly chunks: StreamChunk[] = [];
  readonly meta: Json = {};
  readonly unmapped: Unmapped[] = [];
  /** The mapped blocks open now, by index. */
  readonly #open = new Map<number, "text" | "reasoning" | "tool-call">();
  #startUsage: Json = {};
  #stopped = false;
  error: { message: string; code?: string } | undefined;

  keep(event: unknown): void {
    this.unmapped.push({ at: this.chunks.length, event: event as Unmapped["event"] });
  }

  messageStart(message: Json): void {
    const { content: _content, ...envelope } = message;
    this.meta.message = envelope;
    if (isObject(message.usage)) this.#startUsage = message.usage;
  }

  /** A `content_block_start`; false when its kind has no chunk kind (the caller keeps it). */
  blockStart(index: number, block: Json): boolean {
    const kind = typeof block.type === "string" ? MAPPED_BLOCKS[block.type] : undefined;
    if (kind === undefined) return false;
    this.#open.set(index, kind);
    this.chunks.push({ type: "block-start", index, blockType: kind });
    if (kind === "tool-call") {
      this.chunks.push({
        type: "tool-call-delta",
        index,
        id: typeof block.id === "string" ? block.id : `toolu_${index}`,
        name: typeof block.name === "string" ? block.name : "",
        argumentsDelta: "",
      });
    } else if (kind === "text" && typeof block.text === "string" && block.text !== "") {
      this.chunks.push({ type: "text-delta", index, text: block.text });
    } else if (
      kind === "reasoning" &&
      typeof block.thinking === "string" &&
      block.thinking !== ""
    ) {
      this.chunks.push({ type: "reasoning-delta", index, text: block.thinking });
    }
    // What the start says beyond the mapped members (a signature, citations, a caller) is kept.
    const mapped = new Set(["type", "text", "thinking", "id", "name", "input"]);
    const extra = Object.fromEntries(Object.entries(block).filter(([k]) => !mapped.has(k)));
    if (Object.keys(extra).length > 0) {
      this.keep({ type: "content_block_extra", index, content_block: extra });
    }
    return true;
  }

  /** A `content_block_delta`; false when it has no chunk kind (the caller keeps it). */
  blockDelta(index: number, delta: Json): boolean {
    const kind = this.#open.get(index);
    if (kind === "text" && delta.type === "text_delta" && typeof delta.text === "string") {
      this.chunks.push({ type: "text-delta", index, text: delta.text });
    } else if (
      kind === "reasoning" &&
      delta.type === "thinking_delta" &&
      typeof delta.thinking === "string"
    ) {
      this.chunks.push({ type: "reasoning-delta", index, text: delta.thinking });
    } else if (
      kind === "tool-call" &&
      delta.type === "input_json_delta" &&
      typeof delta.partial_json === "string"
    ) {
      const first = this.chunks.find((c) => c.type === "tool-call-delta" && c.index === index);
      const id = first?.type === "tool-call-delta" ? first.id : "";
      this.chunks.push({ type: "tool-call-delta", index, id, argumentsDelta: delta.partial_json });
    } else return false;
    return true;
  }

  /** A `content_block_stop`; false for a block kept unmapped. */
  blockStop(index: number): boolean {
    if (!this.#open.has(index)) return false;
    this.#open.delete(index);
    const blocks = assembleMessage(this.chunks.filter((c) => "index" in c && c.index === index));
    let block = blocks[0] as ContentBlock;
    // A tool called with no arguments streams none: its input is `{}`.
    if (block.type === "tool-call" && block.arguments === "") block = { ...block, arguments: "{}" };
    this.chunks.push({ type: "block-end", index, block });
    return true;
  }

  messageDelta(event: Json): void {
    const delta = isObject(event.delta) ? event.delta : {};
    this.meta.stop_reason = delta.stop_reason ?? null;
    this.meta.stop_sequence = delta.stop_sequence ?? null;
    const rest = Object.fromEntries(
      Object.entries(delta).filter(([k]) => k !== "stop_reason" && k !== "stop_sequence"),
    );
    if (Object.keys(rest).length > 0) this.meta.delta = rest;
    const extra = Object.fromEntries(
      Object.entries(event).filter(([k]) => !["type", "delta", "usage"].includes(k)),
    );
    if (Object.keys(extra).length > 0) this.meta.message_delta = extra;
    if (isObject(event.usage)) {
      this.meta.usage = event.usage;
      this.chunks.push({ type: "usage", usage: usageOf({ ...this.#startUsage, ...event.usage }) });
    }
  }

  stop(): void {
    this.#stopped = true;
  }

  end(): MappedResponse {
    const finished = this.#stopped && this.meta.stop_reason !== undefined && !this.error;
    const chunks = [...this.chunks];
    if (finished) chunks.push({ type: "finish", reason: finishOf(this.meta.stop_reason) });
    return {
      chunks,
      meta: { ...this.meta },
      unmapped: [...this.unmapped],
      finished,
      ...(this.error === undefined ? {} : { error: this.error }),
    };
  }
}

/** Maps the SSE events of a streamed response. */
export function streamMapper(): StreamMapper {
  const builder = new ChunkBuilder();
  return {
    event(name, data) {
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        builder.keep({ sseEvent: name ?? null, data });
        return;
      }
      if (!isObject(event)) return builder.keep(event);
      const type = typeof event.type === "string" ? event.type : name;
      const index = typeof event.index === "number" ? event.index : -1;
      switch (type) {
        case "message_start":
          builder.messageStart(isObject(event.message) ? event.message : {});
          return;
        case "content_block_start":
          if (builder.blockStart(index, isObject(event.content_block) ? event.content_block : {}))
            return;
          break;
        case "content_block_delta":
          if (builder.blockDelta(index, isObject(event.delta) ? event.delta : {})) return;
          break;
        case "content_block_stop":
          if (builder.blockStop(index)) return;
          break;
        case "message_delta":
          builder.messageDelta(event);
          return;
        case "message_stop":
          builder.stop();
          return;
        case "error":
          builder.error = errorOfBody(event) ?? { message: data };
          break;
      }
      // Pings, signatures, citations, blocks of other kinds and events to come: kept as they came.
      builder.keep(event);
    },
    end: () => builder.end(),
  };
}

/** Maps a whole JSON message body: the same chunks its stream would have given. */
export function mapJson(body: unknown): MappedResponse {
  const builder = new ChunkBuilder();
  if (!isObject(body)) {
    builder.keep(body);
    return builder.end();
  }
  builder.messageStart({ ...body, stop_reason: null, stop_sequence: null });
  const content = Array.isArray(body.content) ? body.content : [];
  content.forEach((block, index) => {
    const b = isObject(block) ? block : {};
    if (!builder.blockStart(index, { ...b, ...(b.type === "tool_use" ? { input: {} } : {}) })) {
      builder.keep({ type: "content_block_start", index, content_block: block });
      builder.keep({ type: "content_block_stop", index });
      return;
    }
    if (b.type === "tool_use") {
      builder.blockDelta(index, {
        type: "input_json_delta",
        partial_json: JSON.stringify(b.input ?? {}),
      });
    }
    builder.blockStop(index);
  });
  builder.messageDelta({
    type: "message_delta",
    delta: { stop_reason: body.stop_reason ?? null, stop_sequence: body.stop_sequence ?? null },
    ...(isObject(body.usage) ? { usage: body.usage } : {}),
  });
  builder.stop();
  return builder.end();
}
