// Anthropic Messages requests in neutral form: the top-level system, content blocks, tool_use and tool_result.
import type { ContentBlock } from "../generated.js";
import { isObject, type Json } from "./openai-chat-request.js";
import type { NeutralMessage, NeutralRequest, NeutralToolCall } from "./types.js";

/** Request members that are not `params`: the fingerprint keeps them apart or not at all. */
const NOT_PARAMS = new Set(["model", "messages", "system", "tools", "stream"]);

/** A block with no content block kind stands as its JSON, so its digest still sees all of it. */
function blockOf(block: unknown): ContentBlock {
  if (isObject(block)) {
    if (block.type === "text" && typeof block.text === "string") {
      return { type: "text", text: block.text };
    }
    if (block.type === "thinking" && typeof block.thinking === "string") {
      return { type: "reasoning", text: block.thinking };
    }
  }
  return { type: "text", text: typeof block === "string" ? block : JSON.stringify(block) };
}

function blocksOf(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(blockOf) : [];
}

/**
 * One request message as neutral messages: an assistant's `tool_use` blocks become its tool
 * calls; a user message's `tool_result` blocks become one tool message each (before what else the
 * message says, which stays a user message).
 */
function neutralMessages(message: unknown): NeutralMessage[] | undefined {
  if (!isObject(message) || typeof message.role !== "string") return undefined;
  const parts = typeof message.content === "string" ? [message.content] : message.content;
  if (!Array.isArray(parts)) return undefined;
  if (message.role === "assistant") {
    const toolCalls: NeutralToolCall[] = [];
    const content: ContentBlock[] = [];
    for (const part of parts) {
      if (isObject(part) && part.type === "tool_use") {
        toolCalls.push({
          id: typeof part.id === "string" ? part.id : "",
          name: typeof part.name === "string" ? part.name : "",
          arguments: JSON.stringify(part.input ?? {}),
        });
      } else content.push(blockOf(part));
    }
    return [{ role: "assistant", content, ...(toolCalls.length === 0 ? {} : { toolCalls }) }];
  }
  const out: NeutralMessage[] = [];
  const rest: unknown[] = [];
  for (const part of parts) {
    if (isObject(part) && part.type === "tool_result" && typeof part.tool_use_id === "string") {
      out.push({
        role: "tool",
        toolCallId: part.tool_use_id,
        content: blocksOf(part.content),
        ...(part.is_error === true ? { isError: true } : {}),
      });
    } else rest.push(part);
  }
  if (rest.length > 0 || out.length === 0)
    out.push({ role: message.role, content: blocksOf(rest) });
  return out;
}

/** The neutral form of a request body, or undefined for a body that is no Messages request. */
export function parseRequest(body: unknown): NeutralRequest | undefined {
  if (!isObject(body) || typeof body.model !== "string" || !Array.isArray(body.messages)) {
    return undefined;
  }
  const messages: NeutralMessage[] = [];
  // The top-level `system` is the conversation's leading system message.
  const system = blocksOf(body.system);
  if (system.length > 0) messages.push({ role: "system", content: system });
  for (const m of body.messages) {
    const neutral = neutralMessages(m);
    if (neutral === undefined) return undefined;
    messages.push(...neutral);
  }
  const tools = Array.isArray(body.tools)
    ? body.tools.map((tool) => {
        const name = isObject(tool) ? (tool.name ?? tool.type) : "";
        return { name: typeof name === "string" ? name : "", definition: tool };
      })
    : [];
  const params: Json = Object.fromEntries(Object.entries(body).filter(([k]) => !NOT_PARAMS.has(k)));
  return { model: body.model, stream: body.stream === true, params, messages, tools };
}
