// The server's outgoing guard: no frame over the 32 MiB limit is written; a response past it becomes RESPONSE_TOO_LARGE.
import type { Event, Message, MessageWriter } from "vscode-jsonrpc";
import { toResponseError } from "./error-mapping.js";
import { jsonBytes, MAX_MESSAGE_BYTES, responseTooLarge } from "./frame-limit.js";

/**
 * A `MessageWriter` that measures every message before the framing writes it. A response over
 * `maxBytes` is replaced by a RESPONSE_TOO_LARGE error response for the same id (data `{code,
 * limit, size}`), so the request is still answered; any other message over it (a notification)
 * is not written and the write rejects with that error (the sender splits its notifications so
 * this does not happen). Each message is serialized once more to be measured.
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
    const size = jsonBytes(message);
    if (size <= this.#maxBytes) return this.#inner.write(message);
    const { id, method } = message as { id?: string | number | null; method?: unknown };
    if (method === undefined && id !== undefined) {
      const error = responseTooLarge(size, "a response", this.#maxBytes);
      this.#log(`answered id ${JSON.stringify(id)} with RESPONSE_TOO_LARGE: ${error.message}`);
      const json = toResponseError(error, this.#log).toJson();
      return this.#inner.write({ jsonrpc: "2.0", id, error: json } as Message);
    }
    const error = responseTooLarge(size, `a ${String(method)} notification`, this.#maxBytes);
    this.#log(`did not send a message: ${error.message}`);
    return Promise.reject(error);
  }

  end(): void {
    this.#inner.end();
  }

  dispose(): void {
    this.#inner.dispose();
  }
}
