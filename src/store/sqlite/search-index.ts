// The SQLite search index: folded searchable text per event under an FTS5 trigram index, kept in the write transactions; derived data, made when missing.

import { foldForSearch, MAX_EXCERPTS, searchableText } from "../../log/search-text.js";
import { type SerializedEvent, serializedSearchText } from "../../log/serialized-event.js";
import type { SearchHit, SearchPage, SearchQuery } from "../backend.js";
import { decodeCursor } from "../list-cursor.js";
import { checkListLimit } from "../list-limit.js";
import * as sql from "../sql/core.js";
import type { Statements } from "./statements.js";

/**
 * Whether a schema object (by the name of its table) belongs to the search index — its tables,
 * FTS5's shadow tables, their automatic indexes. The index is not part of the versioned layout
 * (it holds nothing the events do not), so the version policy leaves these be.
 */
export function isSearchObject(tableName: string): boolean {
  return (
    tableName === "search_texts" ||
    tableName === "search_unindexed" ||
    tableName.startsWith("search_fts")
  );
}

/** Lists start strictly after this key: above every stored session (as list-pages.ts's first page). */
/** Search pages go newest created first (the key before every session's). */
const FIRST_PAGE = { at: Number.MAX_SAFE_INTEGER + 1, id: "" };

/**
 * Past this many candidate rows from the trigram index, a page is found faster by walking the
 * sessions in list order (the first ones match) than by reading every candidate.
 */
const INDEX_CAP = 2000;

/** How many event rows the backfill of a new index reads at a time. */
const BACKFILL_PAGE = 4096;

/** The FTS5 query of the terms the trigram index can find (three characters or more), or undefined. */
function ftsMatch(terms: readonly string[]): string | undefined {
  const long = terms.filter((term) => [...term].length >= 3);
  if (long.length === 0) return undefined;
  return long.map((term) => `"${term.replaceAll('"', '""')}"`).join(" AND ");
}

/**
 * The search index of one SQLite connection (statements in schema/storage/sqlite-queries.sql).
 * Its writes run inside the caller's write transaction, so the index never differs from the
 * events it was made from.
 */
export class SqliteSearchIndex {
  readonly #statements: Statements;

  private constructor(statements: Statements) {
    this.#statements = statements;
  }

  /**
   * Makes the index when the database has none, filling it from the stored events, in one write
   * transaction (another process doing the same at once waits, then finds it made); an index made
   * by an earlier build gets the table of unindexed fork prefixes it lacks.
   */
  static open(statements: Statements, inTransaction: () => boolean): SqliteSearchIndex {
    const index = new SqliteSearchIndex(statements);
    const made = () =>
      statements.get("searchIndexExists", {}) !== undefined &&
      statements.get("searchUnindexedExists", {}) !== undefined;
    if (made()) return index;
    statements.run("beginWrite", {});
    try {
      if (statements.get("searchIndexExists", {}) === undefined) {
        statements.run("createSearchTexts", {});
        statements.run("createSearchFts", {});
        index.#backfill();
      }
      statements.run("createSearchUnindexed", {});
      statements.run("commit", {});
    } catch (error) {
      if (inTransaction()) statements.run("rollback", {});
      throw error;
    }
    return index;
  }

