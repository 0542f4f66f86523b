// The shapes a model proxy works with: provider-neutral requests, recorded calls and the adapter seam (types only).
import type {
  ContentBlock,
  ModelRequest,
  ModelResponse,
  StepEndData,
  StepStartData,
  StreamChunk,
  TurnEndReason,
} from "../generated.js";

/**
 * Whether calls are recorded against the upstream, answered from the recording, or answered from
 * the recording until the first call that differs, then recorded live into a fork (`auto`).
 */
export type ProxyMode = "record" | "replay" | "auto";

/** A tool call an assistant message of a request carries. */
export interface NeutralToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/**
 * One message of a request in a provider-neutral form: what replay matching digests and what
 * turn inference reads. Its digest must not change when the same message comes through another
 * rendering of the same response (a `null` content and an empty one are the same message).
 */
export interface NeutralMessage {
  /** `system`, `developer`, `user`, `assistant` or `tool`. */
  readonly role: string;
  readonly content: readonly ContentBlock[];
  /** The tool calls of an assistant message. */
  readonly toolCalls?: readonly NeutralToolCall[];
  /** The call a tool message answers. */
  readonly toolCallId?: string;
  /** A tool message whose result the agent marked as an error (Anthropic's `is_error`). */
  readonly isError?: boolean;
}

/** A tool the request offers: its name and whole definition (digested, never stored whole). */
export interface NeutralTool {
  readonly name: string;
  readonly definition: unknown;
}

/** A request as an adapter parsed it. */
export interface NeutralRequest {
  readonly model: string;
  readonly stream: boolean;
  /** Every other parameter, as sent (see {@link ModelRequest}). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly messages: readonly NeutralMessage[];
  readonly tools: readonly NeutralTool[];
}

/** What a provider's response said, mapped: chunks for the log, the rest kept as it came. */
export interface MappedResponse {
  readonly chunks: readonly StreamChunk[];
  readonly meta: Readonly<Record<string, unknown>>;
  readonly unmapped: NonNullable<ModelResponse["unmapped"]>;
  /** Whether the provider said the call finished (a finish chunk is among `chunks`). */
  readonly finished: boolean;
  /** An error the provider reported inside a successful response (an SSE error event). */
  readonly error?: { readonly message: string; readonly code?: string };
}

/** Maps a provider's SSE events, one at a time, as they stream. */
export interface StreamMapper {
  /** Takes one SSE event (its `event:` name, if any, and its `data:` text). */
  event(name: string | undefined, data: string): void;
  /** What the events said; block ends and the finish chunk are settled here. */
  end(): MappedResponse;
}

/** A call as the log recorded it: one step. */
export interface RecordedCall {
  /** Its step/start's data; `request` is absent for a step recorded by something other than a proxy (it is then not matched). */
  readonly start: StepStartData;
  readonly chunks: readonly StreamChunk[];
  /** Its step/end's data, if the step ended. */
  readonly end: StepEndData | undefined;
  /** The turn's error when it ended in this step with one. */
  readonly error: Extract<TurnEndReason, { kind: "error" }> | undefined;
}

/** An answer rendered in a provider's format. */
export interface RenderedAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/**
 * What the core needs of one provider API. The core never looks inside provider JSON; a new API
 * is a new adapter and a route, nothing else.
 */
export interface ProviderAdapter {
  /** The API's name as the log stores it (`ModelRequest.api`), e.g. `openai-chat`. */
  readonly api: string;
  /**
   * The request in neutral form.
   * @returns undefined for a body this API would not accept as a model call (not recorded).
   */
  parseRequest(body: unknown): NeutralRequest | undefined;
  /** A mapper for the SSE events of a streamed response. */
  streamMapper(): StreamMapper;
  /** The mapping of a whole (non-streamed) JSON response body. */
  mapJson(body: unknown): MappedResponse;
  /** The provider's error message and code in an error body, for the turn's end. */
  errorOf(status: number, body: unknown): { readonly message: string; readonly code?: string };
  /** A recorded call rendered back as this API answers it, streamed (SSE) or not. */
  render(call: RecordedCall, stream: boolean): RenderedAnswer;
  /** An error answer of the proxy's own in this API's error format. */
  errorAnswer(status: number, message: string, code: string): RenderedAnswer;
}
