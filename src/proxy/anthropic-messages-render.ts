// Recorded Messages calls rendered back as the API answers: named SSE events, or one JSON message folded from them.
import type { ModelResponse } from "../generated.js";
import { isObject, type Json } from "./openai-chat-request.js";
import { sseText } from "./sse.js";
import type { RecordedCall, RenderedAnswer } from "./types.js";

type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

function metaOf(call: RecordedCall): Json {
  return (call.end?.response?.meta ?? {}) as Json;
}

const STOP_REASONS: Readonly<Record<string, string>> = {
  "tool-calls": "tool_use",
  "max-tokens": "max_tokens",
};

function stopReasonOf(call: RecordedCall): unknown {
  const meta = metaOf(call);
  if (meta.stop_reason !== undefined) return meta.stop_reason;
  const finish = call.chunks.find((c) => c.type === "finish");
  if (finish?.type !== "finish") return null;
  return STOP_REASONS[finish.reason.kind] ?? "end_turn";
}

/** The final usage as Messages says it: recorded, or made up from the step's usage chunk. */
function usageJson(call: RecordedCall): Json {
  const raw = metaOf(call).usage;
  if (isObject(raw)) return raw;
  const chunk = [...call.chunks].reverse().find((c) => c.type === "usage");
  if (chunk?.type !== "usage") return { input_tokens: 0, output_tokens: 0 };
  const u = chunk.usage;
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    ...(u.cacheReadTokens === undefined ? {} : { cache_read_input_tokens: u.cacheReadTokens }),
    ...(u.cacheWriteTokens === undefined
      ? {}
      : { cache_creation_input_tokens: u.cacheWriteTokens }),
  };
}

/** The `message_start` message: the recorded envelope, or one made up from the step's place. */
function envelopeOf(call: RecordedCall): Json {
  const recorded = metaOf(call).message;
  if (isObject(recorded)) return { ...recorded, content: [] };
  return {
    id: `msg_seedline_${call.start.turn}_${call.start.step}`,
    type: "message",
    role: "assistant",
    model: call.start.request?.model ?? "",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usageJson(call), output_tokens: 0 },
  };
}

/**
 * The call as the Messages events that stream it: the chunks rendered back in order with the
 * events kept unmapped (pings, signatures, blocks of other kinds) put back where they came.
 */
export function eventsOf(call: RecordedCall): Json[] {
  const kept = (call.end?.response?.unmapped ?? []).filter(
    (u) => !(isObject(u.event) && u.event.type === "content_block_extra"),
  );
  // What a block's start said beyond the mapped members, merged back into its start.
  const extras = new Map<number, Json>();
  for (const u of call.end?.response?.unmapped ?? []) {
    const e = u.event;
    if (isObject(e) && e.type === "content_block_extra" && isObject(e.content_block)) {
      extras.set(Number(e.index), e.content_block);
    }
  }
  const out: Json[] = [{ type: "message_start", message: envelopeOf(call) }];
  const flushKept = (at: number) => {
    while (kept.length > 0 && (kept[0] as Unmapped).at <= at) {
      const e = (kept.shift() as Unmapped).event;
      out.push(isObject(e) ? e : { type: "unmapped", value: e });
    }
  };
  const meta = metaOf(call);
  const started = new Set<number>();
  let deltaSent = false;
  const messageDelta = () => {
    deltaSent = true;
    out.push({
      type: "message_delta",
      delta: {
        stop_reason: stopReasonOf(call),
        stop_sequence: meta.stop_sequence ?? null,
        ...(isObject(meta.delta) ? meta.delta : {}),
      },
      ...(isObject(meta.message_delta) ? meta.message_delta : {}),
      usage: usageJson(call),
    });
  };
  call.chunks.forEach((chunk, i) => {
    flushKept(i);
    switch (chunk.type) {
      case "block-start": {
        const extra = extras.get(chunk.index) ?? {};
        if (chunk.blockType === "text") {
          out.push(start(chunk.index, { type: "text", text: "", ...extra }));
        } else if (chunk.blockType === "reasoning") {
          out.push(start(chunk.index, { type: "thinking", thinking: "", signature: "", ...extra }));
        }
        // A tool_use block starts with its first delta, which carries its id and name.
        started.add(chunk.index);
        break;
      }
      case "text-delta":
        out.push(delta(chunk.index, { type: "text_delta", text: chunk.text }));
        break;
      case "reasoning-delta":
        out.push(delta(chunk.index, { type: "thinking_delta", thinking: chunk.text }));
        break;
      case "tool-call-delta":
        if (chunk.name !== undefined) {
          const extra = extras.get(chunk.index) ?? {};
          const block = { type: "tool_use", id: chunk.id, name: chunk.name, input: {}, ...extra };
          out.push(start(chunk.index, block));
        }
        if (chunk.name === undefined || chunk.argumentsDelta !== "") {
          out.push(
            delta(chunk.index, { type: "input_json_delta", partial_json: chunk.argumentsDelta }),
          );
        }
        break;
      case "block-end":
        out.push({ type: "content_block_stop", index: chunk.index });
        break;
      case "usage":
        messageDelta();
        break;
      case "finish":
        if (!deltaSent) messageDelta();
        out.push({ type: "message_stop" });
        break;
    }
  });
  flushKept(Number.MAX_SAFE_INTEGER);
  if (call.error !== undefined && !out.some((e) => e.type === "error")) {
    out.push({
      type: "error",
      error: { type: call.error.code ?? "api_error", message: call.error.message },
    });
  }
  return out;
}

