// The PostgreSQL backend's connections: the pool, one transaction per write or snapshot read, retries of serialization failures and deadlocks, and what a broken connection or a timeout is reported as.
import { Client, type ClientConfig, Pool, type PoolClient } from "pg";
import { destroyClient } from "./connection.js";
import {
  connectionLost,
  isConnectionLoss,
  isRetryable,
  isServerAnswer,
  isStatementTimeout,
  refusedByServer,
  timedOut,
} from "./pg-errors.js";
import type { Queries } from "./statements.js";
import type { PostgresTimeouts } from "./timeouts.js";

/** How often a transaction that ran into a serialization failure or deadlock is tried. */
const ATTEMPTS = 5;
const RETRY_MS = 20;

/** Waits before retry `attempt` of a serialization failure or deadlock: longer each time, jittered. */
function retryWait(attempt: number): Promise<void> {
  return new Promise((wait) => setTimeout(wait, RETRY_MS * attempt * (1 + Math.random())));
}

/**
 * A pooled connection that is never without an 'error' listener. The pool takes its own off while
 * a connection is checked out, and a connection the server terminates between two queries emits
 * 'error' with no query to fail: unheard, that event would end the process. The request on it
 * hears the loss from its next query.
 */
class ListenedClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    this.on("error", () => {});
  }
}

/**
 * A pool of connections to the store. A pooled connection that breaks is dropped by the pool
 * (idle or checked out: the pool's listener stays on each client); the next checkout reconnects.
 */
export function connectionPool(config: ClientConfig, size: number): Pool {
  const pool = new Pool({ ...config, Client: ListenedClient, max: size });
  // A request on a connection that broke hears it from its query (see Transactions).
  pool.on("error", () => {});
  return pool;
}

/**
 * The transactions of one backend on its pool: the one place that turns what a connection did
 * into the store's errors (StorageUnavailableError for a broken connection or a timeout,
 * StorageError for what the server refused) and retries what may be retried.
 */
export class Transactions {
  readonly #pool: Pool;
  readonly #queries: Queries;
  readonly #location: string;
  readonly #timeouts: PostgresTimeouts;
  #closed = false;

  constructor(pool: Pool, queries: Queries, location: string, timeouts: PostgresTimeouts) {
    this.#pool = pool;
    this.#queries = queries;
    this.#location = location;
    this.#timeouts = timeouts;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Runs `work` in one transaction (`beginWrite`: READ COMMITTED; `beginRead`: REPEATABLE READ
   * READ ONLY, several statements on one snapshot) on a pooled connection and commits it; tries
   * again on a serialization failure or deadlock (the whole transaction rolled back). Any error
   * rolls back; a broken connection is dropped from the pool and reported as
   * StorageUnavailableError (the server rolls back a transaction whose connection ends).
   */
  async transaction<T>(
    begin: "beginWrite" | "beginRead",
    what: string,
    work: (c: PoolClient) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.#connect(what);
      let committing = false;
      try {
        await this.#queries.run(c, begin, {});
        const value = await work(c);
        committing = true;
        await this.#queries.run(c, "commit", {});
        c.release();
        return value;
      } catch (error) {
        let broken = isConnectionLoss(error);
        if (!broken) {
          try {
            await this.#queries.run(c, "rollback", {});
          } catch {
            broken = true;
          }
        }
        if (broken) {
          this.#drop(c, error);
          throw connectionLost(error, this.#location, what, committing);
        }
        c.release();
        if (isStatementTimeout(error)) {
          // A COMMIT cancelled late may have landed (it waits only for replication).
          if (committing) throw connectionLost(error, this.#location, what, true);
          throw timedOut(error, this.#location, what, this.#timeouts.statementMs);
        }
        if (isRetryable(error) && attempt < ATTEMPTS) {
          await retryWait(attempt);
          continue;
        }
        throw refusedByServer(error, this.#location);
      }
    }
  }

  /** Runs `work` in one REPEATABLE READ READ ONLY transaction: several statements, one snapshot. */
  read<T>(what: string, work: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.transaction("beginRead", what, work);
  }

  /**
   * Runs `work` outside an explicit transaction on a pooled connection: reads, or (`writes`)
   * statements that are each a whole write, committing or changing nothing on their own, which are
   * retried on a serialization failure or deadlock as in {@link transaction}. A connection that
   * broke is dropped; a write is then known not to have landed when the server answered its
   * statement with an error (the statement failed), and may have landed when the connection broke
   * with no answer (`commitUnknown`).
   */
  async withClient<T>(
    what: string,
    work: (c: PoolClient) => Promise<T>,
    writes?: "writes",
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.#connect(what);
      try {
        const value = await work(c);
        c.release();
        return value;
      } catch (error) {
        if (isConnectionLoss(error)) {
          this.#drop(c, error);
          const unanswered = writes !== undefined && !isServerAnswer(error);
          throw connectionLost(error, this.#location, what, unanswered);
        }
        c.release();
        if (isStatementTimeout(error)) {
          throw timedOut(error, this.#location, what, this.#timeouts.statementMs);
        }
        if (writes !== undefined && isRetryable(error) && attempt < ATTEMPTS) {
          await retryWait(attempt);
          continue;
        }
        throw refusedByServer(error, this.#location);
      }
    }
  }

  /** @throws Error when the backend is closed. */
  assertOpen(): void {
    if (this.#closed) throw new Error(`the PostgreSQL backend of ${this.#location} is closed`);
  }

  /** Refuses every later transaction (the backend is closing); the pool stays until {@link end}. */
  markClosed(): void {
    this.#closed = true;
  }

  /**
   * Closes the pool. A pooled connection ends once the server says goodbye, which a server that
   * cannot be reached never does: the wait is bounded by the connect timeout, then the sockets are
   * left to the process's end.
   */
  async end(): Promise<void> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#timeouts.connectMs || 10_000);
      timer.unref();
    });
    await Promise.race([this.#pool.end().catch(() => {}), bound]);
    clearTimeout(timer);
  }

  /**
   * Gives back a connection that broke (or whose answer is late): the pool forgets it, and its
   * socket is destroyed at once, so that nothing waits on a server that cannot be reached.
   */
  #drop(c: PoolClient, error: unknown): void {
    c.release(error instanceof Error ? error : true);
    destroyClient(c);
  }

  async #connect(what: string): Promise<PoolClient> {
    this.assertOpen();
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw connectionLost(error, this.#location, what, false);
    }
  }
}
