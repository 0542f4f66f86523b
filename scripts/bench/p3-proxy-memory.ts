// P3: the proxy's heap over many recorded calls: after a full gc, after the first tenth of the calls and after the last.
import { join } from "node:path";
import type { Sizes } from "./fixtures.js";
import { type Benchmark, fmt, row, tempDir } from "./harness.js";
import { startProxyProcess } from "./proxy-process.js";
import { chatStream, startBenchUpstream } from "./proxy-upstream.js";

const MIB = 1024 * 1024;
/** SSE events of each answer: a short reply. */
const ANSWER_EVENTS = 20;

/** One streamed call through the proxy, read to its end. */
async function call(url: string, n: number): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: `question ${n}` }],
      stream: true,
    }),
  });
  await response.arrayBuffer();
  if (response.status !== 200)
    throw new Error(`expected 200 for call ${n}, got ${response.status}`);
}

export function p3ProxyMemory(sizes: Sizes): Benchmark {
  return {
    id: "P3",
    title: `the proxy's heap over ${sizes.proxyMemoryCalls} recorded calls`,
    async run(ctx) {
      const temp = tempDir("p3");
      const calls = sizes.proxyMemoryCalls;
      const tenth = Math.max(1, Math.floor(calls / 10));
      const upstream = await startBenchUpstream(chatStream(ANSWER_EVENTS));
      const proxy = await startProxyProcess(
        `sqlite:${join(temp.dir, "p3.db")}`,
        "record",
        upstream.baseUrl,
        "p3",
      );
      try {
        const url = `${proxy.url}/openai/v1/chat/completions`;
        let first = { heapUsed: 0, codeSpace: 0 };
        for (let n = 1; n <= calls; n++) {
          await call(url, n);
          if (n === tenth) {
            first = await proxy.heap();
            ctx.progress(`P3: heap after ${n} calls ${fmt(first.heapUsed / MIB)} MiB`);
          }
        }
        const last = await proxy.heap();
        ctx.progress(`P3: heap after ${calls} calls ${fmt(last.heapUsed / MIB)} MiB`);
        if (upstream.calls() !== calls) {
          throw new Error(`expected ${calls} calls at the upstream, got ${upstream.calls()}`);
        }
        return [
          row({
            id: "P3",
            what: `proxy record: heap after gc, after ${calls} calls vs after the first ${tenth}`,
            floor: `the heap after gc after the first ${tenth} calls`,
            unit: "MiB",
            subject: [last.heapUsed / MIB],
            baseline: [first.heapUsed / MIB],
            target: { op: "<=", value: 1.1 },
            facts: {
              calls,
              measuredAfter: tenth,
              answerEvents: ANSWER_EVENTS,
              growthMiB: Math.round(((last.heapUsed - first.heapUsed) / MIB) * 1000) / 1000,
              // Of which compiled code: V8 optimizing the hot paths as they stay hot, not data kept per call.
              codeGrowthMiB: Math.round(((last.codeSpace - first.codeSpace) / MIB) * 1000) / 1000,
            },
          }),
        ];
      } finally {
        await proxy.stop();
        await upstream.close();
        temp.remove();
      }
    },
  };
}
