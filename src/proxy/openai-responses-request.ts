// OpenAI Responses requests (`instructions`, `input` items, `tools`) in neutral form.
import type { ContentBlock } from "../generated.js";
import { isObject } from "./openai-chat-request.js";
import type { NeutralMessage, NeutralRequest } from "./types.js";

/** Request members that are not `params`: the fingerprint keeps them apart or not at all. */
const NOT_PARAMS = new Set(["model", "input", "instructions", "tools", "stream", "stream_options"]);

/** Text blocks of an item's `content` or a tool output: a string or content parts. */
function contentBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part): ContentBlock => {
    if (isObject(part)) {
      const text = part.type === "refusal" ? part.refusal : part.text;
      const textual = ["input_text", "output_text", "text", "refusal"].includes(String(part.type));
      if (textual && typeof text === "string") return { type: "text", text };
    }
    // An image, file or audio part has no content block kind: its JSON stands in for it.
    return { type: "text", text: JSON.stringify(part) };
  });
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/**
 * One input item as a neutral message: a message keeps its role; a function or custom tool call
 * is an assistant message with that tool call; a tool output is a `tool` message answering its
 * `call_id`; any other item (reasoning, web search call, item reference) is an assistant message
 * whose text is the item's JSON, so that it still takes part in matching.
 */
function neutralItem(item: unknown): NeutralMessage | undefined {
  if (!isObject(item)) return undefined;
  const type = item.type ?? "message";
  if (type === "message") {
    if (typeof item.role !== "string") return undefined;
    return { role: item.role, content: contentBlocks(item.content) };
  }
  if (type === "function_call" || type === "custom_tool_call") {
    const args = type === "function_call" ? item.arguments : item.input;
    return {
      role: "assistant",
      content: [],
      toolCalls: [{ id: str(item.call_id), name: str(item.name), arguments: str(args) }],
    };
  }
  if (type === "function_call_output" || type === "custom_tool_call_output") {
    return { role: "tool", content: contentBlocks(item.output), toolCallId: str(item.call_id) };
  }
  return { role: "assistant", content: [{ type: "text", text: JSON.stringify(item) }] };
}

/** The neutral form of a request body, or undefined for a body that is no Responses request. */
export function parseRequest(body: unknown): NeutralRequest | undefined {
  if (!isObject(body) || typeof body.model !== "string") return undefined;
  const messages: NeutralMessage[] = [];
  if (typeof body.instructions === "string" && body.instructions !== "") {
    messages.push({ role: "system", content: [{ type: "text", text: body.instructions }] });
  }
  if (typeof body.input === "string") {
    messages.push({ role: "user", content: contentBlocks(body.input) });
  } else if (Array.isArray(body.input)) {
    for (const item of body.input) {
      const neutral = neutralItem(item);
      if (neutral === undefined) return undefined;
      messages.push(neutral);
    }
  } else {
    return undefined;
  }
  const tools = Array.isArray(body.tools)
    ? body.tools.map((tool) => {
        const name = isObject(tool) ? (tool.name ?? tool.type) : "";
        return { name: typeof name === "string" ? name : "", definition: tool };
      })
    : [];
  const params = Object.fromEntries(Object.entries(body).filter(([k]) => !NOT_PARAMS.has(k)));
  return { model: body.model, stream: body.stream === true, params, messages, tools };
}
