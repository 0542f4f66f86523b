// OpenAI Responses SSE events (or one JSON response) mapped to stream chunks, every other event kept as it came.
import type { FinishReason } from "../generated.js";
import { ChunkBuilder, jsonStreamMapper, mapBody } from "./chunk-builder.js";
import { openaiUsage } from "./openai-chat-map.js";
import { isObject, type Json } from "./openai-chat-request.js";
import type { MappedResponse, StreamMapper } from "./types.js";

/** Random padding the API adds to delta events against length side channels: it carries nothing. */
const PADDING = "obfuscation";

/** The delta events that become chunks, by the block kind they stream and the member naming the block's part. */
const DELTAS: Record<string, { kind: "text" | "reasoning" | "tool-call"; part?: string }> = {
  "response.output_text.delta": { kind: "text", part: "content_index" },
  "response.reasoning_summary_text.delta": { kind: "reasoning", part: "summary_index" },
  "response.reasoning_text.delta": { kind: "reasoning", part: "content_index" },
  "response.function_call_arguments.delta": { kind: "tool-call" },
  "response.custom_tool_call_input.delta": { kind: "tool-call" },
};

/** Output items that are tool calls the agent runs (server-side tools such as web search are not). */
const TOOL_ITEMS = new Set(["function_call", "custom_tool_call"]);

