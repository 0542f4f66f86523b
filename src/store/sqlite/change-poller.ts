// Other connections' commits to watched sessions of one SQLite database, seen by polling PRAGMA data_version.
import Database from "better-sqlite3";
import { Statements } from "./statements.js";

/**
 * What a watched session looked like at the last look: absent, or its header columns, rowid and
 * last event row's seq and time as one JSON text. Undefined until a look succeeded (the next one
 * then reports the id). The header is in it because a session deleted and stored anew under the
 * same id between two looks may end at the same seq and time: a watch hears of it, and ends, as
 * it would have on the JSONL and PostgreSQL backends, where a delete is a change of its own.
 */
type Head = string | undefined;

const ABSENT = "absent";

/**
 * Polls one database for commits of other connections — other processes, and this process's own
 * writer connection — to the sessions watched, and reports each session that changed (appeared,
 * grew, shrank, was repaired or vanished) through `onChange`.
 *
 * Every interval it asks its own read connection for `PRAGMA data_version`, which changes only when
 * another connection has committed: an idle database costs that one statement per interval, however
 * many sessions are watched. Only when it changed does one query read the head (header columns and
 * last event row) of every watched session, and only the sessions whose head differs from the last look are
 * reported. The connection is opened when the first session is watched and closed when the last
 * one is unwatched; the timer never keeps the process alive. Errors (SQLITE_BUSY while another
 * connection checkpoints, a file that went away) never leave a timer callback: the next tick looks
 * again, from scratch.
 */
export class ChangePoller {
  readonly #path: string;
  readonly #intervalMs: number;
  readonly #onChange: (id: string) => void;
  /** The watched ids and their heads at the last look. */
  readonly #heads = new Map<string, Head>();
  #db: Database.Database | undefined;
  #statements: Statements | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The data_version of the last successful look; undefined makes the next tick look. */
  #version: number | undefined;
  #closed = false;

  /**
   * @param path the database file (already open and at layout 4 on another connection).
   * @param intervalMs how long between two looks at data_version.
   * @param onChange called with the id of each watched session that changed.
   */
  constructor(path: string, intervalMs: number, onChange: (id: string) => void) {
    this.#path = path;
    this.#intervalMs = intervalMs;
    this.#onChange = onChange;
  }

  /** Whether the poller is running (a timer and, unless it failed to open, a connection). */
  get running(): boolean {
    return this.#timer !== undefined;
  }

  /**
   * Starts watching `id`, polling if this is the first id. Its head is read at once, so that a
   * change committed after this call and before the next tick is still reported.
   */
  watch(id: string): void {
    if (this.#closed) return;
    this.#heads.set(id, undefined);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
      this.#timer.unref();
    }
    // The version is only ever kept with a look at every watched id: here, when `id` is the only one.
    const alone = this.#heads.size === 1;
    try {
      const statements = this.#connect();
      // data_version before the heads: a commit between the two is seen again by the next tick.
      const version = alone ? versionOf(statements) : undefined;
      this.#heads.set(id, this.#look(statements, [id]).get(id));
      if (alone) this.#version = version;
    } catch {
      // The next tick looks at every watched id, and reports this one (its head is unknown).
      this.#version = undefined;
    }
  }

  /** Stops watching `id`; the last id stops the timer and closes the connection. */
  unwatch(id: string): void {
    this.#heads.delete(id);
    if (this.#heads.size === 0) this.#stop();
  }

  /** Stops polling for good: later `watch` calls do nothing. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#heads.clear();
    this.#stop();
  }

  #tick(): void {
    const changed: string[] = [];
    try {
      const statements = this.#connect();
      const version = versionOf(statements);
      if (version === this.#version) return;
      const ids = [...this.#heads.keys()];
      const heads = this.#look(statements, ids);
      for (const id of ids) {
        const head = heads.get(id);
        if (head !== this.#heads.get(id)) changed.push(id);
        this.#heads.set(id, head);
      }
      this.#version = version;
    } catch {
      // Nothing of this look was kept: the next tick looks again.
      this.#version = undefined;
      return;
    }
    // After the bookkeeping: a subscriber may unwatch (and so stop this poller) as it hears.
    for (const id of changed) this.#onChange(id);
  }

  /** The heads of `ids` now, one query for all of them. */
  #look(statements: Statements, ids: readonly string[]): Map<string, Head> {
    const heads = new Map<string, Head>(ids.map((id) => [id, ABSENT]));
    for (const row of statements.all("watchedHeads", { ids: JSON.stringify(ids) })) {
      heads.set(row.id, String(row.head));
    }
    return heads;
  }

  /** The read connection, opened on first use (and again after a failed open). */
  #connect(): Statements {
    if (this.#statements !== undefined) return this.#statements;
    // Read-only, and no busy timeout: a poll that would wait blocks the event loop; it is retried.
    const db = new Database(this.#path, { readonly: true, fileMustExist: true, timeout: 0 });
    this.#db = db;
    this.#statements = new Statements(db);
    return this.#statements;
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#version = undefined;
    this.#statements = undefined;
    const db = this.#db;
    this.#db = undefined;
    db?.close();
  }
}

function versionOf(statements: Statements): number {
  return Number(statements.get("dataVersion", {})?.dataVersion);
}
