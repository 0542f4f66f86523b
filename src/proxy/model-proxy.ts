// The proxy's core, behind both `seedline proxy` and `seedlineFetch`: one model call recorded against the upstream or replayed.
import type { ModelResponse } from "../generated.js";
import type { SessionStore } from "../store/session-store.js";
import { fingerprintOf, requestDiff } from "./fingerprint.js";
import {
  answer,
  answerHeaders,
  codeOf,
  forwardHeaders,
  messageOf,
  parseJson,
} from "./http-parts.js";
import { outcomeOps, ResponseCapture } from "./response-outcome.js";
import { SessionChannel } from "./session-channel.js";
import { opsBeforeCall } from "./turn-inference.js";
import type { NeutralRequest, ProviderAdapter, ProxyMode } from "./types.js";

/** Options of a {@link ModelProxy}. */
export interface ModelProxyOptions {
  readonly store: SessionStore;
  readonly mode: ProxyMode;
  /** The session of calls that name none; record mode creates one on the first call when absent. */
  readonly sessionId?: string;
  /** The `time` of recorded events (default `Date.now`). */
  readonly now?: () => number;
  /** Told about a recording that failed after the caller got its answer (the answer is not changed). */
  readonly onRecordError?: (error: unknown) => void;
}

/** One call as a route hands it to the core. */
export interface ProxyCall {
  readonly adapter: ProviderAdapter;
  readonly request: Request;
  /** Where record mode sends it. */
  readonly upstreamUrl: string;
  readonly upstream: typeof fetch;
  /** The session the route names (`/s/ID/…`), if any. */
  readonly sessionId?: string;
}

/**
 * Records model calls into sessions, or answers them from the recording. Calls of one session
 * run one at a time in arrival order; {@link close} ends what is open durably.
 */
export class ModelProxy {
  readonly mode: ProxyMode;
  readonly #store: SessionStore;
  readonly #sessionId: string | undefined;
  readonly #now: () => number;
  readonly #onRecordError: (error: unknown) => void;
  readonly #channels = new Map<string, Promise<SessionChannel>>();
  #default: Promise<SessionChannel> | undefined;
  readonly #recordings = new Set<Promise<void>>();

  constructor(options: ModelProxyOptions) {
    this.mode = options.mode;
    this.#store = options.store;
    this.#sessionId = options.sessionId;
    this.#now = options.now ?? Date.now;
    this.#onRecordError = options.onRecordError ?? (() => undefined);
  }

