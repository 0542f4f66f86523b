// Record mode through `seedline proxy`: a caller that does not read holds the upstream back (the proxy keeps no more than the sockets hold), and one that goes away has its call recorded as aborted.
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { startProxyServer } from "../../src/index.js";
import { newDb, openStore } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/waits.js";

/** Bytes the fake upstream offers: far more than the sockets between it and the caller hold. */
const OFFERED = 96 * 1024 * 1024;
/** One write of the fake upstream: an SSE comment line (no event), padded. */
const PIECE = Buffer.from(`: ${"x".repeat(64 * 1024 - 4)}\n\n`);

/**
 * A fake OpenAI upstream streaming SSE comments until it has written {@link OFFERED} bytes,
 * waiting for its socket to drain as a real server does; it tells how far it got.
 */
async function startFloodingUpstream() {
  const state = { written: 0, finished: false, blockedSince: 0 };
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    const pump = () => {
      while (state.written < OFFERED) {
        state.written += PIECE.length;
        if (!res.write(PIECE)) {
          state.blockedSince = Date.now();
          res.once("drain", () => {
            state.blockedSince = 0;
            pump();
          });
          return;
        }
      }
      state.finished = true;
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("record mode with a caller that does not read", () => {
  // Seen failing before the server wrote the upstream's chunks straight to the caller's socket:
  // the Response's stream took every chunk without waiting, so the proxy read all 96 MiB from
  // the upstream into its memory while the caller read nothing (the upstream finished writing all
  // of it: "expected the upstream to stay blocked for a second within 15000 ms").
  it("holds the upstream back instead of buffering its answer, and records the call as aborted once the caller goes", async () => {
    const store = await openStore(newDb());
    const upstream = await startFloodingUpstream();
    const server = await startProxyServer({
      store,
      mode: "record",
      upstreams: { openai: upstream.baseUrl },
    });
    let caller: ReturnType<typeof request> | undefined;
    try {
      const body = JSON.stringify({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "flood" }],
        stream: true,
      });
      caller = request(`${server.url}/s/flood/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
      });
      const sent = caller;
      const answered = new Promise<void>((resolve, reject) => {
        sent.once("response", (res) => {
          // Never read: the caller's socket fills, then the proxy's, then the upstream's.
          res.pause();
          resolve();
        });
        sent.once("error", reject);
      });
      sent.end(body);
      await answered;
      // The upstream blocks on a full socket and stays blocked: nothing reads its bytes.
      await waitUntil(
        () => upstream.state.blockedSince > 0 && Date.now() - upstream.state.blockedSince > 1000,
        "the upstream to stay blocked for a second",
        15_000,
      );
      expect(upstream.state.finished).toBe(false);
      expect(upstream.state.written).toBeLessThan(OFFERED / 2);
      // The caller goes away: the call to the upstream is aborted with it, and recorded so.
      sent.destroy();
      await server.settled();
      const events = await store.readEvents("flood");
      expect(events.slice(0, 3).map((e) => e.type)).toEqual([
        "turn/start",
        "user/message",
        "step/start",
      ]);
      const last = events.at(-1);
      expect(last?.type === "turn/end" && last.data.reason.kind).toBe("aborted");
    } finally {
      caller?.destroy();
      await server.close();
      await upstream.close();
      await store.close();
    }
  });
});
