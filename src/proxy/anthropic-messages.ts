// The Anthropic Messages adapter: requests to neutral form, SSE and JSON responses to stream chunks, and back.
import { mapJson, streamMapper } from "./anthropic-messages-map.js";
import { errorAnswer, renderJson, renderStream } from "./anthropic-messages-render.js";
import { parseRequest } from "./anthropic-messages-request.js";
import { recordedFailure, upstreamError } from "./recorded-failure.js";
import type { ProviderAdapter, RenderedAnswer } from "./types.js";

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
export const anthropicMessages: ProviderAdapter = {
  api: "anthropic-messages",
  parseRequest,
  streamMapper,
  mapJson,
  // `{type: "error", error: {type, message}}`: the error's type is its code.
  errorOf: upstreamError,
  render(call, stream): RenderedAnswer {
    const failure = recordedFailure(call, errorAnswer, () => ({
      type: "error",
      error: { type: call.error?.code ?? "api_error", message: call.error?.message },
    }));
    if (failure !== undefined) return failure;
    if (!stream && call.error !== undefined) {
      // A stream the API broke off with an error event: not streamed, the API answers that error.
      const code = call.error.code ?? "api_error";
      return errorAnswer(ERROR_STATUS[code] ?? 500, call.error.message, code);
    }
    return stream
      ? { status: 200, contentType: "text/event-stream", body: renderStream(call) }
      : { status: 200, contentType: "application/json", body: renderJson(call) };
  },
  errorAnswer,
};