  /** The ids of the sessions this proxy recorded into or replayed from so far. */
  async sessionIds(): Promise<string[]> {
    const all = [...this.#channels.values(), ...(this.#default ? [this.#default] : [])];
    const ids = await Promise.all(all.map((c) => c.then((x) => x.id).catch(() => undefined)));
    return [...new Set(ids.filter((id): id is string => id !== undefined))];
  }

  /** Answers one model call: from the upstream (recording it) or from the recording. */
  async handle(call: ProxyCall): Promise<Response> {
    const text = await call.request.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const parsed = call.adapter.parseRequest(body);
    if (this.mode === "replay") {
      if (parsed === undefined) {
        return answer(
          call.adapter.errorAnswer(
            400,
            "expected a model call request body this API accepts",
            "INVALID_REQUEST",
          ),
        );
      }
      return this.#replay(call, parsed);
    }
    if (parsed === undefined) return passThrough(call, text);
    return this.#record(call, parsed, text);
  }

  /** Ends every recording's open step and turn durably. The store stays open. */
  async close(): Promise<void> {
    await Promise.all([...this.#recordings]);
    const all = [...this.#channels.values(), ...(this.#default ? [this.#default] : [])];
    for (const pending of all) {
      const channel = await pending.catch(() => undefined);
      await channel?.close();
    }
  }

  #channel(sessionId: string | undefined): Promise<SessionChannel> {
    const id = sessionId ?? this.#sessionId;
    if (id === undefined) {
      this.#default ??= this.#store.create().then((s) => SessionChannel.recording(s, this.#now));
      return this.#default;
    }
    let channel = this.#channels.get(id);
    if (channel === undefined) {
      channel = this.#open(id);
      // A session that could not be opened is tried again by the next call.
      channel.catch(() => this.#channels.delete(id));
      this.#channels.set(id, channel);
    }
    return channel;
  }

  async #open(id: string): Promise<SessionChannel> {
    if (this.mode === "replay") return SessionChannel.replaying(this.#store, id);
    const existing = await this.#store.get(id);
    const session =
      existing === undefined
        ? await this.#store.create({ id })
        : await this.#store.openForWriting(id);
    return SessionChannel.recording(session, this.#now);
  }

  async #replay(call: ProxyCall, parsed: NeutralRequest): Promise<Response> {
    const adapter = call.adapter;
    if ((call.sessionId ?? this.#sessionId) === undefined) {
      return answer(
        adapter.errorAnswer(
          400,
          "expected a session to replay: name one in the path (/s/ID/…) or with --session",
          "SESSION_REQUIRED",
        ),
      );
    }
    let channel: SessionChannel;
    try {
      channel = await this.#channel(call.sessionId);
    } catch (error) {
      return answer(
        adapter.errorAnswer(404, messageOf(error), codeOf(error) ?? "SESSION_NOT_FOUND"),
      );
    }
    const release = await channel.acquire();
    try {
      const n = channel.cursor;
      const recorded = channel.calls[n];
      const headers = { "x-seedline-session": channel.id, "x-seedline-replayed": "true" };
      if (recorded === undefined) {
        const message = `no more recorded calls: session ${channel.id} recorded ${channel.calls.length}, this is call ${n + 1}`;
        return answer(adapter.errorAnswer(409, message, "REPLAY_EXHAUSTED"), headers);
      }
      const fingerprint = fingerprintOf(adapter.api, parsed);
      const diff =
        recorded.start.request === undefined
          ? []
          : requestDiff(recorded.start.request, fingerprint, parsed.messages);
      if (diff.length > 0) {
        const place = `call ${n + 1} (turn ${recorded.start.turn}, step ${recorded.start.step})`;
        const message = `the request differs from recorded ${place} of session ${channel.id}:\n${diff.join("\n")}`;
        return answer(adapter.errorAnswer(409, message, "REPLAY_MISMATCH"), headers);
      }
      const finished = recorded.chunks.some((c) => c.type === "finish");
      const failedStatus = (recorded.end?.response?.status ?? 200) >= 400;
      if (!finished && recorded.error === undefined && !failedStatus) {
        // Interrupted by a crash or aborted by its caller: what the model would have said is unknown.
        const place = `call ${n + 1} (turn ${recorded.start.turn}, step ${recorded.start.step})`;
        const message = `recorded ${place} of session ${channel.id} did not finish (interrupted or aborted): it has no faithful replay`;
        return answer(adapter.errorAnswer(409, message, "REPLAY_INCOMPLETE"), headers);
      }
      channel.cursor = n + 1;
      return answer(adapter.render(recorded, parsed.stream), headers);
    } finally {
      release();
    }
  }

  async #record(call: ProxyCall, parsed: NeutralRequest, text: string): Promise<Response> {
    const channel = await this.#channel(call.sessionId);
    const recorder = channel.recorder;
    if (recorder === undefined) throw new TypeError("expected a recording channel");
    const release = await channel.acquire();
    const api = call.adapter.api;
    let step: number;
    const fingerprint = fingerprintOf(api, parsed);
    try {
      const state = await recorder.record([]);
      const ops = opsBeforeCall(
        state,
        channel.previous,
        parsed,
        fingerprint,
        channel.pendingResponse,
      );
      const after = await recorder.record(ops);
      channel.pendingResponse = undefined;
      channel.previous = fingerprint;
      step = after.step as number;
    } catch (error) {
      release();
      throw error;
    }
    const fail = (
      message: string,
      code: string | undefined,
      response: ModelResponse,
      aborted = false,
    ) =>
      recorder.record([
        {
          op: "turn_end",
          reason: aborted
            ? { kind: "aborted", reason: message }
            : { kind: "error", step, message, ...(code === undefined ? {} : { code }) },
          response,
        },
      ]);
    const headers = { "x-seedline-session": channel.id, "x-seedline-replayed": "false" };
    let upstream: Response;
    try {
      upstream = await call.upstream(call.upstreamUrl, {
        method: call.request.method,
        headers: forwardHeaders(call.request.headers),
        body: text,
        signal: call.request.signal,
      });
    } catch (error) {
      await this.#settle(
        fail(
          `the upstream failed: ${messageOf(error)}`,
          codeOf(error),
          { api },
          call.request.signal.aborted,
        ),
        release,
      );
      throw error;
    }
    const responseHeaders = answerHeaders(upstream.headers, headers);
    if (upstream.status >= 400 || upstream.body === null) {
      const errorText = await upstream.text();
      const errorBody = parseJson(errorText);
      const { message, code } = call.adapter.errorOf(upstream.status, errorBody);
      await this.#settle(
        fail(message, code, {
          api,
          status: upstream.status,
          ...(errorBody === undefined ? {} : { error: errorBody }),
        }),
        release,
      );
      return new Response(errorText, { status: upstream.status, headers: responseHeaders });
    }
    const streamed = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    const capture = new ResponseCapture(call.adapter, streamed);
    const status = upstream.status;
    const finishRecording = async (failure: unknown): Promise<void> => {
      const mapped = capture.end();
      const outcome = outcomeOps(mapped, {
        api,
        status,
        step,
        failure,
        aborted: call.request.signal.aborted,
      });
      const state = await recorder.record(outcome.ops);
      if (outcome.ended) return;
      // A step whose tool calls wait for results ends when the next request brings them.
      if (state.pendingToolCalls.length > 0) channel.pendingResponse = outcome.response;
      else await recorder.record([{ op: "step_end", response: outcome.response }]);
    };
    const reader = (upstream.body as ReadableStream<Uint8Array>).getReader();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      cancel() {
        // The caller stopped reading; the upstream's answer is still read to the end and recorded.
        cancelled = true;
      },
    });
    const pump = async (): Promise<void> => {
      let failure: unknown;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          capture.push(value);
          if (!cancelled) controller.enqueue(value);
        }
      } catch (error) {
        failure = error;
      }
      try {
        await finishRecording(failure);
      } catch (error) {
        this.#onRecordError(error);
      } finally {
        release();
      }
      if (cancelled) return;
      if (failure === undefined) controller.close();
      else controller.error(failure);
    };
    const recording = pump();
    this.#recordings.add(recording);
    void recording.finally(() => this.#recordings.delete(recording));
    return new Response(body, {
      status,
      statusText: upstream.statusText,
      headers: responseHeaders,
    });
  }

  /** Awaits a recording that follows an answer already decided, reporting rather than throwing. */
  async #settle(recording: Promise<unknown>, release: () => void): Promise<void> {
    try {
      await recording;
    } catch (error) {
      this.#onRecordError(error);
    } finally {
      release();
    }
  }
}

/** A request this proxy does not record, sent on as it came. */
function passThrough(call: ProxyCall, text: string): Promise<Response> {
  const method = call.request.method;
  return call
    .upstream(call.upstreamUrl, {
      method,
      headers: forwardHeaders(call.request.headers),
      ...(method === "GET" || method === "HEAD" ? {} : { body: text }),
      signal: call.request.signal,
    })
    .then(
      (r) =>
        new Response(r.body, {
          status: r.status,
          statusText: r.statusText,
          headers: answerHeaders(r.headers, {}),
        }),
    );
}
