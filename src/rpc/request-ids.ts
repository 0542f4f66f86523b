// Gives each request a connection-unique id before vscode-jsonrpc sees it, and its answer the id the client sent.
import type { Event, Message, MessageWriter } from "vscode-jsonrpc";

/** A request id as a client sent it. */
export type ClientId = string | number;

/**
 * The ids of the requests in flight on one connection. vscode-jsonrpc keys its queue of
 * undispatched requests by `String(id)`, so requests 7 and "7" in flight together, or a client
 * reusing an id, share one slot and only the last of them is ever answered. The inbound guard
 * therefore hands each request on under an internal id of its own (1, 2, 3, … per connection) and
 * {@link ClientIdWriter} writes its answer under the client's id. An entry lives from the
 * request's arrival until its answer is written, so the table holds only what is in flight.
 */
export class RequestIds {
  #last = 0;
  /** Internal id → the id the client sent. */
  readonly #clientIds = new Map<number, ClientId>();
  /** Client id → the internal ids of its requests in flight (several when the client reuses it). */
  readonly #internalIds = new Map<ClientId, Set<number>>();

  /** A fresh internal id for a request the client sent with id `id`. */
  intern(id: ClientId): number {
    const internal = ++this.#last;
    this.#clientIds.set(internal, id);
    const same = this.#internalIds.get(id);
    if (same === undefined) this.#internalIds.set(id, new Set([internal]));
    else same.add(internal);
    return internal;
  }

  /** The internal ids of the requests in flight that the client sent with id `id`. */
  inFlight(id: ClientId): readonly number[] {
    return [...(this.#internalIds.get(id) ?? [])];
  }

  /**
   * The client's id of internal id `internal`, forgotten from now on (its answer is being
   * written); undefined if no request in flight has that internal id.
   */
  release(internal: number): ClientId | undefined {
    const id = this.#clientIds.get(internal);
    if (id === undefined) return undefined;
    this.#clientIds.delete(internal);
    const same = this.#internalIds.get(id);
    same?.delete(internal);
    if (same?.size === 0) this.#internalIds.delete(id);
    return id;
  }

  /** How many requests are in flight. */
  get size(): number {
    return this.#clientIds.size;
  }
}

/**
 * The writer the connection answers through: a response to an interned request goes out under
 * the client's id, and the request is released. Notifications, and responses to ids it did not
 * hand out, pass unchanged; answers to refused messages bypass it (they carry the client's id).
 */
export class ClientIdWriter implements MessageWriter {
  readonly #inner: MessageWriter;
  readonly #ids: RequestIds;

  constructor(inner: MessageWriter, ids: RequestIds) {
    this.#inner = inner;
    this.#ids = ids;
  }

  get onError(): MessageWriter["onError"] {
    return this.#inner.onError;
  }

  get onClose(): Event<void> {
    return this.#inner.onClose;
  }

  write(message: Message): Promise<void> {
    const response = message as { id?: unknown; method?: unknown };
    if (typeof response.id === "number" && response.method === undefined) {
      const id = this.#ids.release(response.id);
      if (id !== undefined) return this.#inner.write({ ...message, id } as Message);
    }
    return this.#inner.write(message);
  }

  end(): void {
    this.#inner.end();
  }

  dispose(): void {
    this.#inner.dispose();
  }
}