function start(index: number, block: Json): Json {
  return { type: "content_block_start", index, content_block: block };
}

function delta(index: number, d: Json): Json {
  return { type: "content_block_delta", index, delta: d };
}

/** The call as the SSE body of a streamed answer: each event named by its `type`. */
export function renderStream(call: RecordedCall): string {
  return eventsOf(call)
    .map((event) =>
      "sseEvent" in event && typeof event.data === "string"
        ? sseText(event.data, typeof event.sseEvent === "string" ? event.sseEvent : undefined)
        : sseText(JSON.stringify(event), String(event.type)),
    )
    .join("");
}

/** The call as one JSON message, folded from its events as a client accumulates them. */
export function renderJson(call: RecordedCall): string {
  let message: Json = {};
  const content: Json[] = [];
  const partial = new Map<number, string>();
  for (const event of eventsOf(call)) {
    const index = typeof event.index === "number" ? event.index : -1;
    const block = content[index];
    switch (event.type) {
      case "message_start":
        message = { ...(event.message as Json) };
        break;
      case "content_block_start":
        content[index] = { ...(event.content_block as Json) };
        break;
      case "content_block_delta": {
        if (block === undefined || !isObject(event.delta)) break;
        const d = event.delta;
        if (d.type === "text_delta") block.text = `${block.text ?? ""}${d.text}`;
        else if (d.type === "thinking_delta")
          block.thinking = `${block.thinking ?? ""}${d.thinking}`;
        else if (d.type === "signature_delta") block.signature = d.signature;
        else if (d.type === "input_json_delta")
          partial.set(index, `${partial.get(index) ?? ""}${d.partial_json}`);
        else if (d.type === "citations_delta")
          block.citations = [
            ...(Array.isArray(block.citations) ? block.citations : []),
            d.citation,
          ];
        else {
          // A delta of a kind to come: its members (but its type) extend the block.
          const { type: _type, ...rest } = d;
          Object.assign(block, rest);
        }
        break;
      }
      case "content_block_stop": {
        const json = partial.get(index);
        if (block !== undefined && json !== undefined) {
          block.input = json === "" ? {} : (JSON.parse(json) as unknown);
        }
        break;
      }
      case "message_delta": {
        Object.assign(message, isObject(event.delta) ? event.delta : {});
        const usage = isObject(message.usage) ? message.usage : {};
        message.usage = { ...usage, ...(isObject(event.usage) ? event.usage : {}) };
        break;
      }
    }
  }
  return JSON.stringify({ ...message, content: content.filter((b) => b !== undefined) });
}

/** An error answer in Messages' error format; `code` is the error's `type`. */
export function errorAnswer(status: number, message: string, code: string): RenderedAnswer {
  return {
    status,
    contentType: "application/json",
    body: JSON.stringify({ type: "error", error: { type: code, message } }),
  };
}
