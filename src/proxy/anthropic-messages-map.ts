// Anthropic Messages responses (SSE events or one JSON message) mapped to stream chunks, with the rest kept.
import type { ContentBlock, FinishReason, TokenUsage } from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";
import { ChunkBuilder, jsonStreamMapper, mapBody, tokenUsage } from "./chunk-builder.js";
import { errorOfBody, isObject, type Json } from "./openai-chat-request.js";
import type { MappedResponse, StreamMapper } from "./types.js";

/** Content block kinds the chunk kinds express; any other kind is kept whole, events and all. */
const MAPPED_BLOCKS: Readonly<Record<string, "text" | "reasoning" | "tool-call">> = {
  text: "text",
  thinking: "reasoning",
  tool_use: "tool-call",
};

/** Anthropic's usage in the log's terms: cache reads and writes are counted apart from input. */
function usageOf(raw: Json): TokenUsage {
  return tokenUsage(raw.input_tokens, raw.output_tokens, {
    cacheReadTokens: raw.cache_read_input_tokens ?? undefined,
    cacheWriteTokens: raw.cache_creation_input_tokens ?? undefined,
  });
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
class MessagesBuilder extends ChunkBuilder {
  /** The mapped blocks open now, by index. */
  readonly #open = new Map<number, "text" | "reasoning" | "tool-call">();
  #startUsage: Json = {};
  #stopped = false;

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
    // Each mapped block ended at its content_block_stop.
    const stopped = this.#stopped && this.meta.stop_reason !== undefined;
    return this.mapped(
      stopped ? { type: "finish", reason: finishOf(this.meta.stop_reason) } : undefined,
    );
  }
}

/** Maps the SSE events of a streamed response. */
export function streamMapper(): StreamMapper {
  const builder = new MessagesBuilder();
  const onEvent = (event: Json, name: string | undefined): void => {
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
        builder.error = errorOfBody(event) ?? { message: JSON.stringify(event) };
        break;
    }
    // Pings, signatures, citations, blocks of other kinds and events to come: kept as they came.
    builder.keep(event);
  };
  return jsonStreamMapper(builder, onEvent, (name, data) => ({ sseEvent: name ?? null, data }));
}

/** Maps a whole JSON message body: the same chunks its stream would have given. */
export function mapJson(body: unknown): MappedResponse {
  return mapBody(new MessagesBuilder(), body, (builder, message) => {
    builder.messageStart({ ...message, stop_reason: null, stop_sequence: null });
    const content = Array.isArray(message.content) ? message.content : [];
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
      delta: {
        stop_reason: message.stop_reason ?? null,
        stop_sequence: message.stop_sequence ?? null,
      },
      ...(isObject(message.usage) ? { usage: message.usage } : {}),
    });
    builder.stop();
  });
}
