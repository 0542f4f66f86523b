// One writer per session across machines: PostgreSQL advisory locks held on one dedicated connection.
import { Client, type ClientConfig, type PoolClient } from "pg";
import { StorageError, StorageUnavailableError, show } from "../../errors.js";
import type { PostgresQueryRows } from "../../generated.js";
import type { ReleaseLock } from "../backend.js";
import { advisoryKey, destroyClient } from "./connection.js";
import { isConnectionLoss } from "./pg-errors.js";
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
 * unexpectedly (or a statement on it fails with the connection, or its answer is late past the
 * query timeout: the connection is then dropped), every lock held on it is marked lost:
 * {@link holder} tells writes so, and the next `acquire` opens a new connection. A write does not
 * trust the mark alone (a connection can be gone before the client hears of it): it checks in
 * its own transaction that the lock connection still holds the lock (writerLockHeld), and a new
 * holder waits for the writes so checked to end before it reads (takeWriterLock).
 */
export class WriterLocks {
  readonly #config: ClientConfig;
  readonly #queries: Queries;
  readonly #schema: string;
  readonly #location: string;
  readonly #holds = new Map<string, Hold>();
  #client: Promise<Client> | undefined;
  /** The backend pid of the lock connection, once it is up. */
  #pid: number | undefined;
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
      try {
        // One round trip: the lock, then the wait for the writes of a holder just gone.
        let row: PostgresQueryRows["takeWriterLock"] | undefined;
        try {
          row = await this.#queries.first(client, "takeWriterLock", { key, sessionId: id });
        } catch (error) {
          // A session-level lock outlives a statement that failed after taking it (in the wait).
          if (!isConnectionLoss(error)) {
            await this.#queries.first(client, "releaseWriterLock", { key });
          }
          throw error;
        }
        if (row?.locked !== true) throw busy(id, this.#location);
      } catch (error) {
        if (isConnectionLoss(error)) this.#discard(client);
        throw error;
      }
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

  /**
   * Where this instance holds the lock of `id`: its key and the backend pid of the connection
   * that holds it (for writerLockHeld); `lost` when it held it on a connection that has since
   * ended; undefined when it does not hold it.
   */
  holder(id: string): { readonly key: string; readonly pid: number } | "lost" | undefined {
    const hold = this.#holds.get(id);
    if (hold === undefined) return undefined;
    if (hold.lost || this.#pid === undefined) return "lost";
    return { key: hold.key, pid: this.#pid };
  }

  /**
   * A write found that the lock connection no longer holds the lock of `id` (the connection is
   * gone, or going): drops the connection, so that every lock on it counts as lost and the next
   * `acquire` takes them again on a new one.
   */
  markLost(id: string): void {
    const hold = this.#holds.get(id);
    if (hold !== undefined) hold.lost = true;
    const current = this.#client;
    if (current === undefined) return;
    void current.then(
      (c) => this.#discard(c),
      () => {},
    );
  }

  /**
   * Where the writer lock of `id` is held, or undefined when this instance does not hold it.
   * @throws StorageUnavailableError when it held it on a connection that has since ended.
   */
  heldOrThrow(id: string): { readonly key: string; readonly pid: number } | undefined {
    const holder = this.holder(id);
    if (holder === "lost") throw lockLost(id, this.#location);
    return holder;
  }

  /**
   * Checks, in the transaction of `c` (a pooled connection, not the lock connection) and after
   * the session row is locked, that the writer lock of `id` this instance holds (if it holds it)
   * is still held by its connection.
   * @throws StorageUnavailableError when it is not.
   */
  async assertHeld(c: PoolClient, id: string): Promise<void> {
    const holder = this.heldOrThrow(id);
    if (holder === undefined) return;
    const row = await this.#queries.first(c, "writerLockHeld", {
      pid: holder.pid,
      key: holder.key,
    });
    if (row?.held !== true) this.gone(id);
  }

  /** A write found the lock of `id` gone: {@link markLost}, then the error that says so. */
  gone(id: string): never {
    this.markLost(id);
    throw lockLost(id, this.#location);
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
        // Destroyed, not ended: a server that cannot be reached never answers a goodbye.
        destroyClient(await client);
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
    const client = await this.#client.catch(() => undefined);
    if (client === undefined) return;
    try {
      await this.#queries.first(client, "releaseWriterLock", { key: hold.key });
    } catch {
      // The connection broke (the server released the lock with it), or the answer is late: drop
      // the connection, so that no lock this instance let go of stays held.
      this.#discard(client);
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
        () => {
          if (this.#client === connecting)
            this.#pid = (client as { processID?: number | null }).processID ?? undefined;
          return client;
        },
        (error: unknown) => {
          if (this.#client === connecting) this.#client = undefined;
          throw error;
        },
      );
      this.#client = connecting;
    }
    return this.#client;
  }

  /** Drops `client` (at once, without waiting for the server) and counts its locks lost. */
  #discard(client: Client): void {
    this.#lose(client);
    destroyClient(client);
  }

  /** The lock connection `client` ended: its locks are gone on the server. */
  #lose(client: Client): void {
    const current = this.#client;
    if (current === undefined) return;
    void current.then(
      (c) => {
        if (c !== client || this.#client !== current) return;
        this.#client = undefined;
        this.#pid = undefined;
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

/**
 * The error a write hears when this process's writer lock of `id` went with its connection:
 * nothing was stored. The store lets the lock go; the next write takes it again (when no other
 * process took it meanwhile) and reads what was stored in between.
 */
export function lockLost(id: string, location: string): StorageUnavailableError {
  return new StorageUnavailableError(
    "STORAGE_UNAVAILABLE",
    `expected to hold the writer lock of session ${show(id)} in ${location}, got it lost with its connection, so nothing was stored: another process may write the session now; the next write takes the lock again`,
    { location, commitUnknown: false },
  );
}
