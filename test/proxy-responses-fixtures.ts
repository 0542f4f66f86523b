// The real captured OpenAI Responses bodies for proxy tests: SSE as the API streamed it, and the JSON the API answers without streaming.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OPENAI_SSE } from "./proxy-harness.js";

/** The AI SDK's captured Responses streams: one JSON payload a line, without SSE framing. */
const AI_SDK = join(OPENAI_SSE, "..", "ai-sdk");

/** Whether the Responses captures are there (CI checks them out beside the repository). */
export const HAVE_RESPONSES =
  existsSync(join(OPENAI_SSE, "responses_text_stream.sse")) &&
  existsSync(join(AI_SDK, "responses-openai-custom-tool.1.chunks.txt"));

/** A pydantic-ai capture (raw SSE with named events), by file name. */
export function responsesSse(name: string): string {
  return readFileSync(join(OPENAI_SSE, name), "utf8");
}

/**
 * An AI SDK capture re-framed as the API sends it: each payload an SSE event named by its
 * `type`. A file holding several responses (a multi-step run) gives one body per response.
 */
export function aiSdkResponses(name: string): string[] {
  const bodies: string[] = [];
  for (const line of readFileSync(join(AI_SDK, name), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const type = (JSON.parse(line) as { type: string }).type;
    if (type === "response.created" || bodies.length === 0) bodies.push("");
    bodies[bodies.length - 1] += `event: ${type}\ndata: ${line}\n\n`;
  }
  return bodies;
}

/** The response object a streamed body ends with: what the API answers when not streaming. */
export function finalOf(sse: string): unknown {
  const payloads = sse
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: unknown });
  const last = payloads.findLast((p) =>
    ["response.completed", "response.incomplete", "response.failed"].includes(p.type),
  );
  return last?.response;
}
