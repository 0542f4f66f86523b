// The proxy's core, behind both `seedline proxy` and `seedlineFetch`: one model call recorded against the upstream or replayed.
import type { ModelResponse, RecordOp } from "../generated.js";
import type { SessionStore } from "../store/session-store.js";
import { fingerprintOf, requestDiff } from "./fingerprint.js";
import {
  answer,
  answerHeaders,
  codeOf,
  type DirectSink,
  forwardHeaders,
  messageOf,
  parseJson,
  relayable,
} from "./http-parts.js";
import { LiveCalls } from "./live-calls.js";
import { forkForLive } from "./live-fork.js";
import { chunkReaderOf } from "./node-upstream.js";
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

/** A call's request as the core reads it: a fetch `Request` is one. */
export interface CallRequest {
  readonly method: string;
  /** The caller's headers (sent on to the upstream, never stored). */
  readonly headers: Headers;
  readonly signal: AbortSignal;
  /** The body as text; read once. */
  text(): Promise<string>;
}

/** One call as a route hands it to the core. */
export interface ProxyCall {
  readonly adapter: ProviderAdapter;
  readonly request: CallRequest;
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
  readonly #live = new LiveCalls();
  /** The channels opened so far, by the session id calls name (the default session's under {@link DEFAULT_SESSION}). */
  readonly #ready = new Map<string | symbol, SessionChannel>();

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
    const ids = await Promise.all(
      all.map((c) =>
        c
          .then((x) => (x.replayedFrom === undefined ? [x.id] : [x.replayedFrom, x.id]))
          .catch(() => []),
      ),
    );
    return [...new Set(ids.flat())];
  }

  /** Answers one model call: from the upstream (recording it) or from the recording. */
  async handle(call: ProxyCall): Promise<Response> {
    const text = await call.request.text();
    const open = this.mode === "record" ? this.#opened(call.sessionId) : undefined;
    if (open !== undefined) {
      // A session already open for recording: the call goes upstream before anything is done
      // with it, so reading it for the recording never delays it (a request this proxy cannot
      // read goes the same way, unrecorded).
      const sent = sendUpstream(call, text);
      const parsed = call.adapter.parseRequest(parseBody(text));
      if (parsed === undefined) return sent.then(relayed);
      return this.#recordHeld(call, parsed, text, open, open.acquire(), sent);
    }
    const parsed = call.adapter.parseRequest(parseBody(text));
    if (this.mode === "auto" && parsed !== undefined) return this.#auto(call, parsed, text);
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
    if (parsed === undefined) return sendUpstream(call, text).then(relayed);
    return this.#record(call, parsed, text);
  }

  /** Resolves once every recording in flight (of calls already answered) is stored. */
  async settled(): Promise<void> {
    // The recordings waiting for a pause in the live calls go now.
    await this.#live.flush(async () => {
      while (this.#recordings.size > 0) await Promise.all([...this.#recordings]);
    });
  }

  /** Waits for the recordings in flight, then ends every recording's open step and turn durably. The store stays open. */
  async close(): Promise<void> {
    await this.settled();
    const all = [...this.#channels.values(), ...(this.#default ? [this.#default] : [])];
    for (const pending of all) {
      const channel = await pending.catch(() => undefined);
      await channel?.close();
    }
  }

  /** The channel of a session the calls name, once it is open (record mode: undefined until then). */
  #opened(sessionId: string | undefined): SessionChannel | undefined {
    return this.#ready.get(sessionId ?? this.#sessionId ?? DEFAULT_SESSION);
  }

  #channel(sessionId: string | undefined): Promise<SessionChannel> {
    const id = sessionId ?? this.#sessionId;
    if (id === undefined) {
      this.#default ??= this.#store.create().then((s) => {
        const channel = SessionChannel.recording(s, this.#now);
        void channel.then((c) => this.#ready.set(DEFAULT_SESSION, c));
        return channel;
      });
      return this.#default;
    }
    let channel = this.#channels.get(id);
    if (channel === undefined) {
      channel = this.#open(id);
      // A session that could not be opened is tried again by the next call.
      channel.then(
        (c) => this.#ready.set(id, c),
        () => this.#channels.delete(id),
      );
      this.#channels.set(id, channel);
    }
    return channel;
  }

  async #open(id: string): Promise<SessionChannel> {
    if (this.mode !== "record") return SessionChannel.replaying(this.#store, id);
    const existing = await this.#store.get(id);
    const session =
      existing === undefined
        ? await this.#store.create({ id })
        : await this.#store.openForWriting(id);
    return SessionChannel.recording(session, this.#now);
  }

  async #replay(call: ProxyCall, parsed: NeutralRequest): Promise<Response> {
    const opened = await this.#replayChannel(call);
    if (opened instanceof Response) return opened;
    const channel = opened;
    const release = await channel.acquire();
    try {
      const outcome = replayOutcome(channel, call.adapter, parsed);
      if (outcome instanceof Response) return outcome;
      const headers = { "x-seedline-session": channel.id, "x-seedline-replayed": "true" };
      return answer(call.adapter.errorAnswer(409, outcome.message, outcome.code), headers);
    } finally {
      release();
    }
  }

  /**
   * Auto mode: answers from the recording while the calls match it; the first that does not (or
   * that the recording cannot answer: past its end, or a call that did not finish) forks the
   * session at the last matched turn boundary and is recorded live into the child, as is every
   * later call of that session.
   */
  async #auto(call: ProxyCall, parsed: NeutralRequest, text: string): Promise<Response> {
    const opened = await this.#replayChannel(call);
    if (opened instanceof Response) return opened;
    const channel = opened;
    const release = await channel.acquire();
    if (channel.recorder === undefined) {
      try {
        const outcome = replayOutcome(channel, call.adapter, parsed);
        if (outcome instanceof Response) {
          release();
          return outcome;
        }
        await forkForLive(this.#store, channel, this.#now);
      } catch (error) {
        release();
        throw error;
      }
    }
    return this.#recordHeld(call, parsed, text, channel, Promise.resolve(release));
  }

  /** The channel of a call that replays, or the error answer when it names no session or a missing one. */
  async #replayChannel(call: ProxyCall): Promise<SessionChannel | Response> {
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
    try {
      return await this.#channel(call.sessionId);
    } catch (error) {
      return answer(
        adapter.errorAnswer(404, messageOf(error), codeOf(error) ?? "SESSION_NOT_FOUND"),
      );
    }
  }

  async #record(call: ProxyCall, parsed: NeutralRequest, text: string): Promise<Response> {
    const channel = await this.#channel(call.sessionId);
    // The call goes upstream and its bytes to the caller at once; only its recording waits its turn.
    return this.#recordHeld(call, parsed, text, channel, channel.acquire());
  }

  /**
   * Records one call into `channel` once its turn comes (`turn` resolves with the function that
   * lets the next call go; nothing of the call is written before then).
   * The request goes upstream at once; the upstream's bytes go to the caller as they arrive and
   * the caller's body ends when the upstream's does. The step is recorded after, as one batch
   * (its opening events, the chunks, the message and its end: one durable write), once the live
   * calls pause (see {@link LiveCalls}), the turn held until it is stored: what fails then goes to
   * `onRecordError`, never to the answer already given.
   */
  async #recordHeld(
    call: ProxyCall,
    parsed: NeutralRequest,
    text: string,
    channel: SessionChannel,
    turn: Promise<() => void>,
    sent?: Promise<Response>,
  ): Promise<Response> {
    const recorder = channel.recorder;
    if (recorder === undefined) {
      void turn.then((release) => release());
      throw new TypeError("expected a recording channel");
    }
    const ended = this.#live.begin();
    const upstreamAnswer = sent ?? sendUpstream(call, text);
    const api = call.adapter.api;
    const fingerprint = fingerprintOf(api, parsed);
    const headers = { "x-seedline-session": channel.id, "x-seedline-replayed": "false" };
    /**
     * Records the step once its turn comes and the live calls pause: the ops the request implies
     * before it (turn inference), then those `rest` gives for the step's number, in one batch.
     */
    const recordStep = (rest: (step: number) => Promise<StepEnd>): Promise<void> =>
      this.#track(async () => {
        const release = await turn;
        try {
          await this.#live.quiet(this.#recordings.size);
          const state = await recorder.record([]);
          const opening = opsBeforeCall(
            state,
            channel.previous,
            parsed,
            fingerprint,
            channel.pendingResponse,
          );
          const opensTurn = opening.some((op) => op.op === "turn_start");
          const end = await rest(opensTurn ? 1 : recorder.lastStep + 1);
          await this.#live.quiet(this.#recordings.size);
          await recorder.record([...opening, ...end.ops]);
          channel.previous = fingerprint;
          // A step whose tool calls wait for results ends when the next request brings them.
          channel.pendingResponse = end.pending;
        } catch (error) {
          this.#onRecordError(error);
        } finally {
          release();
        }
      });
    const fail =
      (message: string, code: string | undefined, response: ModelResponse, aborted = false) =>
      async (step: number): Promise<StepEnd> => ({
        ops: [
          {
            op: "turn_end",
            reason: aborted
              ? { kind: "aborted", reason: message }
              : { kind: "error", step, message, ...(code === undefined ? {} : { code }) },
            response,
          },
        ],
        pending: undefined,
      });
    let upstream: Response;
    try {
      upstream = await upstreamAnswer;
    } catch (error) {
      ended();
      await recordStep(
        fail(
          `the upstream failed: ${messageOf(error)}`,
          codeOf(error),
          { api },
          call.request.signal.aborted,
        ),
      );
      throw error;
    }
    const responseHeaders = answerHeaders(upstream.headers, headers);
    const status = upstream.status;
    if (status >= 400 || upstream.body === null) {
      let errorText: string;
      try {
        errorText = await upstream.text();
      } catch (error) {
        ended();
        await recordStep(
          fail(`the upstream failed: ${messageOf(error)}`, codeOf(error), { api, status }),
        );
        throw error;
      } finally {
        ended();
      }
      const errorBody = parseJson(errorText);
      const { message, code } = call.adapter.errorOf(status, errorBody);
      void recordStep(
        fail(message, code, {
          api,
          status,
          ...(errorBody === undefined ? {} : { error: errorBody }),
        }),
      );
      return new Response(errorText, { status, headers: responseHeaders });
    }
    const streamed = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    // The bytes as they came, parsed once the caller's body has ended: nothing on the way delays them.
    const received: Uint8Array[] = [];
    let bodyEnded!: (end: { failure: unknown; aborted: boolean }) => void;
    const bodyEnd = new Promise<{ failure: unknown; aborted: boolean }>((resolve) => {
      bodyEnded = resolve;
    });
    void recordStep(async (step) => {
      const { failure, aborted } = await bodyEnd;
      const capture = new ResponseCapture(call.adapter, streamed);
      // Parsed in slices, each once the live calls pause.
      let size = 0;
      for (const bytes of received) {
        capture.push(bytes);
        size += bytes.length;
        if (size >= PARSE_SLICE) {
          size = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
          await this.#live.quiet(this.#recordings.size);
        }
      }
      received.length = 0;
      const mapped = capture.end();
      const outcome = outcomeOps(mapped, { api, status, step, failure, aborted });
      if (outcome.ended) return { ops: outcome.ops, pending: undefined };
      const toolCalls = mapped.chunks.some(
        (c) => c.type === "block-start" && c.blockType === "tool-call",
      );
      return toolCalls
        ? { ops: outcome.ops, pending: outcome.response }
        : {
            ops: [...outcome.ops, { op: "step_end", response: outcome.response }],
            pending: undefined,
          };
    });
    const reader = chunkReaderOf(upstream);
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let cancelled = false;
    // A server that takes the body straight (see relayDirect) gets every chunk through `sink`;
    // once one chunk went into the Response's stream, the body is read from there.
    let sink: DirectSink | undefined;
    let enqueued = false;
    // The upstream's body is read once a server takes it (relayDirect), once the caller reads
    // the Response's body, or at the next turn of the event loop, whichever comes first: read at
    // once, its first chunks would go into the Response's stream before a server could take it.
    let pumped: Promise<unknown> | undefined;
    const start = (): Promise<unknown> => {
      pumped ??= pump();
      return pumped;
    };
    const body = new ReadableStream<Uint8Array>(
      {
        start(c) {
          controller = c;
        },
        pull() {
          void start();
        },
        cancel() {
          // The caller stopped reading; the upstream's answer is still read to the end and recorded.
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    /** Reads the upstream's body to its end; resolves with what broke it off, if anything. */
    const pump = async (): Promise<unknown> => {
      let failure: unknown;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || value === undefined) break;
          received.push(value);
          if (sink !== undefined) {
            if (!sink.gone && !sink.write(value)) await sink.drained();
          } else if (!cancelled) {
            enqueued = true;
            controller.enqueue(value);
          }
        }
      } catch (error) {
        failure = error;
      }
      // Whether the caller had aborted when the body ended: an SDK aborts once it sees the error.
      bodyEnded({ failure, aborted: call.request.signal.aborted });
      if (sink === undefined && !cancelled) {
        if (failure === undefined) controller.close();
        else controller.error(failure);
      }
      ended();
      return failure;
    };
    // Nobody took the body or read it: it is read anyway, for the recording.
    setImmediate(() => void start());
    const response = new Response(body, {
      status,
      statusText: upstream.statusText,
      headers: responseHeaders,
    });
    return relayable(response, (direct) => {
      if (enqueued || cancelled) return undefined;
      sink = direct;
      return start().then((failure) => {
        if (failure !== undefined) throw failure;
      });
    });
  }

  /** Runs a recording that follows an answer, so {@link settled} and {@link close} wait for it. */
  #track(work: () => Promise<void>): Promise<void> {
    const recording = work();
    this.#recordings.add(recording);
    void recording.finally(() => this.#recordings.delete(recording));
    return recording;
  }
}