/** The events that end a response, with the `response` object they carry. */
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** One block: its chunk index and the delta event it streams with, without the delta (replay's template). */
interface Block {
  readonly index: number;
  template: Json | undefined;
  /** A tool call's id, carried on each of its deltas. */
  id?: string;
}

class ResponsesBuilder extends ChunkBuilder {
  readonly #blocks = new Map<string, Block>();
  /** The delta templates by chunk index, kept in `meta.deltas` for replay. */
  readonly #templates: Json = {};
  #toolCalls = 0;
  #terminal: Json | undefined;

  #block(key: string, kind: "text" | "reasoning" | "tool-call"): Block {
    let block = this.#blocks.get(key);
    if (block === undefined) {
      block = { index: this.#blocks.size, template: undefined };
      this.#blocks.set(key, block);
      this.chunks.push({ type: "block-start", index: block.index, blockType: kind });
    }
    return block;
  }

  /** A tool call item begins: its block starts with the call's id and name. */
  #toolItem(event: Json, item: Json): void {
    const block = this.#block(`item:${String(event.output_index)}`, "tool-call");
    this.#toolCalls++;
    const args = item.type === "function_call" ? item.arguments : item.input;
    block.id = String(item.call_id ?? item.id ?? `call_${block.index}`);
    this.chunks.push({
      type: "tool-call-delta",
      index: block.index,
      id: block.id,
      name: String(item.name ?? ""),
      argumentsDelta: typeof args === "string" ? args : "",
    });
  }

  #delta(event: Json, kind: "text" | "reasoning" | "tool-call", part: string | undefined): void {
    const key = `item:${String(event.output_index)}${part === undefined ? "" : `:${part}:${String(event[part])}`}`;
    const block = this.#block(key, kind);
    if (block.template === undefined) {
      // The first delta's `sequence_number` stays as a marker that the stream numbers its events.
      const { delta: _delta, [PADDING]: _pad, ...template } = event;
      block.template = template;
      this.#templates[String(block.index)] = template;
    }
    const text = typeof event.delta === "string" ? event.delta : "";
    if (kind === "text") this.chunks.push({ type: "text-delta", index: block.index, text });
    else if (kind === "reasoning") {
      this.chunks.push({ type: "reasoning-delta", index: block.index, text });
    } else {
      block.id ??= String(event.item_id ?? block.index);
      const id = block.id;
      this.chunks.push({ type: "tool-call-delta", index: block.index, id, argumentsDelta: text });
    }
  }

  event(event: Json, sseName: string | undefined): void {
    const type = typeof event.type === "string" ? event.type : undefined;
    const delta = type === undefined ? undefined : DELTAS[type];
    if (delta !== undefined) {
      this.#delta(event, delta.kind, delta.part);
      return;
    }
    // Kept with its SSE event name only when that is not the event's type (as the API names them).
    this.keep(sseName === undefined || sseName === type ? event : { ...event, sseEvent: sseName });
    const response = isObject(event.response) ? event.response : undefined;
    if (type === "response.created" && response !== undefined) {
      for (const key of ["id", "model", "created_at"]) {
        if (response[key] !== undefined) this.meta[key] = response[key];
      }
    }
    if (type === "response.output_item.added" && isObject(event.item)) {
      if (TOOL_ITEMS.has(String(event.item.type))) this.#toolItem(event, event.item);
    }
    if (type !== undefined && TERMINAL.has(type) && response !== undefined) {
      this.#terminal = response;
      this.meta.status = response.status;
      if (isObject(response.usage)) {
        this.meta.usage = response.usage;
        this.chunks.push({
          type: "usage",
          usage: openaiUsage(response.usage, "input_tokens", "output_tokens"),
        });
      }
      // An `error` event before it told the same failure first: its words stand.
      if (type === "response.failed" && this.error === undefined) {
        const e = isObject(response.error) ? response.error : {};
        this.error = {
          message: typeof e.message === "string" ? e.message : "the response failed",
          ...(typeof e.code === "string" ? { code: e.code } : {}),
        };
      }
    }
    if (type === "error" && this.error === undefined) {
      const e = isObject(event.error) ? event.error : event;
      this.error = {
        message: typeof e.message === "string" ? e.message : JSON.stringify(e),
        ...(typeof e.code === "string" ? { code: e.code } : {}),
      };
    }
  }

  #finishReason(): FinishReason {
    const details = this.#terminal?.incomplete_details;
    if (isObject(details) && details.reason === "max_output_tokens") return { kind: "max-tokens" };
    return this.#toolCalls > 0 ? { kind: "tool-calls" } : { kind: "stop" };
  }

  end(): MappedResponse {
    const finish = this.#terminal === undefined ? undefined : this.#finishReason();
    const meta = { ...this.meta };
    if (Object.keys(this.#templates).length > 0) meta.deltas = { ...this.#templates };
    const blocks = [...this.#blocks.values()].map((block) => block.index);
    return this.mapped(finish && { type: "finish", reason: finish }, blocks, meta);
  }
}

/** Maps the SSE events of a streamed response. */
export function streamMapper(): StreamMapper {
  const builder = new ResponsesBuilder();
  return jsonStreamMapper(builder, (event, name) => builder.event(event, name));
}

/**
 * Maps a whole JSON response body as the events it would have streamed: its items become the
 * same chunks, and it is kept whole in the final `response.completed` (or `.incomplete`,
 * `.failed`) event, so a JSON call and a streamed one replay in either mode alike.
 */
export function mapJson(body: unknown): MappedResponse {
  return mapBody(new ResponsesBuilder(), body, (builder, json) => {
    for (const event of eventsOf(json)) builder.event(event, undefined);
  });
}

/** The events a streamed answer of a JSON response body consists of. */
function eventsOf(body: Json): Json[] {
  const events: Json[] = [];
  const push = (type: string, rest: Json) =>
    events.push({ type, ...rest, sequence_number: events.length });
  const opening = { ...body, status: "in_progress", output: [], usage: null };
  push("response.created", { response: opening });
  push("response.in_progress", { response: opening });
  const output = Array.isArray(body.output) ? body.output : [];
  output.forEach((item, output_index) => {
    if (!isObject(item)) return;
    const at = { item_id: item.id, output_index };
    if (item.type === "message" && Array.isArray(item.content)) {
      push("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      item.content.forEach((part, content_index) => {
        if (!isObject(part)) return;
        const text = typeof part.text === "string" ? part.text : undefined;
        push("response.content_part.added", {
          ...at,
          content_index,
          part: text === undefined ? part : { ...part, text: "" },
        });
        if (text !== undefined && part.type === "output_text") {
          push("response.output_text.delta", { ...at, content_index, delta: text, logprobs: [] });
          push("response.output_text.done", { ...at, content_index, text, logprobs: [] });
        }
        push("response.content_part.done", { ...at, content_index, part });
      });
    } else if (item.type === "reasoning" && Array.isArray(item.summary)) {
      push("response.output_item.added", { output_index, item: { ...item, summary: [] } });
      item.summary.forEach((part, summary_index) => {
        const text = isObject(part) && typeof part.text === "string" ? part.text : "";
        const empty = { type: "summary_text", text: "" };
        push("response.reasoning_summary_part.added", { ...at, summary_index, part: empty });
        push("response.reasoning_summary_text.delta", { ...at, summary_index, delta: text });
        push("response.reasoning_summary_text.done", { ...at, summary_index, text });
        push("response.reasoning_summary_part.done", { ...at, summary_index, part });
      });
    } else if (TOOL_ITEMS.has(String(item.type))) {
      const field = item.type === "function_call" ? "arguments" : "input";
      const what =
        item.type === "function_call" ? "function_call_arguments" : "custom_tool_call_input";
      const args = typeof item[field] === "string" ? (item[field] as string) : "";
      push("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", [field]: "" },
      });
      push(`response.${what}.delta`, { ...at, delta: args });
      push(`response.${what}.done`, { ...at, [field]: args });
    } else {
      push("response.output_item.added", { output_index, item });
    }
    push("response.output_item.done", { output_index, item });
  });
  const terminal =
    body.status === "failed"
      ? "response.failed"
      : body.status === "incomplete"
        ? "response.incomplete"
        : "response.completed";
  push(terminal, { response: body });
  return events;
}
