// Recorded Responses calls rendered back as the API answers: its named SSE events or one JSON body.
import type { ModelResponse } from "../generated.js";
import { isObject, type Json } from "./openai-chat-request.js";
import { sseText } from "./sse.js";
import type { RecordedCall } from "./types.js";

type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The kept event as sent, and its SSE event name (the event's type, as the API names them). */
function framed(event: unknown): { data: Json | string; name: string | undefined } {
  if (!isObject(event)) {
    return { data: typeof event === "string" ? event : JSON.stringify(event), name: undefined };
  }
  const { sseEvent, ...data } = event;
  const name =
    typeof sseEvent === "string" ? sseEvent : typeof data.type === "string" ? data.type : undefined;
  return { data, name };
}

/**
 * The call as the SSE body of a streamed answer: the kept events where they came, and between
 * them a delta event per text, reasoning and argument chunk, rebuilt from the block's recorded
 * template and numbered on from the event before it.
 */
export function renderStream(call: RecordedCall): string {
  const meta = (call.end?.response?.meta ?? {}) as Json;
  const templates = isObject(meta.deltas) ? meta.deltas : {};
  const kept = [...(call.end?.response?.unmapped ?? [])];
  const out: string[] = [];
  let sequence = -1;
  const send = (data: Json | string, name: string | undefined) => {
    if (isObject(data) && typeof data.sequence_number === "number") {
      sequence = data.sequence_number;
    }
    out.push(sseText(typeof data === "string" ? data : JSON.stringify(data), name));
  };
  const flushKept = (at: number) => {
    while (kept.length > 0 && (kept[0] as Unmapped).at <= at) {
      const { data, name } = framed((kept.shift() as Unmapped).event);
      send(data, name);
    }
  };
  call.chunks.forEach((chunk, i) => {
    flushKept(i);
    let delta: string | undefined;
    if (chunk.type === "text-delta" || chunk.type === "reasoning-delta") delta = chunk.text;
    // A tool call's first chunk (the one naming it) came inside its `output_item.added` event.
    else if (chunk.type === "tool-call-delta" && chunk.name === undefined) {
      delta = chunk.argumentsDelta;
    }
    if (delta === undefined || !("index" in chunk)) return;
    const template = templates[String(chunk.index)];
    if (!isObject(template)) return;
    sequence += 1;
    const numbered = "sequence_number" in template;
    const event = { ...template, delta, ...(numbered ? { sequence_number: sequence } : {}) };
    send(event, typeof template.type === "string" ? template.type : undefined);
  });
  flushKept(Number.MAX_SAFE_INTEGER);
  const told = call.end?.response?.unmapped?.some((u) => {
    const type = isObject(u.event) ? u.event.type : undefined;
    return type === "error" || type === "response.failed";
  });
  if (call.error !== undefined && told !== true) {
    // The stream broke off: the SDK is told so by an error event, as the API tells of a failure.
    send(
      {
        type: "error",
        code: call.error.code ?? null,
        message: call.error.message,
        param: null,
        sequence_number: sequence + 1,
      },
      "error",
    );
  }
  return out.join("");
}

/** The call's final `response` object (from its completed, incomplete or failed event), if it has one. */
export function finalResponse(call: RecordedCall): Json | undefined {
  const events = call.end?.response?.unmapped ?? [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = (events[i] as Unmapped).event;
    if (isObject(e) && TERMINAL.has(String(e.type)) && isObject(e.response)) return e.response;
  }
  return undefined;
}