  /** Indexes events just inserted at `fromSeq` on (inside the write's transaction). */
  insert(sessionId: string, fromSeq: number, events: readonly SerializedEvent[]): void {
    let any = false;
    for (const event of events) {
      const text = serializedSearchText(event);
      if (text === "") continue;
      this.#statements.run("insertSearchText", {
        sessionId,
        seq: event.seq,
        text: foldForSearch(text),
      });
      any = true;
    }
    if (any) this.#statements.run("indexSearchTexts", { sessionId, fromSeq });
  }

  /**
   * Copies the source's rows of a fork's inherited prefix (inside the fork's transaction) and
   * leaves them out of the trigram index until the next search: putting tens of thousands of
   * texts through the trigram tokenizer would cost a fork several times its copy of the events.
   */
  copyPrefix(sourceId: string, childId: string, boundary: number): void {
    if (this.#statements.run("copySearchPrefix", { sourceId, childId, boundary }) > 0) {
      this.#statements.run("markUnindexed", { sessionId: childId, through: boundary });
    }
  }

  /** Forgets the rows of a session from `fromSeq` on: a cut tail, or (from 0) a deleted session. */
  deleteFrom(sessionId: string, fromSeq: number): void {
    this.#statements.run("unindexSearchTexts", { sessionId, fromSeq });
    this.#statements.run("deleteSearchTexts", { sessionId, fromSeq });
    if (fromSeq === 0) this.#statements.run("forgetUnindexed", { sessionId });
    else this.#statements.run("cutUnindexed", { sessionId, fromSeq });
  }

  /** Whether some fork's inherited rows wait for the trigram index (read before a search). */
  hasUnindexed(): boolean {
    return this.#statements.get("anyUnindexed", {}) !== undefined;
  }

  /** Puts every fork prefix left out of the trigram index into it (inside a write transaction). */
  indexUnindexed(): void {
    for (const { sessionId, through } of this.#statements.all("unindexedSessions", {})) {
      this.#statements.run("indexSearchPrefix", { sessionId, through });
      this.#statements.run("forgetUnindexed", { sessionId });
    }
  }

  /**
   * One page of matching sessions in list order, each with its first matching events; the caller
   * runs it inside a read transaction.
   * @throws StorageError INVALID_PARAMS for a limit out of range or a cursor list did not issue.
   */
  search(query: SearchQuery): SearchPage {
    checkListLimit(query.limit);
    const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor, "created");
    const match = ftsMatch(query.terms);
    const terms = JSON.stringify(query.terms);
    const filter = {
      afterCreatedAt: after.at,
      afterId: after.id,
      cwd: query.cwd ?? null,
      terms,
      limit: query.limit + 1,
    };
    // Rows left out of the trigram index (a fork made since the caller indexed them) are found by
    // walking the sessions, which reads the texts themselves.
    const rare =
      match !== undefined &&
      !this.hasUnindexed() &&
      Number(this.#statements.get("searchCandidates", { match, cap: INDEX_CAP })?.candidates) <
        INDEX_CAP;
    const rows =
      match !== undefined && rare
        ? this.#statements.all("searchSessions", { ...filter, match })
        : this.#statements.all("searchSessionsWalked", filter);
    return sql.listPage(rows, { limit: query.limit }, (row): SearchHit => {
      const last = this.#statements.get("lastEvent", { sessionId: row.id });
      const listed = sql.listedHit(sql.headerFromRow(row), last?.seq, last?.time);
      const found = this.#statements.all("searchMatches", {
        sessionId: row.id,
        terms,
        limit: MAX_EXCERPTS,
      });
      const events = found.map(({ seq, type, time, data }) => ({
        type,
        seq,
        time,
        data: JSON.parse(data) as unknown,
      }));
      return { ...listed, events };
    });
  }

  /**
   * Fills the index from every stored event, a page of rows at a time (a store of any size is
   * indexed in bounded memory); a row whose data is not JSON carries no text.
   */
  #backfill(): void {
    let after = { afterSessionId: "", afterSeq: -1 };
    let session: string | undefined;
    for (;;) {
      const rows = this.#statements.all("searchEventRows", { ...after, limit: BACKFILL_PAGE });
      for (const row of rows) {
        if (row.sessionId !== session) {
          if (session !== undefined)
            this.#statements.run("indexSearchTexts", { sessionId: session, fromSeq: 0 });
          session = row.sessionId;
        }
        let data: unknown;
        try {
          data = JSON.parse(row.data);
        } catch {
          continue;
        }
        const text = searchableText({ type: row.type, data });
        if (text === "") continue;
        this.#statements.run("insertSearchText", {
          sessionId: row.sessionId,
          seq: row.seq,
          text: foldForSearch(text),
        });
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < BACKFILL_PAGE) break;
      after = { afterSessionId: last.sessionId, afterSeq: last.seq };
    }
    if (session !== undefined)
      this.#statements.run("indexSearchTexts", { sessionId: session, fromSeq: 0 });
  }
}
