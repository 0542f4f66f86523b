// The PostgreSQL backend (pg): a pooled store shared by many machines, one transaction per write, advisory writer locks, LISTEN/NOTIFY.
import type { PoolClient } from "pg";
import { StorageError, show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { anySearchable } from "../../log/search-text.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import type * as backend from "../backend.js";
import { seqConflict, sessionNotFound } from "../errors/storage-errors.js";
import { checkPageLimit } from "../reads/page-limit.js";
import * as sql from "../sql/core.js";
import { ChangeHub } from "../watch/change-hub.js";
import { refreshSummary } from "./catalog.js";
import { ChangeListener } from "./change-listener.js";
import { clientConfig, type PostgresTarget, resolveTarget } from "./connection.js";
import { frameRows, JSON_MEMBERS, pageWithHeader } from "./event-reads.js";
import {
  appendChunk,
  INSERT_CHUNK,
  insertEvents,
  insertSession,
  lockForWrite,
} from "./event-writes.js";
import { ForkPoints } from "./fork-points.js";
import { prepareStore } from "./layout-policy.js";
import {
  connectionLost,
  isConnectionLoss,
  refusedByServer,
  serverError,
  UNIQUE_VIOLATION,
} from "./pg-errors.js";
import { PostgresCatalog } from "./postgres-catalog.js";
import { eventArrays, splitSessionFrom, splitSettledRead } from "./rows.js";
import { type PostgresQueryRows, Queries } from "./statements.js";
import type { PostgresTimeouts } from "./timeouts.js";
import { connectionPool, Transactions } from "./transactions.js";
import { WriterLocks } from "./writer-locks.js";
/** How a PostgreSQL backend is opened. */
export interface PostgresBackendOptions {
  readonly durability?: backend.Durability;
  /** The PostgreSQL schema of the store (default: the URL's `?schema=`, else `seedline`). */
  readonly schema?: string;
  /**
   * The most connections the pool opens (default 10); the writer locks use one more, and so does
   * listening for changes while a session has subscribers.
   */
  readonly poolSize?: number;
  /**
   * Hears each failure of the connection that listens for other processes' writes (it is made
   * again by itself, and subscribers are called once it listens again). Default: ignored.
   */
  readonly onListenError?: (error: unknown) => void;
  /**
   * Bounds on every wait for the server, over the URL's parameters and the defaults (see
   * {@link PostgresTimeouts}): a wait past them answers STORAGE_UNAVAILABLE.
   */
  readonly timeouts?: Partial<PostgresTimeouts>;
}

/** The most rows a page may ask for to be read in one statement with its header on every row. */
const ONE_STATEMENT_ROWS = 64;

/**
 * Sessions in one PostgreSQL schema (the layout of schema/storage/sqlite-layout.json in the
 * PostgreSQL dialect, version recorded in table `seedline_layout`): a `sessions` row per header,
 * an `events` row per event. Open it with {@link PostgresBackend.open}.
 *
 * Many processes on many machines may use one store. Every write is one transaction on a pooled
 * connection; an append is one statement per INSERT_CHUNK events (appendEvents) that locks its
 * session's row (so writers of one session take turns and writers of different sessions never
 * wait for each other), checks that the batch starts at the stored next seq, and inserts the
 * events, moves the summary and leaves their search texts to the next search (search-index.ts);
 * the primary key (session id, seq) refuses a
 * duplicate seq whatever else happens. Serialization failures and deadlocks are retried. One
 * writer per session is kept by advisory locks (see {@link WriterLocks}).
 *
 * Every write transaction also notifies the schema's channel with the session id (delivered at
 * commit, only if it commits); subscribers hear of this instance's writes at once and of every
 * other process's through one LISTEN connection, open while any session has subscribers (see
 * {@link ChangeListener}).
 */
export class PostgresBackend implements backend.SessionBackend {
  readonly kind = "postgres";
  /** The store, for messages: URL without password, and schema. */
  readonly location: string;
  readonly schema: string;
  /** The durability mode this backend commits in (synchronous_commit on or off). */
  readonly durability: backend.Durability;
  /** The bounds on every wait for the server this backend runs with. */
  readonly timeouts: PostgresTimeouts;
  readonly #db: Transactions;
  readonly #queries: Queries;
  readonly #locks: WriterLocks;
  readonly #changes: ChangeHub;
  readonly #listener: ChangeListener;
  /** What forkPoint framed of each session's open turn. */
  /** The fork points of its sessions, and what it framed of their open turns. */
  readonly #forkPoints: ForkPoints;
  /** Listing, titles, id prefixes and search (see {@link PostgresCatalog}). */
  readonly catalog: PostgresCatalog;

  private constructor(
    target: PostgresTarget,
    durability: backend.Durability,
    db: Transactions,
    locks: WriterLocks,
    listener: (hub: ChangeHub) => ChangeListener,
  ) {
    this.location = target.location;
    this.schema = target.schema;
    this.durability = durability;
    this.timeouts = target.timeouts;
    this.#db = db;
    this.#queries = new Queries(target.schema);
    this.#forkPoints = new ForkPoints(db, this.#queries, target.location);
    this.#locks = locks;
    this.#changes = new ChangeHub({
      onFirst: () => this.#listener.start(),
      onLast: () => {
        // stop() never rejects: nothing is left floating.
        if (this.#changes.size === 0) void this.#listener.stop();
      },
    });
    this.#listener = listener(this.#changes);
    this.catalog = new PostgresCatalog({
      db,
      queries: this.#queries,
      write: (id, what, work) => this.#write(id, what, work),
    });
  }

  /**
   * Opens the store at a `postgres://` URL. The version policy runs first, with catalog reads
   * only: a missing or empty schema gets the generated layout and its version record (in one
   * transaction, creators serialized by an advisory lock); any other layout version is refused
   * and nothing is written (reject, never migrate). Every connection runs with search_path set to
   * the schema and synchronous_commit `on` (durability `fsync`, the default) or `off` (`process`).
   * @throws StorageError INVALID_PARAMS (a bad URL or schema name), FORMAT_UNSUPPORTED (another
   *   layout version, or a schema that is not seedline's), CORRUPT_LOG (the current version with
   *   other relations); StorageUnavailableError when the server cannot be reached.
   */
  static async open(url: string, options: PostgresBackendOptions = {}): Promise<PostgresBackend> {
    const durability = options.durability ?? "fsync";
    const target = resolveTarget(url, options.schema, options.timeouts);
    const config = clientConfig(target, durability);
    const pool = connectionPool(config, options.poolSize ?? 10);
    const queries = new Queries(target.schema);
    await prepareStore(pool, queries, target);
    // The lock connection writes nothing that must outlive the server: advisory locks and the row
    // locks of takeWriterLock are gone with it anyway. Without synchronous_commit each of its
    // statements answers at once instead of after a WAL flush (a writer's resume waited ~8 ms).
    const lockConfig = clientConfig(target, "process");
    const locks = new WriterLocks(lockConfig, queries, target.schema, target.location);
    const onListenError = options.onListenError ?? (() => {});
    const listener = (hub: ChangeHub) =>
      new ChangeListener(
        config,
        queries,
        {
          // Notifications for ids nobody here subscribes to are dropped by the hub.
          onChange: (id) => hub.notify(id),
          // Writes committed while nothing listened were not heard: every subscriber reads again.
          onListening: () => hub.notifyAll(),
          onError: onListenError,
        },
        target.timeouts.keepAliveMs,
      );
    const db = new Transactions(pool, queries, target.location, target.timeouts);
    return new PostgresBackend(target, durability, db, locks, listener);
  }

  /** What the connections run with, for diagnostics (and the tests that prove durability). */
  async settings(): Promise<PostgresQueryRows["connectionSettings"] | undefined> {
    return this.#db.withClient("read its settings", (c) =>
      this.#queries.first(c, "connectionSettings", {}),
    );
  }

  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    await this.#write(header.id, `create session ${show(header.id)}`, async (c) => {
      await insertSession(this.#queries, c, header);
      await insertEvents(this.#queries, c, header.id, 0, events);
    });
  }

  /**
   * Appends a batch in one transaction of one statement per INSERT_CHUNK events (appendEvents),
   * a batch of one chunk in that statement alone, with no BEGIN or COMMIT around it: the statement
   * locks the session row, checks that this instance's writer lock (when it holds
   * one) is still held on the lock connection and that the batch starts at the append point, then
   * inserts the events, marks them for the next search's index step, moves the summary and
   * notifies the change channel.
   * A writer whose lock went with its connection stores nothing.
   * @throws StorageError SEQ_CONFLICT, SESSION_NOT_FOUND; StorageUnavailableError for a lost
   *   lock, a broken connection or a timeout.
   */
  async append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void> {
    const what = `append to session ${show(id)}`;
    try {
      await this.#appendBatch(id, what, fromSeq, events);
    } catch (error) {
      // Another writer stored seqs of the batch while this one waited for the session row (its
      // snapshot predates them, so the primary key found them): nothing was stored; the conflict
      // says where the log ends now, as one found by the check of the append point does.
      if (
        error instanceof StorageError &&
        error.code === "SEQ_CONFLICT" &&
        serverError(error.cause)?.code === UNIQUE_VIOLATION
      ) {
        const last = await this.#db.withClient(what, (c) =>
          this.#queries.first(c, "appendPoint", { sessionId: id }),
        );
        const conflict = seqConflict(id, sql.lengthAfter(last?.lastSeq), fromSeq);
        throw new StorageError(conflict.code, conflict.message, conflict.details, {
          cause: error,
        });
      }
      throw error;
    }
  }

  async #appendBatch(
    id: string,
    what: string,
    fromSeq: number,
    events: readonly SerializedEvent[],
  ): Promise<void> {
    // Checked before any statement: a lock known lost stores nothing, not even a row lock wait.
    const holder = this.#locks.heldOrThrow(id);
    sql.checkBatchSeqs(id, fromSeq, events);
    const shared = {
      pid: holder?.pid ?? null,
      key: holder?.key ?? null,
      channel: this.#queries.channel,
      // Every chunk moves the summary to the batch's end; the first title stored stays.
      updatedAt: events.at(-1)?.time ?? null,
      derivedTitle: sql.batchTitle(events),
    };
    const append = async (c: PoolClient) => {
      // An empty batch runs one statement too: it checks the append point and notifies.
      for (let start = 0; start === 0 || start < events.length; start += INSERT_CHUNK) {
        const chunk = events.slice(start, start + INSERT_CHUNK);
        await appendChunk(this.#queries, this.#locks, c, id, fromSeq + start, chunk.length, {
          ...eventArrays(id, chunk),
          searchable: anySearchable(chunk),
          ...shared,
          fromSeq: fromSeq + start,
        });
      }
    };
    if (events.length > INSERT_CHUNK) {
      await this.#write(id, what, append, "notified");
      return;
    }
    // One statement does the whole append: it is the transaction, without the round trips of a
    // BEGIN and a COMMIT (each run of appendEvents commits or changes nothing on its own).
    await this.#db.withClient(what, append, "writes");
    this.#changes.notify(id);
  }

  async load(id: string): Promise<backend.StoredLog | undefined> {
    return this.#db.read(`load session ${show(id)}`, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.location);
      return { header, ...(await frameRows(this.#queries, c, this.location, id, 0, undefined)) };
    });
  }

  /**
   * Reads a session from `fromSeq` on (at most `limit` events) in one statement when it can
   * (sessionFrom: one snapshot, no lock, the header and the event rows from `fromSeq - 1` on). The
   * row at `fromSeq - 1`, framed with the rest, proves that the stored log still extends the
   * caller's prefix. When it does not (the session was deleted and created again, shorter), when
   * `fromSeq` is 0, or when a page ends in a bad row that only a later turn/end would make
   * corruption, the rows are read again in one read transaction, with that lookup.
   * @throws StorageError as `load` does.
   */
  async loadFrom(
    id: string,
    fromSeq: number,
    limit?: number,
    maxBytes?: number,
  ): Promise<backend.StoredSuffix | undefined> {
    const what = `load session ${show(id)} from seq ${fromSeq}`;
    const { first, take } = sql.pageRead(fromSeq, limit, maxBytes);
    // From 0, and for a page of many rows, the transaction's statements send the header once, not
    // once per row; a reader asking what is new (a few rows, or none) gets it in one round trip.
    // A page bounded by bytes is read by sessionPageWithin (its rows and the header, one
    // statement): no row past it is sent.
    if (
      maxBytes === undefined &&
      fromSeq > 0 &&
      (take === undefined || take <= ONE_STATEMENT_ROWS)
    ) {
      const found = await this.#db.withClient(what, (c) =>
        this.#queries.rows(c, "sessionFrom", { fromSeq, sessionId: id, limit: take ?? null }),
      );
      const split = splitSessionFrom(found);
      if (split === undefined) return undefined;
      const header = sql.readHeader(split.header, id, this.location);
      const scanned = sql.scanEventRows(split.events, first);
      if (sql.turnEndLookup(scanned, take) === undefined) {
        const suffix = sql.suffixOf(
          sql.judgeEventRows(scanned, sql.eventsOf(id, this.location)),
          fromSeq,
        );
        if (suffix !== undefined) return { header, ...suffix };
      }
    }
    if (maxBytes !== undefined) {
      // A page bounded by bytes, with the header, in one statement; the transaction below only
      // when it cannot answer alone (see pageWithHeader).
      const found = await this.#db.withClient(what, (c) =>
        pageWithHeader(this.#queries, c, this.location, id, first, take, maxBytes, fromSeq - first),
      );
      const suffix = found && sql.suffixOf(found.framed, fromSeq);
      if (found !== undefined && suffix !== undefined) return { header: found.header, ...suffix };
    }
    return this.#db.read(what, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.location);
      const page = await frameRows(
        this.#queries,
        c,
        this.location,
        id,
        first,
        take,
        maxBytes,
        fromSeq - first,
      );
      const suffix = sql.suffixOf(page, fromSeq);
      if (suffix !== undefined) return { header, ...suffix };
      return {
        header,
        ...(await frameRows(this.#queries, c, this.location, id, 0, limit, maxBytes)),
        from: 0,
      };
    });
  }

  subscribe(id: string, onChange: () => void): backend.Unsubscribe {
    this.#db.assertOpen();
    return this.#changes.subscribe(id, onChange);
  }

  async has(id: string): Promise<boolean> {
    const row = await this.#db.withClient(`look up session ${show(id)}`, (c) =>
      this.#queries.first(c, "sessionExists", { sessionId: id }),
    );
    return row !== undefined;
  }

  /** Every stored id, from the `sessions` primary key. */
  async ids(): Promise<string[]> {
    const rows = await this.#db.withClient("list the session ids", (c) =>
      this.#queries.rows(c, "sessionIds", {}),
    );
    return rows.map((r) => r.id);
  }

  /** The explicit title in `session_titles`, read by the catalog's statement. */
  async readTitle(id: string): Promise<string | undefined> {
    return (await this.catalog.titles(id))?.explicit;
  }

  /**
   * Sets or clears the explicit title in `session_titles`, as the catalog's `setTitle` does.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  writeTitle(id: string, title: string | null): Promise<void> {
    return this.catalog.setTitle(id, title);
  }

  /**
   * The message-producing events of the settled part of a log (see
   * {@link SessionBackend.loadSettled}) in one statement (settledRead: one snapshot, one round
   * trip): the header, the last turn/end, the events and, with `tailLimit`, the page after the
   * last turn/end. The rows are parsed once they are all in: the writer takes them in at once, so
   * that they are not held young across a wait (the collector would copy them all), and each row
   * is let go once parsed (a collection on the way copies the events, not the rows' text too).
   */
  async loadSettled(
    id: string,
    tailLimit?: number,
  ): Promise<backend.StoredSettledPage | undefined> {
    checkPageLimit(tailLimit);
    // The tail part starts at the last turn/end: one row more than the page.
    const found = await this.#db.withClient(`resume session ${show(id)}`, (c) =>
      this.#queries.valueRows(c, "settledRead", { sessionId: id, limit: (tailLimit ?? 0) + 1 }),
    );
    const split = splitSettledRead(found.rows, found.columns);
    if (split === undefined) return undefined;
    const header = sql.readHeader(split.header, id, this.location);
    const location = sql.eventsOf(id, this.location);
    const last = split.lastTurnEnd;
    const settled = last === undefined ? 0 : last + 1;
    const events = sql.settledEvents(
      split.settled,
      JSON_MEMBERS,
      location,
      split.columns,
      split.offset,
    );
    if (tailLimit === undefined) return { header, settled, events };
    // The rows from the last turn/end on, framed as loadFrom frames a page from `settled`, with
    // the turn/end as the row before it; from seq 0 without one.
    const first = last ?? 0;
    const take = last === undefined ? tailLimit : tailLimit + 1;
    const rows = split.tail.length > take ? split.tail.slice(0, take) : split.tail;
    const scanned = sql.scanEventRows(rows, first, sql.valueRowForm(split.columns, JSON_MEMBERS));
    // A bad row in a full page needs a lookup of a later turn/end: the caller reads on its own.
    if (sql.turnEndLookup(scanned, take) !== undefined) return { header, settled, events };
    const framed = sql.judgeEventRows(scanned, location);
    const suffix = sql.suffixOf(framed, settled);
    if (suffix === undefined) return { header, settled, events };
    const end = last === undefined ? undefined : framed.events[0];
    return { header, settled, events, end, tail: { header, ...suffix } };
  }

  forkPoint(
    id: string,
    boundary: number | undefined,
  ): Promise<backend.StoredForkPoint | undefined> {
    return this.#forkPoints.read(id, boundary);
  }

  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    await this.#write(header.id, `fork session ${show(sourceId)}`, async (c) => {
      // Keeps the source from being deleted while its prefix is copied.
      if (
        (await this.#queries.first(c, "shareSessionRow", { sessionId: sourceId })) === undefined
      ) {
        throw sessionNotFound(sourceId);
      }
      await insertSession(this.#queries, c, header);
      if (boundary < 0) return;
      const copied = await this.#queries.run(c, "copyEventPrefix", {
        childId: header.id,
        sourceId,
        boundary,
      });
      sql.checkCopiedPrefix(copied, boundary, sql.eventsOf(sourceId, this.location));
      await refreshSummary(c, this.#queries, header.id);
      await this.#queries.run(c, "copySearchPrefix", { childId: header.id, sourceId, boundary });
    });
  }

  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    await this.#write(id, `repair session ${show(id)}`, async (c) => {
      await lockForWrite(this.#queries, c, id);
      await this.#locks.assertHeld(c, id);
      this.#forkPoints.forget(id);
      await this.#queries.run(c, "deleteEventsFrom", { sessionId: id, keep });
      await this.#queries.run(c, "deleteSearchTexts", { sessionId: id, keep });
      await insertEvents(this.#queries, c, id, keep, closers);
      if (closers.length === 0) await refreshSummary(c, this.#queries, id);
    });
  }

  /**
   * Deletes a session and its events (its children keep their copies). Takes the session's writer
   * lock first (again, when this instance already holds it).
   * @throws StorageError SESSION_BUSY when another process writes the session.
   */
  async delete(id: string): Promise<boolean> {
    const release = await this.lock(id);
    try {
      return await this.#write(id, `delete session ${show(id)}`, async (c) => {
        this.#forkPoints.forget(id);
        return (await this.#queries.run(c, "deleteSession", { sessionId: id })) > 0;
      });
    } finally {
      await release();
    }
  }

  /** Whether this instance held the writer lock of `id` on a connection that has since ended. */
  lockLost(id: string): boolean {
    return this.#locks.holder(id) === "lost";
  }

  async lock(id: string): Promise<backend.ReleaseLock> {
    this.#db.assertOpen();
    try {
      return await this.#locks.acquire(id);
    } catch (error) {
      if (isConnectionLoss(error)) {
        throw connectionLost(error, this.location, `take the writer lock of ${show(id)}`, false);
      }
      throw refusedByServer(error, this.location);
    }
  }

  /**
   * Stops listening for changes, releases every writer lock (by ending their connection) and
   * closes the pool. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#db.closed) return;
    this.#db.markClosed();
    try {
      await this.#listener.stop();
      await this.#locks.close();
    } finally {
      await this.#db.end();
    }
  }

  /**
   * Runs `work` in one write transaction (see {@link Transactions.transaction}) that also notifies
   * the change channel that session `id` changed (every listening process hears it at commit, and
   * only if it commits); once it has committed, this instance's subscribers of `id` hear it at once.
   */
  async #write<T>(
    id: string,
    what: string,
    work: (c: PoolClient) => Promise<T>,
    notified?: "notified",
  ): Promise<T> {
    const value = await this.#db.transaction("beginWrite", what, async (c) => {
      const value = await work(c);
      // `notified`: `work` sent the notification itself (appendEvents).
      if (notified === undefined) {
        await this.#queries.first(c, "notifyChange", {
          channel: this.#queries.channel,
          sessionId: id,
        });
      }
      return value;
    });
    this.#changes.notify(id);
    return value;
  }
}
