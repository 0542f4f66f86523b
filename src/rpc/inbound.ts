// The server's inbound guard: lets only JSON-RPC requests and notifications through to the connection, and turns
// everything else (unparsable lines, oversized messages, batches, malformed requests) into protocol errors to answer.
import {
  type DataCallback,
  type Disposable,
  Emitter,
  type Event,
  type Message,
  type MessageReader,
  type NotificationMessage,
  type PartialMessageInfo,
  type RequestMessage,
} from "vscode-jsonrpc";
import { ProtocolError } from "./error-mapping.js";
import { FramingError } from "./ndjson-framing.js";
import type { ClientId, RequestIds } from "./request-ids.js";

/** vscode-jsonrpc's cancellation notification; `params.id` names the request to cancel. */
const CANCEL_METHOD = "$/cancelRequest";

/** A JSON-RPC request id; `null` answers a message whose id could not be read. */
export type ReplyId = string | number | null;

/** A message refused before dispatch, and the error to answer it with (or none, for a notification). */
export interface Rejection {
  readonly id: ReplyId;
  readonly error: ProtocolError;
}

/** What the guard makes of one parsed value. */
export type Checked =
  | { readonly kind: "request" | "notification"; readonly message: Message }
  | { readonly kind: "rejected"; readonly rejection: Rejection }
  /** A response, or a broken notification: nothing to run and nobody to answer; logged. */
  | { readonly kind: "dropped"; readonly reason: string };

/**
 * Classifies one parsed JSON value as the server sees it (JSON-RPC 2.0 §4–§6):
 * - an array (a batch) → one INVALID_REQUEST with id null: batches are not supported (ACP does
 *   the same);
 * - not an object, `jsonrpc` other than "2.0", a non-string `method`, an `id` that is null or not a
 *   string/number, `params` that is not an object (params are by name), or neither a method nor a
 *   result/error → INVALID_REQUEST, answered with the message's id when it has a usable one;
 * - a response (`result`/`error`) → dropped: this server sends no requests, and answering a
 *   response could make two peers loop;
 * - a notification (no `id`) with broken params, or a `$/cancelRequest` whose `params.id` is not a
 *   string or a number → dropped (notifications are never answered; vscode-jsonrpc would throw
 *   on such a cancel, out of the reader).
 */
export function checkMessage(value: unknown): Checked {
  if (Array.isArray(value)) {
    return rejected(null, "expected one JSON-RPC message, got a batch (batches are not supported)");
  }
  if (typeof value !== "object" || value === null) {
    return rejected(null, `expected a JSON-RPC message object, got ${typeOf(value)}`);
  }
  const message = value as Record<string, unknown>;
  const id = message.id;
  const replyId: ReplyId = typeof id === "string" || isFiniteNumber(id) ? id : null;
  if (message.jsonrpc !== "2.0") {
    return rejected(replyId, `expected "jsonrpc": "2.0", got ${typeOf(message.jsonrpc)}`);
  }
  if (Object.hasOwn(message, "method")) {
    if (typeof message.method !== "string") {
      return rejected(replyId, `expected a string "method", got ${typeOf(message.method)}`);
    }
    const params = message.params;
    const paramsOk =
      params === undefined ||
      (typeof params === "object" && params !== null && !Array.isArray(params));
    if (id === undefined) {
      if (!paramsOk) return { kind: "dropped", reason: "a notification with params by position" };
      if (message.method === CANCEL_METHOD) {
        const cancelled = (params as { id?: unknown } | undefined)?.id;
        if (typeof cancelled !== "string" && !isFiniteNumber(cancelled)) {
          return {
            kind: "dropped",
            reason: `a ${CANCEL_METHOD} without a string or number "id", got ${typeOf(cancelled)}`,
          };
        }
      }
      return { kind: "notification", message: message as unknown as Message };
    }
    if (replyId === null) {
      return rejected(null, `expected an "id" that is a string or a number, got ${typeOf(id)}`);
    }
    if (!paramsOk) {
      return rejected(
        replyId,
        `expected "params" to be an object (by name), got ${typeOf(params)}`,
      );
    }
    return { kind: "request", message: message as unknown as Message };
  }
  if (Object.hasOwn(message, "result") || Object.hasOwn(message, "error")) {
    return { kind: "dropped", reason: `a response (id ${JSON.stringify(id)}) to no request` };
  }
  return rejected(
    replyId,
    'expected a request ("method" and "id"), got neither a method nor a result',
  );
}

