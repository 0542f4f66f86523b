// Turn inference: the recorder ops a model request implies before its own step, read from the request alone.
import type {
  ContentBlock,
  ModelRequest,
  ModelResponse,
  RecordOp,
  SessionRecordResult,
} from "../generated.js";
import type { NeutralMessage, NeutralRequest } from "./types.js";

/** The error a tool call gets when the next request carried no result for it. */
export const UNANSWERED = { name: "UnansweredToolCall", code: "unanswered" } as const;

const UNANSWERED_TEXT = "unanswered: the agent's next request carried no result for this tool call";

/**
 * Closes the open step: a `tool_result` per pending call (from `results` where the agent sent
 * one, else an {@link UNANSWERED} error result), then `step_end` with the call's response.
 */
export function closeStepOps(
  state: SessionRecordResult,
  results: ReadonlyMap<string, NeutralMessage>,
  response: ModelResponse | undefined,
): RecordOp[] {
  if (state.step === undefined) return [];
  const ops: RecordOp[] = state.pendingToolCalls.map(({ callId }) => {
    const result = results.get(callId);
    return result === undefined
      ? {
          op: "tool_result",
          callId,
          content: UNANSWERED_TEXT,
          isError: true,
          error: { ...UNANSWERED },
        }
      : {
          op: "tool_result",
          callId,
          content: [...result.content],
          ...(result.isError === true ? { isError: true } : {}),
        };
  });
  ops.push({ op: "step_end", ...(response === undefined ? {} : { response }) });
  return ops;
}

/**
 * The ops before a request's step: the open step closed with the tool results the request
 * carries (a tool message after its last assistant message), the open turn ended and a new one
 * started when the newest message is a user message the previous request did not end with, a
 * turn started anyway when none is open, then `step_start` with the request's fingerprint.
 */
export function opsBeforeCall(
  state: SessionRecordResult | undefined,
  previous: ModelRequest | undefined,
  request: NeutralRequest,
  fingerprint: ModelRequest,
  pendingResponse: ModelResponse | undefined,
): RecordOp[] {
  const ops: RecordOp[] = [];
  if (state !== undefined) ops.push(...closeStepOps(state, toolResults(request), pendingResponse));
  const messages = request.messages;
  const newest = messages[messages.length - 1];
  let turnOpen = state?.turn !== undefined;
  if (newest?.role === "user" && isNewMessage(previous, fingerprint)) {
    if (turnOpen) ops.push({ op: "turn_end" });
    ops.push({ op: "turn_start", prompt: [...newest.content] });
    turnOpen = true;
  }
  if (!turnOpen) ops.push({ op: "turn_start", prompt: lastUserContent(messages) });
  ops.push({ op: "step_start", request: fingerprint });
  return ops;
}

/** Whether the request's newest message is not the one the previous request ended with. */
function isNewMessage(previous: ModelRequest | undefined, got: ModelRequest): boolean {
  if (previous === undefined) return true;
  const last = got.messages.length - 1;
  return (
    previous.messages.length !== got.messages.length ||
    previous.messages[last]?.digest !== got.messages[last]?.digest
  );
}

/** The tool messages after the request's last assistant message, by the call they answer. */
function toolResults(request: NeutralRequest): Map<string, NeutralMessage> {
  const results = new Map<string, NeutralMessage>();
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i] as NeutralMessage;
    if (message.role === "assistant") break;
    if (message.toolCallId !== undefined && !results.has(message.toolCallId)) {
      results.set(message.toolCallId, message);
    }
  }
  return results;
}

function lastUserContent(messages: readonly NeutralMessage[]): ContentBlock[] {
  const user = messages.findLast((m) => m.role === "user");
  return user === undefined ? [] : [...user.content];
}
