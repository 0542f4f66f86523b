// The OpenAI Responses adapter: requests to neutral form, named SSE events and JSON responses to stream chunks, and back.
import { errorAnswer, openaiErrors } from "./openai-chat-render.js";
import { mapJson, streamMapper } from "./openai-responses-map.js";
import { finalResponse, renderStream } from "./openai-responses-render.js";
import { parseRequest } from "./openai-responses-request.js";
import { jsonAnswer, providerAdapter } from "./recorded-failure.js";

/** OpenAI Responses (`POST /v1/responses`), streamed (named SSE events) and not. */
export const openaiResponses = providerAdapter({
  api: "openai-responses",
  parseRequest,
  streamMapper,
  mapJson,
  ...openaiErrors,
  renderStream,
  renderWhole(call) {
    const response = finalResponse(call);
    // Not streamed, the API answers a failed response as its error; a stream that broke off has no body.
    if (response === undefined || call.error !== undefined) {
      const message = call.error?.message ?? "the recorded response has no final response object";
      return errorAnswer(502, message, call.error?.code ?? "upstream_failed");
    }
    return jsonAnswer(JSON.stringify(response));
  },
});
