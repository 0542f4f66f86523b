// The catalog of a PostgreSQL store as its backend answers it: listing, titles, id prefixes and search over the catalog tables.
import type { PoolClient } from "pg";
import { show } from "../../errors.js";
import type * as backend from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import { prefixEnd } from "../ids/id-prefix.js";
import * as sql from "../sql/core.js";
import { indexPending, searchPage } from "./search-index.js";
import { paramsFrom, type Queries } from "./statements.js";
import type { Transactions } from "./transactions.js";

/** What the catalog needs of its backend. */
export interface PostgresAccess {
  readonly db: Transactions;
  readonly queries: Queries;
  /** Runs `work` in one write transaction that tells the session's subscribers when it commits. */
  write<T>(id: string, what: string, work: (c: PoolClient) => Promise<T>): Promise<T>;
}

/**
 * The catalog of one PostgreSQL store: the listing from the `sessions` rows and the catalog's
 * summaries in one statement, explicit titles from `session_titles`, id prefixes from the
 * primary key, and search through the search index (search-index.ts). Made and rebuilt by
 * catalog.ts when the store opens.
 */
export class PostgresCatalog implements backend.SessionCatalog {
  readonly #access: PostgresAccess;

  constructor(access: PostgresAccess) {
    this.#access = access;
  }

  /** Lists in one statement (one snapshot): each row carries its session's last seq and time. */
  async list(query: backend.ListQuery): Promise<backend.ListPage> {
    const { db, queries } = this.#access;
    const { name, filter } = sql.listRun(query);
    const rows = await db.withClient("list sessions", (c) =>
      queries.rows(c, name, paramsFrom(name, filter)),
    );
    return sql.listPage(rows, query, ({ lastSeq, updatedAt, title, derivedTitle, ...row }) =>
      sql.listedSession(sql.headerFromRow(row), lastSeq, { updatedAt, title, derivedTitle }),
    );
  }

  async setTitle(id: string, title: string | null): Promise<void> {
    const { queries } = this.#access;
    await this.#access.write(id, `set the title of session ${show(id)}`, async (c) => {
      // Keeps the session from being deleted while its title is written.
      if ((await queries.first(c, "shareSessionRow", { sessionId: id })) === undefined) {
        throw sessionNotFound(id);
      }
      if (title === null) await queries.run(c, "clearTitle", { sessionId: id });
      else await queries.run(c, "setTitle", { sessionId: id, title });
    });
  }

  async titles(id: string): Promise<backend.StoredTitles | undefined> {
    const { db, queries } = this.#access;
    const row = await db.withClient(`read the titles of session ${show(id)}`, (c) =>
      queries.first(c, "sessionTitles", { sessionId: id }),
    );
    return row === undefined ? undefined : sql.titlesOf(row);
  }

  async idsWithPrefix(prefix: string, limit: number): Promise<backend.IdMatches> {
    const { db, queries } = this.#access;
    const range = { prefix, end: prefixEnd(prefix) ?? null };
    return db.read(`match ids starting with ${show(prefix)}`, async (c) => {
      const ids = (await queries.rows(c, "idsWithPrefix", { ...range, limit })).map((r) => r.id);
      const counted = await queries.first(c, "countIdsWithPrefix", range);
      return { ids, count: Number(counted?.count ?? 0) };
    });
  }

  /**
   * Searches the index (search-index.ts) on one snapshot, once the texts of the rows written
   * since the last search are made.
   */
  async search(query: backend.SearchQuery): Promise<backend.SearchPage> {
    const { db, queries } = this.#access;
    const what = "search sessions";
    await indexPending(queries, {
      once: (work) => db.withClient(what, work),
      inTransaction: (work) => db.transaction("beginWrite", what, work),
    });
    return db.read(what, (c) => searchPage(c, queries, query));
  }
}
