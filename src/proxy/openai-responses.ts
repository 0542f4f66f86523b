// The OpenAI Responses adapter: requests to neutral form, named SSE events and JSON responses to stream chunks, and back.
import { errorAnswer } from "./openai-chat-render.js";
import { mapJson, streamMapper } from "./openai-responses-map.js";
import { finalResponse, renderStream } from "./openai-responses-render.js";
import { parseRequest } from "./openai-responses-request.js";
import { recordedFailure, upstreamError } from "./recorded-failure.js";
import type { ProviderAdapter, RenderedAnswer } from "./types.js";

/** OpenAI Responses (`POST /v1/responses`), streamed (named SSE events) and not. */
export const openaiResponses: ProviderAdapter = {
  api: "openai-responses",
  parseRequest,
  streamMapper,
  mapJson,
  errorOf: upstreamError,
  render(call, stream): RenderedAnswer {
    const failure = recordedFailure(call, errorAnswer, () => ({
      error: { message: call.error?.message },
    }));
    if (failure !== undefined) return failure;
    if (stream) return { status: 200, contentType: "text/event-stream", body: renderStream(call) };
    const response = finalResponse(call);
    // Not streamed, the API answers a failed response as its error; a stream that broke off has no body.
    if (response === undefined || call.error !== undefined) {
      const message = call.error?.message ?? "the recorded response has no final response object";
      return errorAnswer(502, message, call.error?.code ?? "upstream_failed");
    }
    return { status: 200, contentType: "application/json", body: JSON.stringify(response) };
  },
  errorAnswer,
};
