// The catalog of a SQLite store as its backend answers it: listing, titles, id prefixes and search over the catalog tables.
import type * as backend from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import * as sql from "../sql/core.js";
import type { SqliteSearchIndex } from "./search-index.js";
import { paramsFrom, type Statements } from "./statements.js";

/**
 * How many read transactions a search tries before it searches inside a write transaction: each
 * one that finds rows waiting for the index (written by another connection since the index step)
 * is followed by another index step.
 */
const SEARCH_ATTEMPTS = 3;

/** What the catalog needs of its backend's connection. */
export interface SqliteAccess {
  readonly statements: Statements;
  readonly search: SqliteSearchIndex;
  /** Runs reads in one read transaction (one snapshot), after the file check. */
  read<T>(work: () => T): Promise<T>;
  /** Runs `work` in the backend's next group commit. */
  write<T>(work: () => T): Promise<T>;
  /** Tells the session's subscribers it changed. */
  changed(id: string): void;
}

/**
 * The catalog of one SQLite connection: the listing from the `sessions` rows and the catalog's
 * summaries, explicit titles from `session_titles`, id prefixes from the primary key, and search
 * through the search index (search-index.ts). Made and rebuilt by catalog.ts when the store opens.
 */
export class SqliteCatalog implements backend.SessionCatalog {
  readonly #access: SqliteAccess;

  constructor(access: SqliteAccess) {
    this.#access = access;
  }

  /** Lists from the session and summary rows, with one primary-key probe of each listed session's last event. */
  async list(query: backend.ListQuery): Promise<backend.ListPage> {
    const { statements } = this.#access;
    const { name, filter } = sql.listRun(query);
    return this.#access.read(() =>
      sql.listPage(
        statements.all(name, paramsFrom(name, filter)),
        query,
        ({ updatedAt, title, derivedTitle, ...row }) => {
          const last = statements.get("lastEvent", { sessionId: row.id });
          return sql.listedSession(sql.headerFromRow(row), last?.seq, {
            updatedAt,
            title,
            derivedTitle,
          });
        },
      ),
    );
  }

  async setTitle(id: string, title: string | null): Promise<void> {
    const { statements } = this.#access;
    await this.#access.write(() => {
      if (statements.get("sessionExists", { sessionId: id }) === undefined) {
        throw sessionNotFound(id);
      }
      if (title === null) statements.run("clearTitle", { sessionId: id });
      else statements.run("setTitle", { sessionId: id, title });
    });
    this.#access.changed(id);
  }

  async titles(id: string): Promise<backend.StoredTitles | undefined> {
    return this.#access.read(() => {
      const row = this.#access.statements.get("sessionTitles", { sessionId: id });
      return row === undefined ? undefined : sql.titlesOf(row);
    });
  }

  async idsWithPrefix(prefix: string, limit: number): Promise<backend.IdMatches> {
    const { statements } = this.#access;
    return this.#access.read(() => {
      const ids = statements.all("idsWithPrefix", { prefix, limit }).map((r) => r.id);
      const count = Number(statements.get("countIdsWithPrefix", { prefix })?.count ?? 0);
      return { ids, count };
    });
  }

  /**
   * Searches through the index (search-index.ts) in one read transaction that finds no row
   * waiting for it. Rows written since the last search (appends, fork prefixes, by any
   * connection) are first given their texts and put into the trigram index (one write, only when
   * there are some); rows another connection writes between that write and the read make the
   * read find some waiting again, and it is retried. After {@link SEARCH_ATTEMPTS} reads that
   * found some, the index step and the search run in one write transaction.
   */
  async search(query: backend.SearchQuery): Promise<backend.SearchPage> {
    const { search } = this.#access;
    for (let attempt = 0; attempt < SEARCH_ATTEMPTS; attempt++) {
      const page = await this.#access.read(() =>
        search.hasUnindexed() ? undefined : search.search(query),
      );
      if (page !== undefined) return page;
      await this.#access.write(() => search.indexUnindexed());
    }
    return this.#access.write(() => {
      search.indexUnindexed();
      return search.search(query);
    });
  }
}
