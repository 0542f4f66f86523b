// The PostgreSQL backend (pg): a pooled store shared by many machines, one transaction per write, advisory writer locks, LISTEN/NOTIFY.
import { Client, type ClientConfig, Pool, type PoolClient } from "pg";
import { StorageError, show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { anySearchable } from "../../log/search-text.js";
import { type SerializedEvent, serializedTitle } from "../../log/serialized-event.js";
import type * as backend from "../backend.js";
import { ChangeHub } from "../change-hub.js";
import { prefixEnd } from "../id-prefix.js";
import { checkPageLimit } from "../page-limit.js";
import * as sql from "../sql/core.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../storage-errors.js";
import { ChangeListener } from "./change-listener.js";
import { clientConfig, destroyClient, type PostgresTarget, resolveTarget } from "./connection.js";
import { createLayout, inspectSchema } from "./layout-policy.js";
import {
  connectionLost,
  FOREIGN_KEY_VIOLATION,
  isConnectionLoss,
  isRetryable,
  isServerAnswer,
  isStatementTimeout,
  refusedByServer,
  serverError,
  timedOut,
  UNIQUE_VIOLATION,
  unreachable,
} from "./pg-errors.js";
import { eventArrays, markerOfRow, splitSessionFrom, splitSettledRead } from "./rows.js";
import { ensureSearchIndex, indexPending, markWritten, searchPage } from "./search-index.js";
import {
  POSTGRES_TABLES,
  type PostgresQueryParams,
  type PostgresQueryRows,
  paramsFrom,
  Queries,
} from "./statements.js";
import type { PostgresTimeouts } from "./timeouts.js";
import { lockLost, WriterLocks } from "./writer-locks.js";

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

/** How often a transaction that ran into a serialization failure or deadlock is tried. */
const ATTEMPTS = 5;
const RETRY_MS = 20;

/** Waits before retry `attempt` of a serialization failure or deadlock: longer each time, jittered. */
function retryWait(attempt: number): Promise<void> {
  return new Promise((wait) => setTimeout(wait, RETRY_MS * attempt * (1 + Math.random())));
}

/** Rows per insertEvents statement: bounds the size of one bind message for a large import. */
const INSERT_CHUNK = 1000;

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

/** The most rows a page may ask for to be read in one statement with its header on every row. */
const ONE_STATEMENT_ROWS = 64;

/** The event members the layout stores as JSON text. */
const JSON_MEMBERS = sql.jsonMembers(POSTGRES_TABLES.events);

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
  readonly #pool: Pool;
  readonly #queries: Queries;
  readonly #locks: WriterLocks;
  readonly #changes: ChangeHub;
  readonly #listener: ChangeListener;
  /** The pooled connections that have this backend's 'error' listener. */
  #closed = false;

  private constructor(
    target: PostgresTarget,
    durability: backend.Durability,
    pool: Pool,
    locks: WriterLocks,
    listener: (hub: ChangeHub) => ChangeListener,
  ) {
    this.location = target.location;
    this.schema = target.schema;
    this.durability = durability;
    this.timeouts = target.timeouts;
    this.#pool = pool;
    this.#queries = new Queries(target.schema);
    this.#locks = locks;
    this.#changes = new ChangeHub({
      onFirst: () => this.#listener.start(),
      onLast: () => {
        // stop() never rejects: nothing is left floating.
        if (this.#changes.size === 0) void this.#listener.stop();
      },
    });
    this.#listener = listener(this.#changes);
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
    const pool = new Pool({ ...config, Client: ListenedClient, max: options.poolSize ?? 10 });
    // A pooled connection that breaks is dropped by the pool (idle or checked out: the pool's
    // listener stays on each client, and re-emits here); the next checkout reconnects. A request
    // on a connection that broke hears it from its query (see #transaction).
    pool.on("error", () => {});
    const queries = new Queries(target.schema);
    let client: PoolClient | undefined;
    try {
      try {
        client = await pool.connect();
      } catch (error) {
        throw unreachable(error, target.location);
      }
      const state = await inspectSchema(client, queries, target);
      if (state !== "current") await createLayout(client, queries, target);
      await ensureSearchIndex(client, queries, target.schema);
      const settings = await queries.first(client, "connectionSettings", {});
      if (settings?.currentSchema !== target.schema) {
        throw new StorageError(
          "INVALID_PARAMS",
          `expected the connections to ${target.location} to run with search_path ${target.schema} (a startup option), got ${show(settings?.currentSchema)}: connect directly or through a pooler that passes startup options`,
          { errors: [{ instancePath: "/store", message: "expected startup options to hold" }] },
        );
      }
      client.release();
    } catch (error) {
      client?.release(true);
      await pool.end();
      if (isConnectionLoss(error)) throw connectionLost(error, target.location, "open it", false);
      throw refusedByServer(error, target.location);
    }
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
    return new PostgresBackend(target, durability, pool, locks, listener);
  }

  /** What the connections run with, for diagnostics (and the tests that prove durability). */
  async settings(): Promise<PostgresQueryRows["connectionSettings"] | undefined> {
    return this.#withClient("read its settings", (c) =>
      this.#queries.first(c, "connectionSettings", {}),
    );
  }

  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    await this.#write(header.id, `create session ${show(header.id)}`, async (c) => {
      await this.#insertSession(c, header);
      await this.#insertEvents(c, header.id, 0, events);
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
        const last = await this.#withClient(what, (c) =>
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
    const holder = this.#holderOrThrow(id);
    sql.checkBatchSeqs(id, fromSeq, events);
    const shared = {
      pid: holder?.pid ?? null,
      key: holder?.key ?? null,
      channel: this.#queries.channel,
      // Every chunk moves the summary to the batch's end; the first title stored stays.
      updatedAt: events.at(-1)?.time ?? null,
      derivedTitle: serializedTitle(events) ?? null,
    };
    const append = async (c: PoolClient) => {
      // An empty batch runs one statement too: it checks the append point and notifies.
      for (let start = 0; start === 0 || start < events.length; start += INSERT_CHUNK) {
        const chunk = events.slice(start, start + INSERT_CHUNK);
        await this.#appendChunk(c, id, fromSeq + start, chunk.length, {
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
    await this.#withClient(what, append, "writes");
    this.#changes.notify(id);
  }

  /**
   * Runs appendEvents for the chunk starting at `from`. When its check of the append point fails,
   * the point is read again after the session row lock (the statement's snapshot may predate the
   * lock, see appendEvents): a conflict when it differs, else the statement runs once more (its
   * snapshot now counts every append committed before the lock).
   */
  async #appendChunk(
    c: PoolClient,
    id: string,
    from: number,
    count: number,
    params: PostgresQueryParams<"appendEvents">,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let row: PostgresQueryRows["appendEvents"] | undefined;
      try {
        row = await this.#queries.first(c, "appendEvents", params);
      } catch (error) {
        throw this.#insertFailure(error, id, from, count);
      }
      if (row?.found !== true) throw sessionNotFound(id);
      if (row.held !== true) this.#lockGone(id);
      if (row.appendable === true) return;
      const next =
        attempt === 1
          ? sql.lengthAfter(
              (await this.#queries.first(c, "appendPoint", { sessionId: id }))?.lastSeq,
            )
          : sql.lengthAfter(row.lastSeq);
      if (attempt > 1 || next !== from) throw seqConflict(id, next, from);
    }
  }

  async load(id: string): Promise<backend.StoredLog | undefined> {
    return this.#read(`load session ${show(id)}`, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.location);
      return { header, ...(await this.#frame(c, id, 0, undefined)) };
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
    // A page bounded by bytes is read by eventRowsWithin, in the transaction: no row past it is sent.
    if (
      maxBytes === undefined &&
      fromSeq > 0 &&
      (take === undefined || take <= ONE_STATEMENT_ROWS)
    ) {
      const found = await this.#withClient(what, (c) =>
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
    return this.#read(what, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.location);
      const page = await this.#frame(c, id, first, take, maxBytes, fromSeq - first);
      const suffix = sql.suffixOf(page, fromSeq);
      if (suffix !== undefined) return { header, ...suffix };
      return { header, ...(await this.#frame(c, id, 0, limit, maxBytes)), from: 0 };
    });
  }

  subscribe(id: string, onChange: () => void): backend.Unsubscribe {
    this.#assertOpen();
    return this.#changes.subscribe(id, onChange);
  }

  async has(id: string): Promise<boolean> {
    const row = await this.#withClient(`look up session ${show(id)}`, (c) =>
      this.#queries.first(c, "sessionExists", { sessionId: id }),
    );
    return row !== undefined;
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
    const found = await this.#withClient(`resume session ${show(id)}`, (c) =>
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

  async forkPoint(
    id: string,
    boundary: number | undefined,
  ): Promise<backend.StoredForkPoint | undefined> {
    return this.#read(`read the fork point of session ${show(id)}`, async (c) => {
      const row = await this.#queries.first(c, "sessionHeader", { sessionId: id });
      if (row === undefined) return undefined;
      const header = sql.readHeader(row, id, this.location);
      // The intact length: every row up to the last turn/end is settled (load finds any damage
      // there), and the rows after it are framed, so that a torn tail does not count.
      const last = await this.#queries.first(c, "lastTurnEnd", { sessionId: id });
      const settled = last === undefined ? 0 : Number(last.seq) + 1;
      const length = settled + (await this.#frame(c, id, settled, undefined)).events.length;
      const at = boundary ?? length - 1;
      if (at < 0) return { header, length, marker: undefined };
      const found = await this.#queries.first(c, "lastTurnMarker", { sessionId: id, boundary: at });
      const marker = found && markerOfRow(found, sql.eventsOf(id, this.location));
      // No turn/end can follow the last event: the usual case of openTurn asks nothing more.
      if (marker?.type !== "turn/start" || at >= length - 1) return { header, length, marker };
      const next = await this.#queries.first(c, "nextTurnEnd", { sessionId: id, fromSeq: at + 1 });
      return { header, length, marker, ...sql.closedAtOf(next?.seq, length) };
    });
  }

  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    await this.#write(header.id, `fork session ${show(sourceId)}`, async (c) => {
      // Keeps the source from being deleted while its prefix is copied.
      if (
        (await this.#queries.first(c, "shareSessionRow", { sessionId: sourceId })) === undefined
      ) {
        throw sessionNotFound(sourceId);
      }
      await this.#insertSession(c, header);
      if (boundary < 0) return;
      const copied = await this.#queries.run(c, "copyEventPrefix", {
        childId: header.id,
        sourceId,
        boundary,
      });
      sql.checkCopiedPrefix(copied, boundary, sql.eventsOf(sourceId, this.location));
      const sessionId = header.id;
      const first = await this.#queries.first(c, "firstUserMessage", { sessionId });
      const last = await this.#queries.first(c, "lastEventTime", { sessionId });
      await this.#queries.run(c, "touchSummary", {
        sessionId,
        updatedAt: last === undefined ? header.createdAt : Number(last.time),
        derivedTitle: first === undefined ? null : (sql.titleOfData(first.data) ?? null),
      });
      await this.#queries.run(c, "copySearchPrefix", { childId: header.id, sourceId, boundary });
    });
  }

  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    await this.#write(id, `repair session ${show(id)}`, async (c) => {
      await this.#lockForWrite(c, id);
      await this.#assertLockHeld(c, id);
      await this.#queries.run(c, "deleteEventsFrom", { sessionId: id, keep });
      await this.#queries.run(c, "deleteSearchTexts", { sessionId: id, keep });
      await this.#insertEvents(c, id, keep, closers);
    });
  }

  /** Lists in one statement (one snapshot): each row carries its session's last seq and time. */
  async list(query: backend.ListQuery): Promise<backend.ListPage> {
    const { name, filter } = sql.listRun(query);
    const rows = await this.#withClient("list sessions", (c) =>
      this.#queries.rows(c, name, paramsFrom(name, filter)),
    );
    return sql.listPage(rows, query, ({ lastSeq, updatedAt, title, derivedTitle, ...row }) =>
      sql.listedSession(sql.headerFromRow(row), lastSeq, { updatedAt, title, derivedTitle }),
    );
  }

  async setTitle(id: string, title: string | null): Promise<void> {
    await this.#write(id, `set the title of session ${show(id)}`, async (c) => {
      if ((await this.#queries.run(c, "setTitle", { sessionId: id, title })) === 0) {
        throw sessionNotFound(id);
      }
    });
  }

  async titles(id: string): Promise<backend.StoredTitles | undefined> {
    const row = await this.#withClient(`read the titles of session ${show(id)}`, (c) =>
      this.#queries.first(c, "sessionTitles", { sessionId: id }),
    );
    return row === undefined ? undefined : sql.titlesOf(row);
  }

  async idsWithPrefix(prefix: string, limit: number): Promise<backend.IdMatches> {
    const range = { prefix, end: prefixEnd(prefix) ?? null };
    return this.#read(`match ids starting with ${show(prefix)}`, async (c) => {
      const ids = (await this.#queries.rows(c, "idsWithPrefix", { ...range, limit })).map(
        (r) => r.id,
      );
      const counted = await this.#queries.first(c, "countIdsWithPrefix", range);
      return { ids, count: Number(counted?.count ?? 0) };
    });
  }

  /**
   * Searches the index (search-index.ts) on one snapshot, once the texts of the rows written
   * since the last search are made.
   */
  async search(query: backend.SearchQuery): Promise<backend.SearchPage> {
    const what = "search sessions";
    await indexPending(this.#queries, {
      once: (work) => this.#withClient(what, work),
      inTransaction: (work) => this.#transaction("beginWrite", what, work),
    });
    return this.#read(what, (c) => searchPage(c, this.#queries, query));
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
    this.#assertOpen();
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
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#listener.stop();
      await this.#locks.close();
    } finally {
      // A pooled connection ends once the server says goodbye, which a server that cannot be
      // reached never does: the wait is bounded by the connect timeout, then the sockets are left
      // to the process's end.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.timeouts.connectMs || 10_000);
        timer.unref();
      });
      await Promise.race([this.#pool.end().catch(() => {}), bound]);
      clearTimeout(timer);
    }
  }

  /**
   * Locks the row of a stored session for this transaction and returns the seq its next event
   * takes. The seq is read in a statement of its own after the lock is granted, so that it counts
   * every append committed before.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  async #lockForWrite(c: PoolClient, id: string): Promise<number> {
    if ((await this.#queries.first(c, "lockSessionRow", { sessionId: id })) === undefined) {
      throw sessionNotFound(id);
    }
    const last = await this.#queries.first(c, "appendPoint", { sessionId: id });
    return sql.lengthAfter(last?.lastSeq);
  }

  /**
   * Checks, in the transaction of `c` and after the session row is locked, that the writer lock
   * of `id` this instance holds (if it holds it) is still held by its connection.
   * @throws StorageUnavailableError when it is not.
   */
  async #assertLockHeld(c: PoolClient, id: string): Promise<void> {
    const holder = this.#holderOrThrow(id);
    if (holder === undefined) return;
    const row = await this.#queries.first(c, "writerLockHeld", {
      pid: holder.pid,
      key: holder.key,
    });
    if (row?.held !== true) this.#lockGone(id);
  }

  /** Where the writer lock of `id` is held, or undefined when this instance does not hold it. */
  #holderOrThrow(id: string): { readonly key: string; readonly pid: number } | undefined {
    const holder = this.#locks.holder(id);
    if (holder === "lost") throw lockLost(id, this.location);
    return holder;
  }

  #lockGone(id: string): never {
    this.#locks.markLost(id);
    throw lockLost(id, this.location);
  }

  async #insertSession(c: PoolClient, header: SessionHeader): Promise<void> {
    try {
      await this.#queries.run(c, "insertSession", paramsFrom("insertSession", header));
    } catch (error) {
      if (serverError(error)?.code === UNIQUE_VIOLATION) throw sessionTaken(header.id);
      throw error;
    }
    await this.#queries.run(c, "insertSummary", {
      sessionId: header.id,
      updatedAt: header.createdAt,
      derivedTitle: null,
    });
  }

  /**
   * What an insert of the events from seq `from` failed with: SESSION_NOT_FOUND for a session
   * row gone, SEQ_CONFLICT when another writer stored one of the seqs first, else the error.
   */
  #insertFailure(error: unknown, id: string, from: number, count: number): unknown {
    const failure = serverError(error);
    if (failure?.code === FOREIGN_KEY_VIOLATION) return sessionNotFound(id);
    if (failure?.code === UNIQUE_VIOLATION && failure.table === POSTGRES_TABLES.events.name) {
      return new StorageError(
        "SEQ_CONFLICT",
        `expected seqs ${from}…${from + count - 1} of session ${show(id)} to be free, got one another writer stored first`,
        { expectedSeq: from },
        { cause: error },
      );
    }
    return error;
  }

  async #insertEvents(
    c: PoolClient,
    id: string,
    fromSeq: number,
    events: readonly SerializedEvent[],
  ): Promise<void> {
    sql.checkBatchSeqs(id, fromSeq, events);
    for (let start = 0; start < events.length; start += INSERT_CHUNK) {
      const chunk = events.slice(start, start + INSERT_CHUNK);
      try {
        await this.#queries.run(c, "insertEvents", eventArrays(id, chunk));
      } catch (error) {
        throw this.#insertFailure(error, id, fromSeq + start, chunk.length);
      }
      // After the events: a conflict above is reported as the events' own.
      await markWritten(c, this.#queries, id, fromSeq + start, chunk);
    }
    const last = events.at(-1);
    if (last === undefined) return;
    // The summary moves in the same transaction as the events it summarises.
    await this.#queries.run(c, "touchSummary", {
      sessionId: id,
      updatedAt: last.time,
      derivedTitle: serializedTitle(events) ?? null,
    });
  }

  /**
   * Runs `work` in one READ COMMITTED transaction on a pooled connection and commits it; tries
   * again on a serialization failure or deadlock (the whole transaction rolled back). Any error
   * rolls back; a broken connection is dropped from the pool and reported as
   * StorageUnavailableError (the server rolls back a transaction whose connection ends).
   * The transaction notifies the change channel that session `id` changed (every listening
   * process hears it at commit, and only if it commits); once it has committed, this instance's
   * subscribers of `id` hear it at once.
   */
  async #write<T>(
    id: string,
    what: string,
    work: (c: PoolClient) => Promise<T>,
    notified?: "notified",
  ): Promise<T> {
    const value = await this.#transaction("beginWrite", what, async (c) => {
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

  /**
   * Frames the event rows of `id` from seq `first` on, at most `take` of them (undefined: all), on
   * `c` (in a read transaction: the lookup of the next turn/end sees the same snapshot).
   */
  /**
   * The rows from seq `first` on (at most `take`), framed and judged; with `maxBytes`, only the
   * rows that fit in it (eventRowsWithin: the statement sends no row past the budget; the first
   * `proof` rows are not counted), at least one event.
   */
  async #frame(
    c: PoolClient,
    id: string,
    first: number,
    take: number | undefined,
    maxBytes?: number,
    proof = 0,
  ): Promise<sql.FramedLog & { cut?: true }> {
    let cut = false;
    let read: { rows: unknown[][]; columns: string[] };
    if (maxBytes === undefined) {
      read = await this.#queries.valueRows(c, "eventRows", {
        sessionId: id,
        fromSeq: first,
        limit: take ?? null,
      });
    } else {
      read = await this.#queries.valueRows(c, "eventRowsWithin", {
        sessionId: id,
        fromSeq: first,
        limit: take ?? null,
        maxBytes,
        pageFrom: first + proof,
      });
      // "rowCount" comes last, after the event's columns, and is not one of its members.
      const rowCount = Number(read.rows[0]?.[read.columns.length - 1] ?? 0);
      cut = read.rows.length < rowCount;
      read = { rows: read.rows, columns: read.columns.slice(0, -1) };
    }
    const { rows, columns } = read;
    const scanned = sql.scanEventRows(rows, first, sql.valueRowForm(columns, JSON_MEMBERS));
    // A page cut by bytes is a full page: what follows it settles a bad row in it.
    const from = sql.turnEndLookup(scanned, cut ? scanned.count : take);
    const next =
      from === undefined
        ? undefined
        : await this.#queries.first(c, "nextTurnEnd", { sessionId: id, fromSeq: from });
    const framed = sql.judgeEventRows(scanned, sql.eventsOf(id, this.location), next?.seq);
    return cut ? { ...framed, cut: true } : framed;
  }

  /** Runs `work` in one REPEATABLE READ READ ONLY transaction: several statements, one snapshot. */
  async #read<T>(what: string, work: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.#transaction("beginRead", what, work);
  }

  async #transaction<T>(
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
          throw connectionLost(error, this.location, what, committing);
        }
        c.release();
        if (isStatementTimeout(error)) {
          // A COMMIT cancelled late may have landed (it waits only for replication).
          if (committing) throw connectionLost(error, this.location, what, true);
          throw timedOut(error, this.location, what, this.timeouts.statementMs);
        }
        if (isRetryable(error) && attempt < ATTEMPTS) {
          await retryWait(attempt);
          continue;
        }
        throw refusedByServer(error, this.location);
      }
    }
  }

  /**
   * Runs `work` outside an explicit transaction on a pooled connection: reads, or (`writes`)
   * statements that are each a whole write, committing or changing nothing on their own, which are
   * retried on a serialization failure or deadlock as in {@link #transaction}. A connection that
   * broke is dropped; a write is then known not to have landed when the server answered its
   * statement with an error (the statement failed), and may have landed when the connection broke
   * with no answer (`commitUnknown`).
   */
  async #withClient<T>(
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
          throw connectionLost(error, this.location, what, unanswered);
        }
        c.release();
        if (isStatementTimeout(error)) {
          throw timedOut(error, this.location, what, this.timeouts.statementMs);
        }
        if (writes !== undefined && isRetryable(error) && attempt < ATTEMPTS) {
          await retryWait(attempt);
          continue;
        }
        throw refusedByServer(error, this.location);
      }
    }
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
    this.#assertOpen();
    let c: PoolClient;
    try {
      c = await this.#pool.connect();
    } catch (error) {
      throw connectionLost(error, this.location, what, false);
    }
    return c;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error(`the PostgreSQL backend of ${this.location} is closed`);
  }
}
