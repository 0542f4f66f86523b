// `seedline serve`: the JSON-RPC server on stdin/stdout over a store, until input ends or a signal arrives.
import { FRAMINGS, type Framing } from "../../rpc/framing.js";
import { serve } from "../../rpc/server.js";
import { type CommandSpec, EXIT_FAILED, EXIT_OK, UsageError } from "../command.js";
import { openStore, STORE_OPTION, storeUrl } from "../store.js";

export const serveCommand: CommandSpec = {
  name: "serve",
  summary: "run the JSON-RPC 2.0 server on stdio over a store",
  synopsis: `[--store URL] [--framing ${FRAMINGS.join("|")}] [--idle-ms MS] [--watch-buffer N] [--watch-stall-ms MS] [--replay-idle-ms MS] [--max-replays N] [--max-watches N] [--max-in-flight N]`,
  description: `
Speaks JSON-RPC 2.0 on stdin/stdout: session/create, session/append, session/fork, session/read,
session/list, replay/open, replay/next and the rest of the method table (see docs). Messages are
newline-delimited JSON by default (as the Agent Client Protocol frames them); --framing
content-length switches to LSP-style headers. stdout carries protocol messages only; logs go to
stderr.

Backpressure: while stdout is not draining, or N requests (--max-in-flight) are in flight, the
server reads no more of stdin until answers go out; requests are never refused for it.

When stdin ends, or on SIGTERM/SIGINT, the requests in flight are finished and answered, the
store is closed and the server exits 0. A second signal exits at once with status 1.`,
  options: {
    store: STORE_OPTION,
    framing: {
      type: "string",
      arg: "KIND",
      choices: FRAMINGS,
      description: "message framing (default: ndjson)",
    },
    "idle-ms": {
      type: "string",
      arg: "MS",
      description: "unload a session unused for MS milliseconds (default: 60000)",
    },
    "watch-buffer": {
      type: "string",
      arg: "N",
      description:
        "let at most N events of a watch wait for a client that reads slowly (default: 10000)",
    },
    "watch-stall-ms": {
      type: "string",
      arg: "MS",
      description:
        "end a watch with WATCH_OVERFLOW when its client reads nothing for MS milliseconds while its buffer is full (default: 5000)",
    },
    "replay-idle-ms": {
      type: "string",
      arg: "MS",
      description:
        "expire a replay unused by replay/next for MS milliseconds; it then answers REPLAY_NOT_FOUND (default: 600000)",
    },
    "max-replays": {
      type: "string",
      arg: "N",
      description:
        "let the connection keep at most N replays open; replay/open past it answers REPLAY_LIMIT (default: 100)",
    },
    "max-watches": {
      type: "string",
      arg: "N",
      description:
        "let the connection keep at most N watches open; session/watch past it answers WATCH_LIMIT (default: 1000)",
    },
    "max-in-flight": {
      type: "string",
      arg: "N",
      description:
        "stop reading stdin while N requests are in flight (read, not yet answered); reading resumes as answers go out (default: 128)",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, env }) {
    const idle = args.values["idle-ms"];
    if (typeof idle === "string" && !(/^\d+$/.test(idle) && Number(idle) > 0)) {
      throw new UsageError(
        `expected --idle-ms to be a positive integer, got ${JSON.stringify(idle)}`,
      );
    }
    const watchBuffer = args.values["watch-buffer"];
    if (typeof watchBuffer === "string" && !/^[1-9]\d*$/.test(watchBuffer)) {
      throw new UsageError(
        `expected --watch-buffer to be a positive integer, got ${JSON.stringify(watchBuffer)}`,
      );
    }
    const stall = args.values["watch-stall-ms"];
    if (typeof stall === "string" && !/^\d+$/.test(stall)) {
      throw new UsageError(
        `expected --watch-stall-ms to be an integer >= 0, got ${JSON.stringify(stall)}`,
      );
    }
    const replayIdle = args.values["replay-idle-ms"];
    if (typeof replayIdle === "string" && !/^[1-9]\d*$/.test(replayIdle)) {
      throw new UsageError(
        `expected --replay-idle-ms to be a positive integer, got ${JSON.stringify(replayIdle)}`,
      );
    }
    const maxReplays = args.values["max-replays"];
    if (typeof maxReplays === "string" && !/^[1-9]\d*$/.test(maxReplays)) {
      throw new UsageError(
        `expected --max-replays to be a positive integer, got ${JSON.stringify(maxReplays)}`,
      );
    }
    const maxWatches = args.values["max-watches"];
    if (typeof maxWatches === "string" && !/^[1-9]\d*$/.test(maxWatches)) {
      throw new UsageError(
        `expected --max-watches to be a positive integer, got ${JSON.stringify(maxWatches)}`,
      );
    }
    const maxInFlight = args.values["max-in-flight"];
    if (typeof maxInFlight === "string" && !/^[1-9]\d*$/.test(maxInFlight)) {
      throw new UsageError(
        `expected --max-in-flight to be a positive integer, got ${JSON.stringify(maxInFlight)}`,
      );
    }
    const url = storeUrl(args.values.store, env);
    const store = await openStore(url);
    const server = serve({
      store,
      input: process.stdin,
      output: process.stdout,
      framing: (args.values.framing ?? "ndjson") as Framing,
      storeUrl: url,
      ...(typeof idle === "string" ? { idleMs: Number(idle) } : {}),
      ...(typeof watchBuffer === "string" ? { watchBufferEvents: Number(watchBuffer) } : {}),
      ...(typeof stall === "string" ? { watchStallMs: Number(stall) } : {}),
      ...(typeof replayIdle === "string" ? { replayIdleMs: Number(replayIdle) } : {}),
      ...(typeof maxReplays === "string" ? { maxReplays: Number(maxReplays) } : {}),
      ...(typeof maxWatches === "string" ? { maxWatches: Number(maxWatches) } : {}),
      ...(typeof maxInFlight === "string" ? { maxInFlight: Number(maxInFlight) } : {}),
    });
    let signalled = false;
    const onSignal = () => {
      if (signalled) process.exit(EXIT_FAILED);
      signalled = true;
      // The shutdown this starts is awaited below, through `server.closed`.
      void server.close();
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    try {
      await server.closed;
    } finally {
      await store.close();
      // A signal can stop the server while stdin is still open; it must not keep the process alive.
      process.stdin.destroy();
    }
    return EXIT_OK;
  },
};
