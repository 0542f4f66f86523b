// The OpenAI Chat Completions adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import { mapJson, streamMapper } from "./openai-chat-map.js";
import { errorAnswer, renderJson, renderStream } from "./openai-chat-render.js";
import { parseRequest } from "./openai-chat-request.js";
import { recordedFailure, upstreamError } from "./recorded-failure.js";
import type { ProviderAdapter, RenderedAnswer } from "./types.js";

/** OpenAI Chat Completions (`POST /v1/chat/completions`), streamed (SSE) and not. */
export const openaiChat: ProviderAdapter = {
  api: "openai-chat",
  parseRequest,
  streamMapper,
  mapJson,
  errorOf: upstreamError,
  render(call, stream): RenderedAnswer {
    const failure = recordedFailure(call, errorAnswer, () => ({
      error: { message: call.error?.message },
    }));
    if (failure !== undefined) return failure;
    return stream
      ? { status: 200, contentType: "text/event-stream", body: renderStream(call) }
      : { status: 200, contentType: "application/json", body: renderJson(call) };
  },
  errorAnswer,
};
