// One writer per session across machines: PostgreSQL advisory locks held on one dedicated connection.
import { Client, type ClientConfig } from "pg";
import { StorageError, show } from "../../errors.js";
import type { ReleaseLock } from "../backend.js";
import { advisoryKey } from "./connection.js";
import type { Queries } from "./statements.js";

interface Hold {
  readonly key: string;
  /** How many releases this process still owes. */
  count: number;
  /** The connection that held it ended: the server let the lock go. */
  lost: boolean;
}

/**
 * The writer locks of one backend instance: session-level advisory locks
 * (`pg_try_advisory_lock` on a 64-bit hash of schema and session id), all held on one connection
 * of their own, outside the pool — a pooled connection goes back to the pool, and one connection
 * per locked session would spend the server's connection slots on idle sessions. The server
 * releases every lock of the connection when it ends, however it ends (exit, crash, a machine
 * gone, a network cut), so no lock outlives its holder; a lock another connection holds is
 * `SESSION_BUSY`, wherever that connection comes from.
 *
 * Locks are counted, so taking one twice returns a second release. When the lock connection ends
 * unexpectedly, every lock held on it is marked lost: {@link isLost} lets writes refuse to go on
 * without it, and the next `acquire` opens a new connection.
 */
export class WriterLocks {
  readonly #config: ClientConfig;
  readonly #queries: Queries;
  readonly #schema: string;
  readonly #location: string;
  readonly #holds = new Map<string, Hold>();
  #client: Promise<Client> | undefined;
  /** Lock operations run one at a time, so that counts and the server's locks agree. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(config: ClientConfig, queries: Queries, schema: string, location: string) {
    this.#config = config;
    this.#queries = queries;
    this.#schema = schema;
    this.#location = location;
  }

  /**
   * Takes the writer lock of session `id`.
   * @throws StorageError SESSION_BUSY when another connection (another process, or another
   *   backend instance of this one) holds it.
   */
  async acquire(id: string): Promise<ReleaseLock> {
    await this.#serial(async () => {
      const hold = this.#holds.get(id);
      if (hold !== undefined && !hold.lost) {
        hold.count++;
        return;
      }
      const key = hold?.key ?? advisoryKey("seedline-writer", this.#schema, id);
      const client = await this.#connection();
      const row = await this.#queries.first(client, "tryWriterLock", { key });
      if (row?.locked !== true) throw busy(id, this.#location);
      if (hold === undefined) this.#holds.set(id, { key, count: 1, lost: false });
      else {
        hold.count++;
        hold.lost = false;
      }
    });
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#serial(() => this.#release(id));
    };
  }

  /** Whether this instance held the lock of `id` on a connection that has since ended. */
  isLost(id: string): boolean {
    return this.#holds.get(id)?.lost === true;
  }

  /** Ends the lock connection: the server releases every lock on it. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#serial(async () => {
      const client = this.#client;
      this.#client = undefined;
      this.#holds.clear();
      if (client === undefined) return;
      try {
        await (await client).end();
      } catch {
        // The connection never came up or is already gone: nothing is held on it.
      }
    });
  }

  async #release(id: string): Promise<void> {
    const hold = this.#holds.get(id);
    if (hold === undefined) return;
    hold.count--;
    if (hold.count > 0) return;
    this.#holds.delete(id);
    if (hold.lost || this.#client === undefined) return;
    try {
      await this.#queries.first(await this.#client, "releaseWriterLock", { key: hold.key });
    } catch {
      // The connection broke: the server released the lock with it.
    }
  }

  /** The lock connection, opened on first use and again after it ended. */
  #connection(): Promise<Client> {
    if (this.#closed) throw new Error(`the writer locks of ${this.#location} are closed`);
    if (this.#client === undefined) {
      const client = new Client(this.#config);
      const ended = () => this.#lose(client);
      client.on("error", ended);
      client.on("end", ended);
      const connecting = client.connect().then(
        () => client,
        (error: unknown) => {
          if (this.#client === connecting) this.#client = undefined;
          throw error;
        },
      );
      this.#client = connecting;
    }
    return this.#client;
  }

  /** The lock connection `client` ended: its locks are gone on the server. */
  #lose(client: Client): void {
    const current = this.#client;
    if (current === undefined) return;
    void current.then(
      (c) => {
        if (c !== client) return;
        this.#client = undefined;
        for (const hold of this.#holds.values()) hold.lost = true;
      },
      () => {},
    );
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

function busy(id: string, location: string): StorageError<"SESSION_BUSY"> {
  return new StorageError(
    "SESSION_BUSY",
    `expected no other writer of session ${show(id)} in ${location}, got one holding its writer lock (a PostgreSQL advisory lock)`,
    { sessionId: id },
  );
}

/** The error a write hears when this process's writer lock of `id` went with its connection. */
export function lockLost(id: string, location: string): StorageError<"SESSION_BUSY"> {
  return new StorageError(
    "SESSION_BUSY",
    `expected to hold the writer lock of session ${show(id)} in ${location}, but it was lost with its connection: another process may write the session now; load it again`,
    { sessionId: id },
  );
}
