// What every adapter answers alike: an upstream error's words, and a recorded call that failed before a response could be rendered.
import { errorOfBody } from "./openai-chat-request.js";
import type { ProviderAdapter, RecordedCall, RenderedAnswer } from "./types.js";

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
