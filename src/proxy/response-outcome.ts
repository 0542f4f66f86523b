// What a model call's response comes to in the log: the response captured as it streams, and the ops that end its step.
import type { ModelResponse, RecordOp } from "../generated.js";
import { codeOf, messageOf, parseJson } from "./http-parts.js";
import { SseParser } from "./sse.js";
import type { MappedResponse, ProviderAdapter } from "./types.js";

/** Collects a response's bytes as they pass: parsed as SSE when streamed, kept whole when JSON. */
export class ResponseCapture {
  readonly #adapter: ProviderAdapter;
  readonly #parser: SseParser | undefined;
  readonly #mapper: ReturnType<ProviderAdapter["streamMapper"]> | undefined;
  readonly #whole: Uint8Array[] = [];

  constructor(adapter: ProviderAdapter, streamed: boolean) {
    this.#adapter = adapter;
    const mapper = streamed ? adapter.streamMapper() : undefined;
    this.#mapper = mapper;
    this.#parser =
      mapper === undefined ? undefined : new SseParser((e) => mapper.event(e.name, e.data));
  }

  push(bytes: Uint8Array): void {
    if (this.#parser !== undefined) this.#parser.push(bytes);
    else this.#whole.push(bytes);
  }

  /** The response mapped, once it has ended (or broken off). */
  end(): MappedResponse {
    if (this.#parser !== undefined && this.#mapper !== undefined) {
      this.#parser.end();
      return this.#mapper.end();
    }
    return this.#adapter.mapJson(parseJson(Buffer.concat(this.#whole).toString("utf8")));
  }
}

/** How the response's reading ended, for {@link outcomeOps}. */
export interface ReadEnd {
  readonly api: string;
  readonly status: number;
  /** The open step's number. */
  readonly step: number;
  /** What broke the reading, if anything did. */
  readonly failure: unknown;
  /** Whether the caller aborted the call. */
  readonly aborted: boolean;
}

/**
 * The ops a response adds to its step: its chunks, and — when the call did not finish — the
 * turn's end (`error`, or `aborted` when the caller aborted). What the provider said wins over
 * what happened after: an error event, or a finished answer, is the call's outcome even if the
 * caller then aborted (an SDK aborts the request once it has thrown an error event) or the
 * connection then broke.
 * @returns the ops, the step's `response`, and whether the ops end the turn.
 */
export function outcomeOps(
  mapped: MappedResponse,
  end: ReadEnd,
): { ops: RecordOp[]; response: ModelResponse; ended: boolean } {
  const response: ModelResponse = {
    api: end.api,
    status: end.status,
    meta: mapped.meta as object,
    ...(mapped.unmapped.length === 0 ? {} : { unmapped: mapped.unmapped }),
  };
  const ops: RecordOp[] = [];
  if (mapped.chunks.length > 0) ops.push({ op: "chunks", chunks: [...mapped.chunks] as [never] });
  if (mapped.error === undefined && mapped.finished) return { ops, response, ended: false };
  const failure = end.failure;
  const aborted = mapped.error === undefined && failure !== undefined && end.aborted;
  const why =
    mapped.error ??
    (failure !== undefined
      ? {
          message: `the upstream's response broke off: ${messageOf(failure)}`,
          code: codeOf(failure),
        }
      : { message: "the upstream's response ended before it finished", code: undefined });
  ops.push({
    op: "turn_end",
    reason: aborted
      ? { kind: "aborted", reason: why.message }
      : {
          kind: "error",
          step: end.step,
          message: why.message,
          ...(why.code === undefined ? {} : { code: why.code }),
        },
    response,
  });
  return { ops, response, ended: true };
}
