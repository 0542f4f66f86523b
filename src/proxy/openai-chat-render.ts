// Recorded Chat Completions calls rendered back as the API answers: SSE chunks or one JSON body.
import type { ModelResponse } from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";
import { isObject, type Json } from "./openai-chat-request.js";
import { sseText } from "./sse.js";
import type { RecordedCall, RenderedAnswer } from "./types.js";

type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

/** The recorded response envelope (`ModelResponse.meta`), empty for a step recorded without one. */
function metaOf(call: RecordedCall): Json {
  return (call.end?.response?.meta ?? {}) as Json;
}

/** The response envelope replay answers with: as recorded, or made up from the step's place. */
function envelopeOf(call: RecordedCall, object: string): Json {
  const meta = metaOf(call);
  return {
    id: meta.id ?? `chatcmpl-seedline-${call.start.turn}-${call.start.step}`,
    object,
    created: meta.created ?? 0,
    model: meta.model ?? call.start.request?.model ?? "",
    ...(meta.service_tier === undefined ? {} : { service_tier: meta.service_tier }),
    ...(meta.system_fingerprint === undefined
      ? {}
      : { system_fingerprint: meta.system_fingerprint }),
  };
}

function finishReasonOf(call: RecordedCall): unknown {
  const raw = metaOf(call).finish_reason;
  if (raw !== undefined) return raw;
  const finish = call.chunks.find((c) => c.type === "finish");
  if (finish?.type !== "finish") return null;
  const names: Record<string, string> = { "tool-calls": "tool_calls", "max-tokens": "length" };
  return names[finish.reason.kind] ?? "stop";
}

function usageJson(call: RecordedCall): Json | undefined {
  const raw = metaOf(call).usage;
  if (isObject(raw)) return raw;
  const chunk = [...call.chunks].reverse().find((c) => c.type === "usage");
  if (chunk?.type !== "usage") return undefined;
  const u = chunk.usage;
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

/** The call as one `chat.completion` body. */
export function renderJson(call: RecordedCall): string {
  const blocks = assembleMessage(call.chunks);
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  const reasoning = blocks.flatMap((b) => (b.type === "reasoning" ? [b.text] : [])).join("");
  const calls = blocks.flatMap((b) =>
    b.type === "tool-call"
      ? [{ id: b.id, type: "function", function: { name: b.name, arguments: b.arguments } }]
      : [],
  );
  const field = metaOf(call).reasoning_field;
  const message: Json = {
    role: "assistant",
    content: text === "" && calls.length > 0 ? null : text,
    ...(reasoning === ""
      ? {}
      : { [typeof field === "string" ? field : "reasoning_content"]: reasoning }),
    refusal: null,
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  };
  for (const kept of call.end?.response?.unmapped ?? []) {
    const e = kept.event;
    if (isObject(e) && e.choice === 0 && isObject(e.delta)) Object.assign(message, e.delta);
  }
  const usage = usageJson(call);
  return JSON.stringify({
    ...envelopeOf(call, "chat.completion"),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(call) }],
    ...(usage === undefined ? {} : { usage }),
  });
}

/** The call as the SSE body of a streamed answer. */
export function renderStream(call: RecordedCall): string {
  const envelope = envelopeOf(call, "chat.completion.chunk");
  const out: string[] = [];
  const send = (choices: unknown[], extra: Json = {}) =>
    out.push(sseText(JSON.stringify({ ...envelope, choices, ...extra })));
  const delta = (d: Json, finish: unknown = null) =>
    send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const kept = [...(call.end?.response?.unmapped ?? [])];
  const flushKept = (at: number) => {
    while (kept.length > 0 && (kept[0] as Unmapped).at <= at) {
      const e = (kept.shift() as Unmapped).event;
      if (!isObject(e)) continue;
      if (isObject(e.choice)) send([e.choice]);
      else if (typeof e.choice === "number") {
        send([
          {
            index: e.choice,
            delta: isObject(e.delta) ? e.delta : {},
            logprobs: e.logprobs ?? null,
            finish_reason: null,
          },
        ]);
      } else if (isObject(e.error)) {
        const { sseEvent, ...body } = e;
        out.push(
          sseText(JSON.stringify(body), typeof sseEvent === "string" ? sseEvent : undefined),
        );
      } else if (isObject(e.extra)) send([], e.extra);
    }
  };
  const field = metaOf(call).reasoning_field;
  const reasoningKey = typeof field === "string" ? field : "reasoning_content";
  const toolOrdinal = new Map<number, number>();
  delta({ role: "assistant", content: "", refusal: null });
  call.chunks.forEach((chunk, i) => {
    flushKept(i);
    switch (chunk.type) {
      case "text-delta":
        delta({ content: chunk.text });
        break;
      case "reasoning-delta":
        delta({ [reasoningKey]: chunk.text });
        break;
      case "tool-call-delta": {
        let ordinal = toolOrdinal.get(chunk.index);
        const first = ordinal === undefined;
        if (ordinal === undefined) {
          ordinal = toolOrdinal.size;
          toolOrdinal.set(chunk.index, ordinal);
        }
        const fn = first
          ? { name: chunk.name ?? "", arguments: chunk.argumentsDelta }
          : { arguments: chunk.argumentsDelta };
        delta({
          tool_calls: [
            { index: ordinal, ...(first ? { id: chunk.id, type: "function" } : {}), function: fn },
          ],
        });
        break;
      }
      case "finish":
        delta({}, finishReasonOf(call));
        break;
      default:
        break;
    }
  });
  flushKept(Number.MAX_SAFE_INTEGER);
  const usage = usageJson(call);
  if (usage !== undefined) send([], { usage });
  // A stream the provider broke off with an error ends without [DONE], as it did then.
  if (call.error === undefined) out.push("data: [DONE]\n\n");
  else if (!out.some((e) => e.includes('"error"'))) {
    out.push(
      sseText(
        JSON.stringify({ error: { message: call.error.message, code: call.error.code ?? null } }),
      ),
    );
  }
  return out.join("");
}

/** An error of the proxy's own in OpenAI's error format. */
export function errorAnswer(status: number, message: string, code: string): RenderedAnswer {
  return {
    status,
    contentType: "application/json",
    body: JSON.stringify({ error: { message, type: "seedline_proxy", param: null, code } }),
  };
}

/** How both OpenAI APIs answer errors: the proxy's own, and a recorded failure that kept no body. */
export const openaiErrors = {
  errorAnswer,
  failureBody: (call: RecordedCall): unknown => ({ error: { message: call.error?.message } }),
};
