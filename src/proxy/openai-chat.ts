// The OpenAI Chat Completions adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import { mapJson, streamMapper } from "./openai-chat-map.js";
import { errorAnswer, renderJson, renderStream } from "./openai-chat-render.js";
import { errorOfBody, parseRequest } from "./openai-chat-request.js";
import type { ProviderAdapter, RenderedAnswer } from "./types.js";

/** OpenAI Chat Completions (`POST /v1/chat/completions`), streamed (SSE) and not. */
export const openaiChat: ProviderAdapter = {
  api: "openai-chat",
  parseRequest,
  streamMapper,
  mapJson,
  errorOf: (status, body) =>
    errorOfBody(body) ?? { message: `the upstream answered ${status}`, code: String(status) },
  render(call, stream): RenderedAnswer {
    const status = call.end?.response?.status;
    if (status !== undefined && status >= 400) {
      return {
        status,
        contentType: "application/json",
        body: JSON.stringify(
          call.end?.response?.error ?? { error: { message: call.error?.message } },
        ),
      };
    }
    if (status === undefined && call.error !== undefined) {
      return errorAnswer(502, call.error.message, call.error.code ?? "upstream_failed");
    }
    return stream
      ? { status: 200, contentType: "text/event-stream", body: renderStream(call) }
      : { status: 200, contentType: "application/json", body: renderJson(call) };
  },
  errorAnswer,
};