/**
 * A `MessageReader` that wraps a framing reader and passes on only requests and notifications.
 * Refused messages fire `onRejected` (the server answers them); framing failures of the inner
 * reader (a {@link FramingError}: a line that is not JSON, a message over the size limit) fire
 * `onRejected` too, with the id read from a too-large message's head, else id null; other read errors pass through `onError`. Counts the requests
 * it passed on, so that a shutdown can tell when the connection has dispatched them all.
 *
 * Each request is passed on under an internal id from `ids` (see {@link RequestIds}: the client's
 * ids need not be unique as vscode-jsonrpc counts them), and a `$/cancelRequest` under the
 * internal ids of the requests in flight it names; one that names none is dropped, since its id
 * could be some other request's internal id.
 */
export class CheckedMessageReader implements MessageReader {
  readonly #inner: MessageReader;
  readonly #log: (line: string) => void;
  readonly #ids: RequestIds;
  readonly #rejected = new Emitter<Rejection>();
  readonly #errors = new Emitter<Error>();
  readonly #subscriptions: Disposable[] = [];
  #listening: Disposable | undefined;
  #stopped = false;
  #requests = 0;

  constructor(inner: MessageReader, log: (line: string) => void, ids: RequestIds) {
    this.#inner = inner;
    this.#log = log;
    this.#ids = ids;
    this.#subscriptions.push(
      inner.onError((error) => {
        if (this.#stopped) return;
        if (error instanceof FramingError) {
          const kind = error.failure === "parse" ? "PARSE_ERROR" : "INVALID_REQUEST";
          this.#rejected.fire({
            id: error.id,
            error: new ProtocolError(kind, error.message, undefined),
          });
        } else {
          this.#errors.fire(error);
        }
      }),
    );
  }

  /** Messages refused before dispatch, with the error each is to be answered with. */
  get onRejected(): Event<Rejection> {
    return this.#rejected.event;
  }

  get onError(): Event<Error> {
    return this.#errors.event;
  }

  get onClose(): Event<void> {
    return this.#inner.onClose;
  }

  get onPartialMessage(): Event<PartialMessageInfo> {
    return this.#inner.onPartialMessage;
  }

  /** How many requests have been passed to the listener so far. */
  get requestCount(): number {
    return this.#requests;
  }

  listen(callback: DataCallback): Disposable {
    this.#listening = this.#inner.listen((value) => {
      if (this.#stopped) return;
      const checked = checkMessage(value);
      switch (checked.kind) {
        case "request": {
          this.#requests++;
          const request = checked.message as RequestMessage;
          callback({ ...request, id: this.#ids.intern(request.id as ClientId) } as Message);
          return;
        }
        case "notification":
          if ((checked.message as NotificationMessage).method === CANCEL_METHOD) {
            this.#cancel(checked.message as NotificationMessage, callback);
          } else {
            callback(checked.message);
          }
          return;
        case "rejected":
          this.#rejected.fire(checked.rejection);
          return;
        case "dropped":
          this.#log(`ignored ${checked.reason}`);
          return;
      }
    });
    return this.#listening;
  }

  /** Passes on `message` (a checked `$/cancelRequest`) once per request in flight it names. */
  #cancel(message: NotificationMessage, callback: DataCallback): void {
    const params = message.params as { id: ClientId };
    const internal = this.#ids.inFlight(params.id);
    if (internal.length === 0) {
      this.#log(
        `ignored a ${CANCEL_METHOD} for id ${JSON.stringify(params.id)}: no request with that id is in flight`,
      );
      return;
    }
    for (const id of internal) callback({ ...message, params: { ...params, id } } as Message);
  }

  /** Stops reading: nothing read from now on reaches the listener or `onRejected`. */
  stop(): void {
    this.#stopped = true;
    this.#listening?.dispose();
  }

  dispose(): void {
    for (const subscription of this.#subscriptions) subscription.dispose();
    this.#rejected.dispose();
    this.#errors.dispose();
    this.#inner.dispose();
  }
}

function rejected(id: ReplyId, message: string): Checked {
  return {
    kind: "rejected",
    rejection: { id, error: new ProtocolError("INVALID_REQUEST", message, undefined) },
  };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value === undefined) return "nothing";
  return `a ${typeof value}`;
}
