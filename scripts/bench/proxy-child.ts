// P1–P3's proxy process: `seedline proxy`'s server on a SQLite store; prints its URL, answers `heap` on stdin with its heap after a full gc (and the part of it that is compiled code), and `settled` once what it answered is recorded.
import { createInterface } from "node:readline";
import { getHeapSpaceStatistics } from "node:v8";
import { openBackend, SessionStore, startProxyServer } from "../../src/index.js";
import { PROXY_UNPACKED_TEXT } from "../../src/proxy/proxy-server.js";
import { collectGarbage } from "./harness.js";

async function main(): Promise<void> {
  const [storeUrl, mode, upstream, sessionId] = process.argv.slice(2);
  if (
    storeUrl === undefined ||
    upstream === undefined ||
    (mode !== "record" && mode !== "replay")
  ) {
    throw new Error("usage: proxy-child STORE_URL record|replay UPSTREAM_URL [SESSION_ID]");
  }
  // As `seedline proxy` opens its store.
  const store = new SessionStore({
    backend: await openBackend(storeUrl),
    unpackedTextBudget: PROXY_UNPACKED_TEXT,
  });
  const server = await startProxyServer({
    store,
    mode,
    upstreams: { openai: upstream },
    ...(sessionId === undefined ? {} : { sessionId }),
    onRecordError: (error) => process.stderr.write(`proxy-child: not recorded: ${String(error)}\n`),
  });
  process.stdout.write(`${server.url}\n`);
  // One line per request on stdin: `heap` answers the V8 heap in use after a full collection,
  // `settled` answers once the calls answered so far are recorded.
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "heap") {
      collectGarbage();
      const code = getHeapSpaceStatistics().find((space) => space.space_name === "code_space");
      const heap = {
        heapUsed: process.memoryUsage().heapUsed,
        codeSpace: code?.space_used_size ?? 0,
      };
      process.stdout.write(`${JSON.stringify(heap)}\n`);
    } else if (line === "settled") {
      await server.settled();
      process.stdout.write("settled\n");
    }
  }
  await server.close();
  await store.close();
}

await main();
