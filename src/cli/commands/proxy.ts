// `seedline proxy`: records (or replays) any agent's model calls at its provider's HTTP API, until SIGINT or SIGTERM.
import { PROXY_UNPACKED_TEXT, startProxyServer } from "../../proxy/proxy-server.js";
import { type CommandSpec, EXIT_OK, UsageError } from "../command.js";
import { interruption } from "../follow.js";
import { listenAddress } from "../listen-address.js";
import { openStore, STORE_OPTION, storeUrl } from "../store.js";

export const proxyCommand: CommandSpec = {
  name: "proxy",
  summary:
    "record any agent at its model API (OpenAI Chat Completions and Responses, Anthropic Messages), or replay it offline",
  synopsis:
    "[--store URL] [--port N] [--host H] [--mode record|replay|auto] [--session ID] [--upstream-openai URL] [--upstream-anthropic URL]",
  description: `
A local HTTP server that stands where the agent's provider is: point the agent's base URL at it
and every model call is recorded into a session (forkable, searchable, viewable in seedline ui)
with no change to the agent's code; in replay mode the same calls are answered from the
recording, offline and deterministically. It prints one line on stdout:
  seedline proxy: http://127.0.0.1:PORT

Routes (each also under /s/SESSION_ID/… to name the session in the base URL; otherwise
--session, otherwise one new session per proxy run):
  POST /openai/v1/chat/completions   OpenAI Chat Completions, streamed (SSE) and not
  POST /openai/v1/responses          OpenAI Responses, streamed (named SSE events) and not
  /openai/v1/…                       any other path: passed through unrecorded (replay: 404)
  POST /anthropic/v1/messages        Anthropic Messages, streamed (SSE) and not; the base URL
                                     is http://HOST:PORT/anthropic (ANTHROPIC_BASE_URL)
  /anthropic/…                       any other path: passed through unrecorded (replay: 404)

Record mode (the default): each call goes to the upstream (--upstream-openai, default
https://api.openai.com/v1; --upstream-anthropic, default https://api.anthropic.com); the agent
gets the upstream's status and bytes as they arrive. Each call becomes one step: step/start (the
request's model, parameters and digests of its messages and tools), its stream as assistant/chunk
events, the assistant/message, a tool/call per tool call; tool results the agent sends back in
its next request become tool/result events; a request whose newest message is a new user message
opens a turn. Credentials are sent on and never stored. An upstream error ends the turn with it
(the provider's error body kept).

Replay mode (needs a session): no upstream is contacted; the n-th call is answered from the n-th
recorded step, in the caller's streaming mode. A request that differs from the recording (model,
parameters, tools or messages) is answered 409 with a short diff (code REPLAY_MISMATCH); a call
past the last recorded one, or to a recorded call that did not finish (interrupted, aborted), is
answered 409 (REPLAY_EXHAUSTED, REPLAY_INCOMPLETE). Answers carry the headers
x-seedline-session and x-seedline-replayed.

Auto mode (needs a session): calls are answered from the recording while they match it. The
first call that does not (or that replay would refuse: past the recording's end, a call that did
not finish) forks the session at the end of the last turn all of whose calls matched (the
recording's last turn end for a call past it; a new session naming it as parent when no turn
ended before) and goes to the upstream, recorded into the child like record mode, as is every
later call of that session. The recorded session is never written. x-seedline-session names the
child once forked; x-seedline-replayed says which answered.

It runs until SIGINT (Ctrl-C) or SIGTERM, then ends the open turns durably, closes the store and
exits 0.

Example:
  seedline proxy --store sqlite:agent.db --port 8787 &
  OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1 python my_agent.py
  kill %1                                   # the session is closed; seedline ls shows it
  seedline proxy --store sqlite:agent.db --port 8787 --mode replay --session ID &
  OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1 OPENAI_API_KEY=unused python my_agent.py`,
  options: {
    store: STORE_OPTION,
    port: {
      type: "string",
      arg: "N",
      description: "the port to listen on (default: 0, a free one)",
    },
    host: { type: "string", arg: "H", description: "the address to bind (default: 127.0.0.1)" },
    mode: {
      type: "string",
      arg: "MODE",
      description:
        "record against the upstream, replay from the session, or auto: replay, then fork and record at the first divergence (default: record)",
    },
    session: {
      type: "string",
      arg: "ID",
      description: "the session of calls whose path names none (record: created when missing)",
    },
    "upstream-openai": {
      type: "string",
      arg: "URL",
      description: "the OpenAI base URL calls go to (default: https://api.openai.com/v1)",
    },
    "upstream-anthropic": {
      type: "string",
      arg: "URL",
      description: "the Anthropic base URL calls go to (default: https://api.anthropic.com)",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out, env }) {
    const address = listenAddress(args.values);
    const mode = (args.values.mode ?? "record") as string;
    if (mode !== "record" && mode !== "replay" && mode !== "auto") {
      throw new UsageError(`expected --mode record, replay or auto, got ${JSON.stringify(mode)}`);
    }
    const session = typeof args.values.session === "string" ? args.values.session : undefined;
    if (mode !== "record" && session === undefined) {
      // Calls may still name their session in the path; without either, each would be refused.
      out.err(
        `seedline proxy: ${mode} without --session answers only paths under /s/SESSION_ID/\n`,
      );
    }
    const upstreamOpenai = args.values["upstream-openai"];
    if (typeof upstreamOpenai === "string" && !URL.canParse(upstreamOpenai)) {
      throw new UsageError(
        `expected --upstream-openai a URL, got ${JSON.stringify(upstreamOpenai)}`,
      );
    }
    const upstreamAnthropic = args.values["upstream-anthropic"];
    if (typeof upstreamAnthropic === "string" && !URL.canParse(upstreamAnthropic)) {
      throw new UsageError(
        `expected --upstream-anthropic a URL, got ${JSON.stringify(upstreamAnthropic)}`,
      );
    }
    const upstreams: Record<string, string> = {
      ...(typeof upstreamOpenai === "string" ? { openai: upstreamOpenai } : {}),
      ...(typeof upstreamAnthropic === "string" ? { anthropic: upstreamAnthropic } : {}),
    };
    const stop = interruption();
    try {
      const store = await openStore(storeUrl(args.values.store, env), {
        unpackedTextBudget: PROXY_UNPACKED_TEXT,
      });
      try {
        const server = await startProxyServer({
          store,
          mode,
          ...address,
          ...(session === undefined ? {} : { sessionId: session }),
          upstreams,
          onRecordError: (error) =>
            out.err(`seedline proxy: a call was answered but not recorded: ${String(error)}\n`),
        });
        out.out(`seedline proxy: ${server.url}\n`);
        if (!stop.signal.aborted) {
          await new Promise<void>((resolve) =>
            stop.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
        }
        await server.close();
      } finally {
        await store.close();
      }
    } finally {
      stop.dispose();
    }
    return EXIT_OK;
  },
};
