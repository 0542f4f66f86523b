// OpenAI Chat Completions requests in neutral form, and the provider's error bodies.
import type { ContentBlock } from "../generated.js";
import type { NeutralMessage, NeutralRequest } from "./types.js";

export type Json = Record<string, unknown>;

/** Request members that are not `params`: the fingerprint keeps them apart or not at all. */
const NOT_PARAMS = new Set(["model", "messages", "tools", "stream", "stream_options"]);
export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Text blocks of a message's `content`: a string, content parts, or null. */
function contentBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part): ContentBlock => {
    if (isObject(part) && (part.type === "text" || part.type === "refusal")) {
      const text = part.type === "text" ? part.text : part.refusal;
      if (typeof text === "string") return { type: "text", text };
    }
    // An image or audio part has no content block kind: its JSON stands in for it.
    return { type: "text", text: JSON.stringify(part) };
  });
}

function neutralMessage(message: unknown): NeutralMessage | undefined {
  if (!isObject(message) || typeof message.role !== "string") return undefined;
  const toolCalls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call) => {
        const fn = isObject(call) && isObject(call.function) ? call.function : {};
        return {
          id: isObject(call) && typeof call.id === "string" ? call.id : "",
          name: typeof fn.name === "string" ? fn.name : "",
          arguments: typeof fn.arguments === "string" ? fn.arguments : "",
        };
      })
    : [];
  return {
    role: message.role,
    content: contentBlocks(message.content),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    ...(typeof message.tool_call_id === "string" ? { toolCallId: message.tool_call_id } : {}),
  };
}

/** The neutral form of a request body, or undefined for a body that is no chat completion request. */
export function parseRequest(body: unknown): NeutralRequest | undefined {
  if (!isObject(body) || typeof body.model !== "string" || !Array.isArray(body.messages)) {
    return undefined;
  }
  const messages: NeutralMessage[] = [];
  for (const m of body.messages) {
    const neutral = neutralMessage(m);
    if (neutral === undefined) return undefined;
    messages.push(neutral);
  }
  const tools = Array.isArray(body.tools)
    ? body.tools.map((tool) => {
        const fn = isObject(tool) && isObject(tool.function) ? tool.function : {};
        const name = typeof fn.name === "string" ? fn.name : isObject(tool) ? tool.type : "";
        return { name: typeof name === "string" ? name : "", definition: tool };
      })
    : [];
  const params = Object.fromEntries(Object.entries(body).filter(([k]) => !NOT_PARAMS.has(k)));
  return { model: body.model, stream: body.stream === true, params, messages, tools };
}

/** The message and code of an `{error: {message, code | type}}` body. */
export function errorOfBody(body: unknown): { message: string; code?: string } | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const e = body.error;
  const message = typeof e.message === "string" ? e.message : JSON.stringify(e);
  const code =
    typeof e.code === "string" ? e.code : typeof e.type === "string" ? e.type : undefined;
  return { message, ...(code === undefined ? {} : { code }) };
}
