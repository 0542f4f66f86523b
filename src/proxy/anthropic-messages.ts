// The Anthropic Messages adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import { mapJson, streamMapper } from "./anthropic-messages-map.js";
import { errorAnswer, renderJson, renderStream } from "./anthropic-messages-render.js";
import { parseRequest } from "./anthropic-messages-request.js";
import { jsonAnswer, providerAdapter } from "./recorded-failure.js";

/** The HTTP status Anthropic answers each error type with. */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** Anthropic Messages (`POST /v1/messages`), streamed (SSE with named events) and not. */
export const anthropicMessages = providerAdapter({
  api: "anthropic-messages",
  parseRequest,
  streamMapper,
  mapJson,
  errorAnswer,
  // `{type: "error", error: {type, message}}`: the error's type is its code.
  failureBody: (call) => ({
    type: "error",
    error: { type: call.error?.code ?? "api_error", message: call.error?.message },
  }),
  renderStream,
  renderWhole(call) {
    if (call.error !== undefined) {
      // A stream the API broke off with an error event: not streamed, the API answers that error.
      const code = call.error.code ?? "api_error";
      return errorAnswer(ERROR_STATUS[code] ?? 500, call.error.message, code);
    }
    return jsonAnswer(renderJson(call));
  },
});
