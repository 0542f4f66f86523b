// P2: replay of a recorded session through the proxy with the OpenAI SDK, in calls per second.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import type { Sizes } from "./fixtures.js";
import { type Benchmark, fmt, median, rotate, row, tempDir, timed } from "./harness.js";
import { startProxyProcess } from "./proxy-process.js";
import { chatStream, startBenchUpstream } from "./proxy-upstream.js";
import { entryArgs, REPO_ROOT } from "./runtime.js";

/** The session a replaying process answers first, untimed, before the timed one. */
const WARM_SESSION = "p2-warm-up";

/** SSE events of each recorded answer: a short reply. */
const ANSWER_EVENTS = 20;

/** The agent: `calls` streamed calls, each a new question, read to the end with the SDK. */
async function agent(client: OpenAI, calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: `question ${i}` }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    if (text === "") throw new Error(`expected an answer to call ${i + 1}, got none`);
  }
}

/**
 * Starts answer-child.ts (a bare server in a process of its own answering each call at once with
 * the recorded body); resolves with its base URL and a way to stop it.
 */
async function startCeiling(): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...entryArgs(join(REPO_ROOT, "scripts", "bench", "answer-child.ts")), String(ANSWER_EVENTS)],
    { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const line = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  if (line.done) throw new Error(`expected a URL from answer-child, it exited (${await exited})`);
  return {
    baseUrl: line.value,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

export function p2ProxyReplay(sizes: Sizes): Benchmark {
  return {
    id: "P2",
    title: `replay of a ${sizes.proxyReplayCalls}-call session through the proxy with the OpenAI SDK`,
    async run(ctx) {
      const temp = tempDir("p2");
      const storeUrl = `sqlite:${join(temp.dir, "p2.db")}`;
      const calls = sizes.proxyReplayCalls;
      try {
        const upstream = await startBenchUpstream(chatStream(ANSWER_EVENTS));
        const recorder = await startProxyProcess(storeUrl, "record", upstream.baseUrl, "p2");
        // Two recordings of the same agent: the replaying process warms up on the first (its code
        // compiled, its connections open, as a proxy serving a test suite is), the second is timed.
        for (const session of [WARM_SESSION, "p2"]) {
          await agent(
            new OpenAI({
              apiKey: "sk-bench",
              baseURL: `${recorder.url}/s/${session}/openai/v1`,
              maxRetries: 0,
            }),
            calls,
          );
        }
        await recorder.stop();
        // For context (not a floor the target divides by): the same SDK calls to a bare server in
        // another process that answers each at once with the recorded body — the least any
        // replaying proxy in a process of its own costs (the target is calls/s, absolute).
        const ceiling = await startCeiling();
        const bare = new OpenAI({ apiKey: "sk-bench", baseURL: ceiling.baseUrl, maxRetries: 0 });
        await agent(bare, calls);
        // Replay contacts no upstream: this address refuses every connection.
        const [rates = [], direct = []] = await rotate(
          ctx.rounds,
          [
            async () => {
              const proxy = await startProxyProcess(
                storeUrl,
                "replay",
                "http://127.0.0.1:9/v1",
                "p2",
              );
              try {
                const clientOf = (session: string) =>
                  new OpenAI({
                    apiKey: "unused",
                    baseURL: `${proxy.url}/s/${session}/openai/v1`,
                    maxRetries: 0,
                  });
                await agent(clientOf(WARM_SESSION), calls);
                const client = clientOf("p2");
                const ms = await timed(() => agent(client, calls));
                return calls / (ms / 1000);
              } finally {
                await proxy.stop();
              }
            },
            async () => calls / ((await timed(() => agent(bare, calls))) / 1000),
          ],
          (round, figures) =>
            ctx.progress(
              `P2 round ${round + 1}: replay ${fmt(figures[0] as number)} calls/s, a bare server in another process ${fmt(figures[1] as number)} calls/s`,
            ),
        );
        await ceiling.stop();
        await upstream.close();
        return [
          row({
            id: "P2",
            what: `proxy replay: ${calls}-call session with the OpenAI SDK (streamed)`,
            floor:
              "context only: the same SDK calls to a bare server in another process answering at once",
            unit: "calls/s",
            ratioOf: "absolute",
            subject: rates,
            baseline: direct,
            target: { op: ">=", value: 1000 },
            facts: {
              calls,
              answerEvents: ANSWER_EVENTS,
              proxyStartIncluded: "no",
              warmUp: `the same ${calls} calls of another session, untimed`,
              replayOverBare:
                Math.round(median(rates.map((r, i) => r / (direct[i] as number))) * 100) / 100,
            },
          }),
        ];
      } finally {
        temp.remove();
      }
    },
  };
}
