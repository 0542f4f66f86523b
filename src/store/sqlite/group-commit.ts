// Group commit: write batches queued in the same turn of the event loop share one transaction and one fsync.
import type Database from "better-sqlite3";
import type { Statements } from "./statements.js";

/** How many write transactions committed, and how many batches they carried. */
export interface WriteStats {
  readonly transactions: number;
  readonly batches: number;
}

interface Job {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** How often `BEGIN IMMEDIATE` is tried; each try itself waits up to the busy timeout. */
const BEGIN_ATTEMPTS = 6;
/** The pause between tries, after the busy timeout ran out. */
const BEGIN_RETRY_MS = 50;
/**
 * How long a group keeps gathering while batches keep arriving: connections that hand over one
 * request per turn of the event loop (vscode-jsonrpc's message queue does) would otherwise commit
 * one or two batches per fsync.
 */
const GATHER_MAX_MS = 2;

/**
 * Runs write batches in shared transactions. A batch submitted while no group is being written
 * waits for the next turn of the event loop (`setImmediate`), and for more turns while each one
 * brings new batches (at most {@link GATHER_MAX_MS}), so every batch of a burst — e.g. appends to
 * different sessions that arrive together, even when the connection hands them over one per turn
 * — joins one `BEGIN IMMEDIATE … COMMIT`: one fsync for all of them. Each batch runs in its own SAVEPOINT, so a batch that throws
 * is rolled back alone and rejects only its own promise; the others resolve once the shared
 * transaction has committed (acknowledged means durable). Batches run in submission order.
 */
export class GroupCommit {
  readonly #db: Database.Database;
  readonly #statements: Statements;
  readonly #verify: () => void;
  #queue: Job[] = [];
  /** The group being written, if any; new batches then wait for the group after it. */
  #running: Promise<void> | undefined;
  #transactions = 0;
  #batches = 0;

  /**
   * @param verify runs in each group's transaction, after its batches and just before COMMIT:
   *   when it throws, the transaction is rolled back and every batch of the group rejects with
   *   its error (e.g. the database file was removed under the connection, so a commit would
   *   reach nothing that lasts).
   */
  constructor(db: Database.Database, statements: Statements, verify: () => void = () => {}) {
    this.#db = db;
    this.#statements = statements;
    this.#verify = verify;
  }

  /** What has been committed so far (tests prove grouping with it). */
  get stats(): WriteStats {
    return { transactions: this.#transactions, batches: this.#batches };
  }

  /**
   * Queues `work` (synchronous database writes) for the next group; resolves with its result once
   * the group's transaction has committed, or rejects with what it threw (its own changes rolled
   * back) or with the error that failed the whole transaction.
   */
  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Resolves once every batch submitted so far has been settled. */
  async drain(): Promise<void> {
    while (this.#running !== undefined || this.#queue.length > 0) {
      this.#schedule();
      await this.#running;
    }
  }

  #schedule(): void {
    if (this.#running !== undefined) return;
    this.#running = this.#gather()
      .then(() => this.#writeGroup())
      .finally(() => {
        this.#running = undefined;
        if (this.#queue.length > 0) this.#schedule();
      });
  }

  /**
   * Waits a turn of the event loop, then more turns while each one brought new batches, up to
   * {@link GATHER_MAX_MS}: a burst of requests handed over one per turn still shares one commit,
   * and a lone batch waits a single turn.
   */
  async #gather(): Promise<void> {
    const start = performance.now();
    let seen = -1;
    while (this.#queue.length !== seen && performance.now() - start < GATHER_MAX_MS) {
      seen = this.#queue.length;
      await new Promise<void>((done) => setImmediate(done));
    }
  }

  async #writeGroup(): Promise<void> {
    try {
      await this.#begin();
    } catch (error) {
      for (const job of this.#queue.splice(0)) job.reject(error);
      return;
    }
    // Batches that arrived while BEGIN waited for another process join this group too.
    const jobs = this.#queue.splice(0);
    const done: { job: Job; value: unknown }[] = [];
    const failed: { job: Job; error: unknown }[] = [];
    let lost: unknown;
    let next = 0;
    try {
      for (; next < jobs.length; next++) {
        const job = jobs[next] as Job;
        this.#statements.run("savepoint", {});
        try {
          done.push({ job, value: job.work() });
          this.#statements.run("releaseSavepoint", {});
        } catch (error) {
          if (done.at(-1)?.job === job) done.pop();
          failed.push({ job, error });
          // SQLite rolls the whole transaction back on some errors (disk full, I/O error).
          if (!this.#db.inTransaction) throw error;
          this.#statements.run("rollbackToSavepoint", {});
          this.#statements.run("releaseSavepoint", {});
        }
      }
      this.#verify();
      this.#statements.run("commit", {});
      this.#transactions++;
      this.#batches += done.length;
    } catch (error) {
      // Nothing of this group holds: the batches not yet run go to the next group.
      lost = error;
      const current = jobs[next];
      if (current !== undefined && !failed.some((f) => f.job === current)) {
        failed.push({ job: current, error });
      }
      this.#queue.unshift(...jobs.slice(next + 1));
      try {
        if (this.#db.inTransaction) this.#statements.run("rollback", {});
      } catch {
        // The connection is beyond repair; the error above is what the callers hear.
      }
    }
    for (const { job, error } of failed) job.reject(error);
    for (const { job, value } of done) {
      if (lost === undefined) job.resolve(value);
      else job.reject(lost);
    }
  }

  /** `BEGIN IMMEDIATE`, tried again when another process held the write lock past the busy timeout. */
  async #begin(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.#statements.run("beginWrite", {});
        return;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const busy = typeof code === "string" && code.startsWith("SQLITE_BUSY");
        if (!busy || attempt >= BEGIN_ATTEMPTS) throw error;
        await new Promise((wait) => setTimeout(wait, BEGIN_RETRY_MS * attempt));
      }
    }
  }
}
