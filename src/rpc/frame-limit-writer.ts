// The server's outgoing guard: no frame over the 32 MiB limit is written; a response past it becomes RESPONSE_TOO_LARGE.
import { constants } from "node:buffer";
import type { Event, Message, MessageWriter } from "vscode-jsonrpc";
import { toResponseError } from "./error-mapping.js";
import { MAX_MESSAGE_BYTES, responseTooLarge, smallerAnswerOf } from "./frame-limit.js";
import { NdjsonMessageWriter } from "./ndjson-framing.js";

/**
 * A `MessageWriter` that measures every message before the framing writes it (serialized once:
 * an NDJSON writer is handed the text). A response over `maxBytes` whose result was marked
 * {@link cuttable} carries the smaller answer instead (a first page, a first part); any other
 * response over it is replaced by a RESPONSE_TOO_LARGE error response for the same id (data
 * `{code, limit, size}`), so the request is still answered; any other message over it (a
 * notification) is not written and the write rejects with that error (the sender splits its
 * notifications so that this does not happen).
 */
export class FrameLimitWriter implements MessageWriter {
  readonly #inner: MessageWriter;
  readonly #log: (line: string) => void;
  readonly #maxBytes: number;

  constructor(inner: MessageWriter, log: (line: string) => void, maxBytes = MAX_MESSAGE_BYTES) {
    this.#inner = inner;
    this.#log = log;
    this.#maxBytes = maxBytes;
  }

  get onError(): MessageWriter["onError"] {
    return this.#inner.onError;
  }

  get onClose(): Event<void> {
    return this.#inner.onClose;
  }

  /**
   * Writes `message`, or its replacement when it is over the limit.
   * @throws SeedlineError RESPONSE_TOO_LARGE (as a rejection) for a notification over the limit.
   */
  write(message: Message): Promise<void> {
    let json = serialized(message);
    let size = this.#size(json);
    if (json !== undefined && size <= this.#maxBytes) return this.#send(message, json);
    const { id, method, result } = message as {
      id?: string | number | null;
      method?: unknown;
      result?: unknown;
    };
    if (method === undefined && id !== undefined) {
      const smaller = smallerAnswerOf(result);
      if (smaller !== undefined) {
        const cut = { ...message, result: smaller() } as Message;
        json = serialized(cut);
        size = this.#size(json);
        if (json !== undefined && size <= this.#maxBytes) return this.#send(cut, json);
      }
      const error = responseTooLarge(size, "a response", this.#maxBytes);
      this.#log(`answered id ${JSON.stringify(id)} with RESPONSE_TOO_LARGE: ${error.message}`);
      const wire = toResponseError(error, this.#log).toJson();
      return this.#inner.write({ jsonrpc: "2.0", id, error: wire } as Message);
    }
    const error = responseTooLarge(size, `a ${String(method)} notification`, this.#maxBytes);
    this.#log(`did not send a message: ${error.message}`);
    return Promise.reject(error);
  }

  /**
   * The UTF-8 size of `json`, or 0 when it is surely within the limit (a code unit takes at most 3
   * bytes); for a message longer than the longest string, that length (it is at least as long).
   */
  #size(json: string | undefined): number {
    if (json === undefined) return constants.MAX_STRING_LENGTH;
    return json.length * 3 <= this.#maxBytes ? 0 : Buffer.byteLength(json, "utf8");
  }

  #send(message: Message, json: string): Promise<void> {
    return this.#inner instanceof NdjsonMessageWriter
      ? this.#inner.writeSerialized(message, json)
      : this.#inner.write(message);
  }

  end(): void {
    this.#inner.end();
  }

  dispose(): void {
    this.#inner.dispose();
  }
}

/**
 * `message` as JSON, or undefined when its JSON would be longer than the longest string the
 * runtime can make (JSON.stringify throws a RangeError): an answer past the frame limit by far.
 */
function serialized(message: Message): string | undefined {
  try {
    return JSON.stringify(message);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
