// A fake OpenAI upstream for proxy tests: node:http on 127.0.0.1 serving the real captured Chat Completions bodies.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** The real captured OpenAI SSE bodies (read where they are; never copied into the repository). */
export const OPENAI_SSE = join(
  import.meta.dirname,
  "..",
  "..",
  "shared",
  "fixtures-real",
  "openai-sse",
  "pydantic-ai",
);

/** Whether the captured bodies are there (CI checks them out beside the repository). */
export const HAVE_FIXTURES = existsSync(join(OPENAI_SSE, "chat_text_stream.sse"));

/** One captured body by file name, e.g. `chat_text_stream.sse`. */
export function sse(name: string): string {
  return readFileSync(join(OPENAI_SSE, name), "utf8");
}

/** What the fake upstream answers to one call. */
export type FakeAnswer =
  | { readonly sse: string }
  | { readonly status: number; readonly json: unknown }
  /** Sends the first `bytes` of an SSE body, then destroys the connection. */
  | { readonly sse: string; readonly breakAfter: number }
  /** Sends the first piece of an SSE body, the rest once `hold` resolves. */
  | { readonly sse: string; readonly hold: Promise<void> };

/** One request the fake upstream received. */
export interface SeenRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface FakeUpstream {
  /** `http://127.0.0.1:PORT/v1`: an OpenAI base URL. */
  readonly baseUrl: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Starts a fake OpenAI API answering `POST /v1/chat/completions` with `answers` in order: an SSE
 * body as the real API streamed it (written in several pieces, as a network delivers it), or,
 * when the caller did not ask to stream, the same response folded into one JSON body as the real
 * API answers then. Any other path answers a small model list.
 */
export async function startFakeUpstream(answers: readonly FakeAnswer[]): Promise<FakeUpstream> {
  const queue = [...answers];
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
      seen.push({ url: req.url ?? "", headers: req.headers, body });
      if (req.url !== "/v1/chat/completions" && req.url !== "/v1/responses") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "gpt-4o-mini", object: "model" }] }));
        return;
      }
      const answer = queue.shift();
      if (answer === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the fake upstream has no more answers" } }));
      } else if ("status" in answer) {
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer.json));
      } else if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(foldSse(answer.sse)));
      } else if ("breakAfter" in answer) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(answer.sse.slice(0, answer.breakAfter), () => res.destroy());
      } else {
        res.writeHead(200, { "content-type": "text/event-stream" });
        void writeInPieces(res, answer.sse, "hold" in answer ? answer.hold : undefined);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function writeInPieces(
  res: import("node:http").ServerResponse,
  text: string,
  hold: Promise<void> | undefined,
): Promise<void> {
  const size = Math.ceil(text.length / 5);
  for (let at = 0; at < text.length; at += size) {
    res.write(text.slice(at, at + size));
    if (at === 0 && hold !== undefined) await hold;
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

type Json = Record<string, unknown>;

/** A Chat Completions SSE body folded into the JSON body the API answers without streaming. */
export function foldSse(body: string): Json {
  const events = body
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Json);
  const first = events[0] as Json;
  let content = "";
  let finish: unknown = null;
  let usage: unknown;
  const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
  for (const event of events) {
    if (event.usage) usage = event.usage;
    for (const choice of (event.choices as Json[]) ?? []) {
      const delta = (choice.delta ?? {}) as Json;
      if (typeof delta.content === "string") content += delta.content;
      for (const call of (delta.tool_calls as Json[]) ?? []) {
        const index = call.index as number;
        const fn = (call.function ?? {}) as Json;
        calls[index] ??= {
          id: String(call.id),
          type: "function",
          function: { name: "", arguments: "" },
        };
        const target = calls[index];
        if (typeof fn.name === "string") target.function.name = fn.name;
        if (typeof fn.arguments === "string") target.function.arguments += fn.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return {
    id: first.id,
    object: "chat.completion",
    created: first.created,
    model: first.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: content === "" ? null : content,
          refusal: null,
          ...(calls.length === 0 ? {} : { tool_calls: calls }),
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    usage,
    service_tier: first.service_tier,
    system_fingerprint: first.system_fingerprint,
  };
}
