// P1–P3's fake OpenAI upstream: node:http on 127.0.0.1 streaming a synthetic Chat Completions SSE body of a given number of events.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** SSE events written per socket write: a model's stream arrives a few events per packet. */
const EVENTS_PER_WRITE = 25;

/**
 * A Chat Completions SSE body of exactly `events` `data:` events (the last one `[DONE]`): a role
 * chunk, text deltas, the finish chunk and the usage chunk, as the real API streams them.
 */
export function chatStream(events: number): string[] {
  const envelope = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1_750_000_000,
      model: "gpt-4o-mini-2024-07-18",
      service_tier: "default",
      system_fingerprint: "fp_bench",
      choices,
      ...extra,
    })}\n\n`;
  const deltas = Math.max(1, events - 4);
  const lines = [
    envelope([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
  ];
  for (let i = 0; i < deltas; i++) {
    lines.push(envelope([{ index: 0, delta: { content: ` word${i}` }, finish_reason: null }]));
  }
  lines.push(envelope([{ index: 0, delta: {}, finish_reason: "stop" }]));
  lines.push(
    envelope([], {
      usage: { prompt_tokens: 12, completion_tokens: deltas, total_tokens: 12 + deltas },
    }),
  );
  lines.push("data: [DONE]\n\n");
  return lines;
}

/** A running fake upstream. */
export interface BenchUpstream {
  /** `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  /** Model calls answered so far. */
  readonly calls: () => number;
  close(): Promise<void>;
}

/** Serves `POST /v1/chat/completions` with `stream`, written as it would arrive: a few events at a time. */
export async function startBenchUpstream(stream: readonly string[]): Promise<BenchUpstream> {
  const pieces: string[] = [];
  for (let at = 0; at < stream.length; at += EVENTS_PER_WRITE) {
    pieces.push(stream.slice(at, at + EVENTS_PER_WRITE).join(""));
  }
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      void (async () => {
        for (const piece of pieces) {
          if (!res.write(piece)) await new Promise((resolve) => res.once("drain", resolve));
          await new Promise((resolve) => setImmediate(resolve));
        }
        res.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
