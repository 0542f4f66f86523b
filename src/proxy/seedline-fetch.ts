// seedlineFetch: a `fetch` that records model calls into a session or answers them from one, for SDKs' `fetch` option.
import type { SessionStore } from "../store/session-store.js";
import { ModelProxy } from "./model-proxy.js";
import { adapterOfUrl } from "./routes.js";
import type { ProxyMode } from "./types.js";

/** Options of {@link seedlineFetch}. */
export interface SeedlineFetchOptions {
  readonly store: SessionStore;
  /**
   * The session to record into (created when missing), replay, or — auto mode — replay until a
   * call differs and then fork; record mode creates one when absent.
   */
  readonly sessionId?: string;
  readonly mode: ProxyMode;
  /** The fetch that reaches the provider in record mode (default: the global fetch). */
  readonly upstream?: typeof fetch;
  /** The `time` of recorded events (default `Date.now`). */
  readonly now?: () => number;
}

/** A recording or replaying fetch; {@link close} ends the open turn durably. */
export interface SeedlineFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** The sessions recorded into or replayed from so far. */
  sessionIds(): Promise<string[]>;
  /**
   * Resolves once the calls answered so far are recorded whole: a response's body ends when the
   * upstream's does, and its step is stored just after.
   */
  settled(): Promise<void>;
  /**
   * Waits for the recordings in flight, then ends what the recording left open (the open step and
   * turn) durably; the store stays open.
   */
  close(): Promise<void>;
}

/**
 * A `fetch` doing what `seedline proxy` does, in process: model calls (OpenAI Chat Completions,
 * Responses, Anthropic Messages) are recorded into the session as they stream through, or answered
 * from it in replay mode; any other request goes to `upstream` unrecorded (refused with 404 in
 * replay mode). In auto mode calls are answered from the session while they match it; the first
 * that does not forks it at the last matched turn boundary and it and every later call are
 * recorded into the child (`sessionIds()` then lists the session and its child).
 * @throws TypeError at once for replay or auto mode without a `sessionId`.
 */
export function seedlineFetch(options: SeedlineFetchOptions): SeedlineFetch {
  if (options.mode !== "record" && options.sessionId === undefined) {
    throw new TypeError(
      `expected a sessionId to ${options.mode === "auto" ? "replay in auto mode" : "replay"}, got none`,
    );
  }
  const upstream = options.upstream ?? globalThis.fetch.bind(globalThis);
  const proxy = new ModelProxy({
    store: options.store,
    mode: options.mode,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.now === undefined ? {} : { now: options.now }),
    // The caller was answered before its call was recorded: a failure to record is told here.
    onRecordError: (error) =>
      process.stderr.write(
        `seedlineFetch: a call was answered but not recorded: ${String(error)}\n`,
      ),
  });
  const call = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const adapter = adapterOfUrl(new URL(request.url));
    if (adapter === undefined || request.method !== "POST") {
      if (options.mode === "replay") {
        return new Response(
          JSON.stringify({
            error: {
              message: `replay answers recorded model calls only, not ${request.method} ${request.url}`,
              code: "NOT_RECORDED",
            },
          }),
          { status: 404, headers: { "content-type": "application/json" } },
        );
      }
      return upstream(request);
    }
    return proxy.handle({ adapter, request, upstreamUrl: request.url, upstream });
  };
  return Object.assign(call, {
    sessionIds: () => proxy.sessionIds(),
    settled: () => proxy.settled(),
    close: () => proxy.close(),
  });
}