/** The key of the session of calls that name none, among the open channels. */
const DEFAULT_SESSION = Symbol("default session");

/** Bytes of a response parsed between two turns of the event loop. */
const PARSE_SLICE = 32 * 1024;

/** How a call's step ends: the ops after its chunks, and the response kept for a step whose tool calls wait for results. */
interface StepEnd {
  readonly ops: readonly RecordOp[];
  readonly pending: ModelResponse | undefined;
}

/** A refusal of replay: what the recording cannot answer (auto mode goes live instead). */
interface Refusal {
  readonly code: "REPLAY_EXHAUSTED" | "REPLAY_MISMATCH" | "REPLAY_INCOMPLETE";
  readonly message: string;
}

/**
 * The answer to the next call of a replaying channel from its recording (advancing its cursor),
 * or why the recording has none for it (the cursor stays).
 */
function replayOutcome(
  channel: SessionChannel,
  adapter: ProviderAdapter,
  parsed: NeutralRequest,
): Response | Refusal {
  const n = channel.cursor;
  const recorded = channel.calls[n];
  if (recorded === undefined) {
    const message = `no more recorded calls: session ${channel.id} recorded ${channel.calls.length}, this is call ${n + 1}`;
    return { code: "REPLAY_EXHAUSTED", message };
  }
  const fingerprint = fingerprintOf(adapter.api, parsed);
  const diff =
    recorded.start.request === undefined
      ? []
      : requestDiff(recorded.start.request, fingerprint, parsed.messages);
  const place = `call ${n + 1} (turn ${recorded.start.turn}, step ${recorded.start.step})`;
  if (diff.length > 0) {
    const message = `the request differs from recorded ${place} of session ${channel.id}:\n${diff.join("\n")}`;
    return { code: "REPLAY_MISMATCH", message };
  }
  const finished = recorded.chunks.some((c) => c.type === "finish");
  const failedStatus = (recorded.end?.response?.status ?? 200) >= 400;
  if (!finished && recorded.error === undefined && !failedStatus) {
    // Interrupted by a crash or aborted by its caller: what the model would have said is unknown.
    const message = `recorded ${place} of session ${channel.id} did not finish (interrupted or aborted): it has no faithful replay`;
    return { code: "REPLAY_INCOMPLETE", message };
  }
  channel.cursor = n + 1;
  const headers = { "x-seedline-session": channel.id, "x-seedline-replayed": "true" };
  return answer(adapter.render(recorded, parsed.stream), headers);
}

/** The request body as JSON, or undefined when it is not JSON. */
function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Sends a call on to the upstream as it came (a fetch that throws at once gives a rejected promise). */
function sendUpstream(call: ProxyCall, text: string): Promise<Response> {
  const method = call.request.method;
  try {
    return call.upstream(call.upstreamUrl, {
      method,
      headers: forwardHeaders(call.request.headers),
      ...(method === "GET" || method === "HEAD" ? {} : { body: text }),
      signal: call.request.signal,
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The upstream's answer to a call this proxy does not record, as the caller gets it. */
function relayed(r: Response): Response {
  return new Response(r.body, {
    status: r.status,
    statusText: r.statusText,
    headers: answerHeaders(r.headers, {}),
  });
}
