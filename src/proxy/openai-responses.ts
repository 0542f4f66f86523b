// The OpenAI Responses adapter: requests to neutral form, named SSE events and JSON responses to stream chunks, and back.
import { errorAnswer } from "./openai-chat-render.js";
import { errorOfBody } from "./openai-chat-request.js";
import { mapJson, streamMapper } from "./openai-responses-map.js";
import { finalResponse, renderStream } from "./openai-responses-render.js";
import { parseRequest } from "./openai-responses-request.js";
import type { ProviderAdapter, RenderedAnswer } from "./types.js";

/** OpenAI Responses (`POST /v1/responses`), streamed (named SSE events) and not. */
export const openaiResponses: ProviderAdapter = {
  api: "openai-responses",
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
