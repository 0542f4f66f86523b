// What every adapter does alike: an upstream error's words, a recorded call that failed before a response could be rendered, a streamed answer; and an adapter made of its API's parts.
import { errorOfBody } from "./openai-chat-request.js";
import type { ProviderAdapter, RecordedCall, RenderedAnswer, StreamMapper } from "./types.js";

/**
 * An upstream's error as its body says it (`{error: {message, code | type}}`, the form of both
 * OpenAI's APIs and Anthropic's), else its status.
 */
export function upstreamError(
  status: number,
  body: unknown,
): { readonly message: string; readonly code?: string } {
  return errorOfBody(body) ?? { message: `the upstream answered ${status}`, code: String(status) };
}

/**
 * The answer replay gives a recorded call that did not succeed, before any rendering of a
 * response: the upstream's own status and error body when it answered one (else `errorBody`, in
 * the API's format), a 502 when the call failed without a status (unreachable, broken off before
 * the head); undefined for a call the adapter renders.
 */
export function recordedFailure(
  call: RecordedCall,
  errorAnswer: ProviderAdapter["errorAnswer"],
  errorBody: () => unknown,
): RenderedAnswer | undefined {
  const status = call.end?.response?.status;
  if (status !== undefined && status >= 400) {
    return {
      status,
      contentType: "application/json",
      body: JSON.stringify(call.end?.response?.error ?? errorBody()),
    };
  }
  if (status === undefined && call.error !== undefined) {
    return errorAnswer(502, call.error.message, call.error.code ?? "upstream_failed");
  }
  return undefined;
}

/** What makes the adapter of one API (see {@link providerAdapter}). */
export interface AdapterParts {
  readonly api: string;
  readonly parseRequest: ProviderAdapter["parseRequest"];
  readonly streamMapper: () => StreamMapper;
  readonly mapJson: ProviderAdapter["mapJson"];
  readonly errorAnswer: ProviderAdapter["errorAnswer"];
  /** The error body, in the API's format, of a failed call the upstream answered with a status but no body. */
  readonly failureBody: (call: RecordedCall) => unknown;
  /** A recorded call as the API streams it (the SSE text). */
  readonly renderStream: (call: RecordedCall) => string;
  /** A recorded call as the API answers it not streamed. */
  readonly renderWhole: (call: RecordedCall) => RenderedAnswer;
}

/**
 * An adapter from its API's parts: the upstream's errors read alike, a recorded call that failed
 * answered as {@link recordedFailure} says, any other call rendered streamed or whole.
 */
export function providerAdapter(parts: AdapterParts): ProviderAdapter {
  return {
    api: parts.api,
    parseRequest: parts.parseRequest,
    streamMapper: parts.streamMapper,
    mapJson: parts.mapJson,
    errorOf: upstreamError,
    render(call, stream) {
      const failure = recordedFailure(call, parts.errorAnswer, () => parts.failureBody(call));
      if (failure !== undefined) return failure;
      return stream
        ? { status: 200, contentType: "text/event-stream", body: parts.renderStream(call) }
        : parts.renderWhole(call);
    },
    errorAnswer: parts.errorAnswer,
  };
}

/** A JSON answer of status 200. */
export function jsonAnswer(body: string): RenderedAnswer {
  return { status: 200, contentType: "application/json", body };
}
