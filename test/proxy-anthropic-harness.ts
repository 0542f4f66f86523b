// A fake Anthropic upstream for proxy tests: node:http on 127.0.0.1 serving the real captured Messages bodies.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** The real captured Anthropic bodies (read where they are; never copied into the repository). */
export const ANTHROPIC_SSE = join(
  import.meta.dirname,
  "..",
  "..",
  "shared",
  "fixtures-real",
  "anthropic-sse",
);

/** Whether the captured bodies are there (CI checks them out beside the repository). */
export const HAVE_ANTHROPIC_FIXTURES = existsSync(
  join(ANTHROPIC_SSE, "pydantic-ai", "thinking_part_stream.sse"),
);

/**
 * One captured body as SSE, by its path below `anthropic-sse/`. A `*.chunks.txt` (one JSON data
 * payload per line, the framing stripped when it was captured) is framed again as the API sends
 * it: each payload an event named by its `type`.
 */
export function anthropicSse(name: string): string {
  const text = readFileSync(join(ANTHROPIC_SSE, name), "utf8");
  if (!name.endsWith(".chunks.txt")) return text;
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
    .join("");
}

/** What the fake upstream answers to one call. */
export type AnthropicAnswer =
  | { readonly sse: string }
  | { readonly status: number; readonly json: unknown };

export interface SeenRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface FakeAnthropic {
  /** `http://127.0.0.1:PORT`: an Anthropic base URL (the SDK adds `/v1/messages`). */
  readonly baseUrl: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Starts a fake Anthropic API answering `POST /v1/messages` with `answers` in order: an SSE body
 * as the real API streamed it (in several pieces), or, when the caller did not ask to stream, the
 * same response folded into the one JSON message the API answers then.
 */
export async function startFakeAnthropic(
  answers: readonly AnthropicAnswer[],
): Promise<FakeAnthropic> {
  const queue = [...answers];
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
      seen.push({ url: req.url ?? "", headers: req.headers, body });
      const answer = (req.url ?? "").split("?")[0] === "/v1/messages" ? queue.shift() : undefined;
      if (answer === undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            type: "error",
            error: { type: "not_found_error", message: "no answer" },
          }),
        );
      } else if ("status" in answer) {
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer.json));
      } else if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(foldMessages(answer.sse)));
      } else {
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
        void writeInPieces(res, answer.sse);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function writeInPieces(res: import("node:http").ServerResponse, text: string): Promise<void> {
  const size = Math.ceil(text.length / 5);
  for (let at = 0; at < text.length; at += size) {
    res.write(text.slice(at, at + size));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

type Json = Record<string, unknown>;

/** A Messages SSE body folded into the JSON message the API answers without streaming. */
export function foldMessages(body: string): Json {
  const events = body
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)) as Json);
  let message: Json = {};
  const content: Json[] = [];
  const json = new Map<number, string>();
  for (const event of events) {
    const index = event.index as number;
    if (event.type === "message_start") message = { ...(event.message as Json) };
    else if (event.type === "content_block_start")
      content[index] = { ...(event.content_block as Json) };
    else if (event.type === "content_block_delta") {
      const d = event.delta as Json;
      const block = content[index] as Json;
      if (d.type === "text_delta") block.text = String(block.text) + String(d.text);
      else if (d.type === "thinking_delta")
        block.thinking = String(block.thinking) + String(d.thinking);
      else if (d.type === "signature_delta") block.signature = d.signature;
      else if (d.type === "input_json_delta")
        json.set(index, (json.get(index) ?? "") + String(d.partial_json));
      else if (d.type === "citations_delta")
        block.citations = [...((block.citations as unknown[]) ?? []), d.citation];
      else block.content = d.content;
    } else if (event.type === "content_block_stop") {
      const text = json.get(index);
      if (text !== undefined && text !== "") (content[index] as Json).input = JSON.parse(text);
    } else if (event.type === "message_delta") {
      Object.assign(message, event.delta);
      message.usage = { ...(message.usage as Json), ...(event.usage as Json) };
    }
  }
  return { ...message, content };
}
