#!/usr/bin/env node
// A bare server entry: `node dist/src/rpc/stdio-main.js [--store URL] [--framing ndjson|content-length]`.
// `seedline serve` does the same through the CLI; this entry has no other commands.
import { parseArgs } from "node:util";
import { DEFAULT_STORE_URL, openBackend } from "../store/open/open-backend.js";
import { SessionStore } from "../store/session-store.js";
import { FRAMINGS, type Framing } from "./framing.js";
import { serve } from "./server.js";

const USAGE = `usage: stdio-main [--store URL] [--framing ${FRAMINGS.join("|")}] [--idle-ms MS] [--watch-buffer N] [--watch-stall-ms MS] [--replay-idle-ms MS] [--max-replays N] [--max-watches N] [--max-in-flight N]`;

function fail(message: string): never {
  process.stderr.write(`stdio-main: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let values: {
  store?: string;
  framing?: string;
  "idle-ms"?: string;
  "watch-buffer"?: string;
  "watch-stall-ms"?: string;
  "replay-idle-ms"?: string;
  "max-replays"?: string;
  "max-watches"?: string;
  "max-in-flight"?: string;
};
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      store: { type: "string" },
      framing: { type: "string" },
      "idle-ms": { type: "string" },
      "watch-buffer": { type: "string" },
      "watch-stall-ms": { type: "string" },
      "replay-idle-ms": { type: "string" },
      "max-replays": { type: "string" },
      "max-watches": { type: "string" },
      "max-in-flight": { type: "string" },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}
const framing = (values.framing ?? "ndjson") as Framing;
if (!FRAMINGS.includes(framing))
  fail(`expected --framing ${FRAMINGS.join(" or ")}, got ${framing}`);
const idleMs = values["idle-ms"] === undefined ? undefined : Number(values["idle-ms"]);
if (idleMs !== undefined && !(idleMs > 0)) fail(`expected --idle-ms > 0, got ${values["idle-ms"]}`);
const watchBuffer = values["watch-buffer"];
if (watchBuffer !== undefined && !/^[1-9]\d*$/.test(watchBuffer))
  fail(`expected --watch-buffer to be a positive integer, got ${watchBuffer}`);
const watchStall = values["watch-stall-ms"];
if (watchStall !== undefined && !/^\d+$/.test(watchStall))
  fail(`expected --watch-stall-ms to be an integer >= 0, got ${watchStall}`);
const replayIdle = values["replay-idle-ms"];
if (replayIdle !== undefined && !/^[1-9]\d*$/.test(replayIdle))
  fail(`expected --replay-idle-ms to be a positive integer, got ${replayIdle}`);
const maxReplays = values["max-replays"];
if (maxReplays !== undefined && !/^[1-9]\d*$/.test(maxReplays))
  fail(`expected --max-replays to be a positive integer, got ${maxReplays}`);
const maxWatches = values["max-watches"];
if (maxWatches !== undefined && !/^[1-9]\d*$/.test(maxWatches))
  fail(`expected --max-watches to be a positive integer, got ${maxWatches}`);
const maxInFlight = values["max-in-flight"];
if (maxInFlight !== undefined && !/^[1-9]\d*$/.test(maxInFlight))
  fail(`expected --max-in-flight to be a positive integer, got ${maxInFlight}`);

const url = values.store ?? DEFAULT_STORE_URL;
let store: SessionStore;
try {
  store = new SessionStore({ backend: await openBackend(url) });
} catch (error) {
  process.stderr.write(`stdio-main: cannot open the store ${url}: ${(error as Error).message}\n`);
  process.exit(1);
}
const server = serve({
  store,
  input: process.stdin,
  output: process.stdout,
  framing,
  storeKind: url.slice(0, url.indexOf(":")),
  storeUrl: url,
  ...(idleMs === undefined ? {} : { idleMs }),
  ...(watchBuffer === undefined ? {} : { watchBufferEvents: Number(watchBuffer) }),
  ...(watchStall === undefined ? {} : { watchStallMs: Number(watchStall) }),
  ...(replayIdle === undefined ? {} : { replayIdleMs: Number(replayIdle) }),
  ...(maxReplays === undefined ? {} : { maxReplays: Number(maxReplays) }),
  ...(maxWatches === undefined ? {} : { maxWatches: Number(maxWatches) }),
  ...(maxInFlight === undefined ? {} : { maxInFlight: Number(maxInFlight) }),
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    // The shutdown it starts is awaited below, through `server.closed`.
    void server.close();
  });
}
try {
  await server.closed;
} finally {
  await store.close();
}
process.exit(0);
