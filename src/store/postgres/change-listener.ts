// Hears every process's writes to a PostgreSQL store: one dedicated LISTEN connection, reconnected with a capped backoff.
import { Client, type ClientConfig, type Notification } from "pg";
import { destroyClient } from "./connection.js";
import type { Queries } from "./statements.js";

/** What a {@link ChangeListener} reports to its backend. */
export interface ChangeListenerHooks {
  /** A write to session `id` committed (in any process, this one included). */
  readonly onChange: (id: string) => void;
  /**
   * The listener is listening (the first time, or again after its connection was lost): changes
   * committed while it was not may have been missed.
   */
  readonly onListening: () => void;
  /** The listening connection failed or could not be made; the listener tries again by itself. */
  readonly onError: (error: unknown) => void;
}

/** The first wait before connecting again; it doubles with each failure in a row, up to the cap. */
const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 5_000;

/**
 * The LISTEN side of a backend's change notifications. Every write transaction of every backend
 * on the schema runs notifyChange (pg_notify on the schema's channel, the session id as payload),
 * which PostgreSQL delivers at commit to each connection LISTENing on that channel. This class
 * keeps one such connection of its own, outside the pool (a pooled connection goes back to the
 * pool, and LISTEN belongs to one connection). It is opened by {@link start} and closed by
 * {@link stop}; when it is lost, it is made again after a backoff that doubles up to
 * {@link MAX_RETRY_MS}, and {@link ChangeListenerHooks.onListening} is called once it listens
 * again. Failures never escape: they go to {@link ChangeListenerHooks.onError}.
 *
 * A connection cut without a word (a network partition) hears nothing and says nothing: every
 * `heartbeatMs` the listener sends LISTEN again (a no-op on a live connection); an answer later
 * than the query timeout drops the connection and makes a new one. Connecting is bounded by the
 * connect timeout, and a dropped connection is destroyed, never waited on.
 */
export class ChangeListener {
  readonly #config: ClientConfig;
  readonly #queries: Queries;
  readonly #hooks: ChangeListenerHooks;
  /** Whether a connection is wanted (between start and stop). */
  #wanted = false;
  /** The current connection, connecting or listening; undefined while none is (or waiting to retry). */
  #client: Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  readonly #heartbeatMs: number;
  /** Connections lost or refused since the last one that listened. */
  #failures = 0;

  /** @param heartbeatMs how often a listening connection is probed; 0: never. */
  constructor(config: ClientConfig, queries: Queries, hooks: ChangeListenerHooks, heartbeatMs = 0) {
    this.#heartbeatMs = heartbeatMs;
    this.#config = config;
    this.#queries = queries;
    this.#hooks = hooks;
  }

  /** Starts listening, unless it already does (or is connecting, or waiting to retry). */
  start(): void {
    this.#wanted = true;
    if (this.#client === undefined && this.#retry === undefined) this.#connect();
  }

  /** Stops listening and closes the connection. Never rejects; idempotent. */
  async stop(): Promise<void> {
    this.#wanted = false;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    const client = this.#client;
    this.#client = undefined;
    this.#failures = 0;
    if (client === undefined) return;
    // Destroyed, not ended: a server that cannot be reached never answers a goodbye.
    destroyClient(client);
  }

  #connect(): void {
    const client = new Client(this.#config);
    this.#client = client;
    let lost = false;
    // A failed connect, an error event and the end event may all report one loss: act once.
    const lose = (error: unknown) => {
      if (lost) return;
      lost = true;
      // A connection this listener closed or replaced is no loss.
      if (this.#client !== client) return;
      this.#client = undefined;
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
      if (error !== undefined) this.#report(error);
      destroyClient(client);
      this.#retryLater();
    };
    client.on("error", lose);
    client.on("end", () => lose(undefined));
    client.on("notification", (message: Notification) => {
      if (this.#client !== client || message.channel !== this.#queries.channel) return;
      if (message.payload !== undefined) this.#hooks.onChange(message.payload);
    });
    this.#listen(client).then(() => {
      if (this.#client !== client) return;
      this.#failures = 0;
      if (this.#heartbeatMs > 0) {
        this.#heartbeat = setInterval(() => {
          if (this.#client !== client) return;
          this.#queries.run(client, "listenChanges", {}).catch(lose);
        }, this.#heartbeatMs);
        this.#heartbeat.unref();
      }
      this.#hooks.onListening();
    }, lose);
  }

  #report(error: unknown): void {
    try {
      this.#hooks.onError(error);
    } catch {
      // A failing error hook must not take the process down from inside a socket event.
    }
  }

  async #listen(client: Client): Promise<void> {
    await client.connect();
    await this.#queries.run(client, "listenChanges", {});
  }

  #retryLater(): void {
    if (!this.#wanted) return;
    const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.#failures);
    this.#failures++;
    // Jitter, so that many processes cut off by one server restart do not reconnect in step.
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined;
        if (this.#wanted && this.#client === undefined) this.#connect();
      },
      wait * (0.5 + Math.random() / 2),
    );
  }
}
