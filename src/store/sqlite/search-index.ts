// The SQLite search index: folded searchable text per event under an FTS5 trigram index, both made by the next search for the rows written since (writes only mark them); derived data, made when missing.

import {
  anySearchable,
  foldForSearch,
  MAX_EXCERPTS,
  SEARCHABLE_TYPES_JSON,
  searchableText,
} from "../../log/search-text.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import type { SearchHit, SearchPage, SearchQuery } from "../backend.js";
import { decodeCursor } from "../listing/list-cursor.js";
import { checkListLimit } from "../listing/list-limit.js";
import * as sql from "../sql/core.js";
import type { Statements } from "./statements.js";

/**
 * Search pages go in list order, most recent activity first: they start strictly after this key,
 * above every stored session (as list-pages.ts's first page).
 */
const FIRST_PAGE = { at: Number.MAX_SAFE_INTEGER + 1, id: "" };

/**
 * Past this many candidate rows from the trigram index, a page is found faster by walking the
 * sessions in list order (the first ones match) than by reading every candidate.
 */
const INDEX_CAP = 2000;

/**
 * The `through` of an unindexed range that takes every later row of its session in: what an
 * append leaves (see {@link SqliteSearchIndex.written}). A range's rows are read up to the
 * session's end, so an earlier build reading it indexes them all too.
 */
const OPEN_END = Number.MAX_SAFE_INTEGER;

/** How many event rows the backfill of a new index, or the indexing of a range, reads at a time. */
const BACKFILL_PAGE = 4096;

/** The FTS5 query of the terms the trigram index can find (three characters or more), or undefined. */
function ftsMatch(terms: readonly string[]): string | undefined {
  const long = terms.filter((term) => [...term].length >= 3);
  if (long.length === 0) return undefined;
  return long.map((term) => `"${term.replaceAll('"', '""')}"`).join(" AND ");
}

/**
 * The search index of one SQLite connection (statements in schema/storage/sqlite-queries.sql).
 * Its writes run inside the caller's write transaction, so the texts never differ from the events
 * they were made from. Written rows (appended, a repair's closers, a create's seed, a fork's
 * inherited rows) stay out of the index until the next search: each session has at most one
 * unindexed range of seqs, `search_pending (from_seq, through)`, every row outside it with its
 * text and indexed. A write only marks the range: the rows in it may have no text yet (an
 * earlier build wrote them at append, and copied a fork's), and the search's index step
 * ({@link indexUnindexed}) writes the missing ones from the events, then puts the range into the
 * trigram index. Putting every appended text through the trigram tokenizer inside the append cost
 * it most of its time, and reading each appended event back for its text about 15% of the rest.
 */
export class SqliteSearchIndex {
  readonly #statements: Statements;

  private constructor(statements: Statements) {
    this.#statements = statements;
  }

  /**
   * Makes the index when the database has none, filling it from the stored events, in one write
   * transaction (another process doing the same at once waits, then finds it made). An index
   * made by an earlier build gets the table of unindexed ranges, and the unindexed fork prefixes
   * (seq 0..through) of the earlier build's `search_unindexed` move into it.
   */
  static open(statements: Statements, inTransaction: () => boolean): SqliteSearchIndex {
    const index = new SqliteSearchIndex(statements);
    const made = () =>
      statements.get("searchIndexExists", {}) !== undefined &&
      statements.get("searchPendingExists", {}) !== undefined &&
      statements.get("searchUnindexedExists", {}) === undefined;
    if (made()) return index;
    statements.run("beginWrite", {});
    try {
      statements.run("createSearchPending", {});
      statements.run("createSearchUnindexed", {});
      if (statements.get("searchIndexExists", {}) === undefined) {
        // The backfill indexes every row: nothing is left unindexed.
        statements.run("createSearchTexts", {});
        statements.run("createSearchFts", {});
        statements.run("clearPending", {});
        index.#backfill();
      } else {
        index.#movePrefixes();
      }
      statements.run("dropSearchUnindexed", {});
      statements.run("commit", {});
    } catch (error) {
      if (inTransaction()) statements.run("rollback", {});
      throw error;
    }
    return index;
  }

  /**
   * Leaves events just inserted at `fromSeq` on (inside the write's transaction) to the next
   * search, which writes their texts: the session's unindexed range takes them in. A range an
   * append starts or continues is left open ({@link OPEN_END}), so that the appends after it, until
   * the next search, find their rows inside it and write nothing: the range's row is read, not
   * rewritten (a row changed by every commit costs each its page write). Nothing is read of the
   * events but their types.
   */
  written(sessionId: string, fromSeq: number, events: readonly SerializedEvent[]): void {
    if (events.length === 0) return;
    const range = { sessionId, fromSeq, through: OPEN_END };
    if (!anySearchable(events)) {
      this.#statements.run("extendPending", range);
      return;
    }
    if (this.#statements.run("markPending", range) > 0) return;
    const pending = this.#statements.get("pendingOf", { sessionId });
    // Open already: these rows are inside it.
    if (pending === undefined || Number(pending.through) >= fromSeq) return;
    // The session's range ends before rows that are indexed (an earlier build indexed appends at
    // once): that range goes into the index now, and these rows start a new one.
    const through = Math.min(Number(pending.through), fromSeq - 1);
    this.#indexRange(sessionId, Number(pending.fromSeq), through);
    this.#statements.run("replacePending", range);
  }

  /**
   * Leaves a fork's inherited rows, seq 0..`boundary` of the child, to the next search (inside the
   * fork's transaction), which makes their texts from the rows and indexes them, as it does for
   * appended rows: the fork copies the events alone. (Copying the source's texts too cost a fork
   * about a tenth of its time.)
   */
  forked(childId: string, boundary: number): void {
    this.#statements.run("markPending", { sessionId: childId, fromSeq: 0, through: boundary });
  }

  /** Forgets the rows of a session from `fromSeq` on: a cut tail, or (from 0) a deleted session. */
  deleteFrom(sessionId: string, fromSeq: number): void {
    // Before the range is cut: the rows inside it are the ones the trigram index never held.
    this.#statements.run("unindexSearchTexts", { sessionId, fromSeq });
    this.#statements.run("deleteSearchTexts", { sessionId, fromSeq });
    if (fromSeq === 0) {
      this.#statements.run("forgetPending", { sessionId });
    } else {
      this.#statements.run("cutPending", { sessionId, fromSeq });
      this.#statements.run("dropEmptyPending", { sessionId });
    }
  }

  /** Whether some session's rows wait for the trigram index (read before a search). */
  hasUnindexed(): boolean {
    return this.#statements.get("anyPending", {}) !== undefined;
  }

  /**
   * Writes the missing texts of every unindexed range and puts the range into the trigram index
   * (inside a write transaction).
   */
  indexUnindexed(): void {
    for (const { sessionId, fromSeq, through } of this.#statements.all("pendingSessions", {})) {
      const id = String(sessionId);
      this.#indexRange(id, Number(fromSeq), Number(through));
      this.#statements.run("forgetPending", { sessionId: id });
    }
  }

  /**
   * One page of matching sessions in list order, each with its first matching events. The caller
   * runs it inside a transaction that found nothing unindexed ({@link hasUnindexed}): the rows of
   * an unindexed range may have no text yet, so a search would not find them.
   * @throws StorageError INVALID_PARAMS for a limit out of range or a cursor list did not issue.
   */
  search(query: SearchQuery): SearchPage {
    checkListLimit(query.limit);
    const after = query.cursor === undefined ? FIRST_PAGE : decodeCursor(query.cursor, "activity");
    const match = ftsMatch(query.terms);
    const terms = JSON.stringify(query.terms);
    const filter = {
      afterAt: after.at,
      afterId: after.id,
      cwd: query.cwd ?? null,
      terms,
      limit: query.limit + 1,
    };
    const rare =
      match !== undefined &&
      Number(this.#statements.get("searchCandidates", { match, cap: INDEX_CAP })?.candidates) <
        INDEX_CAP;
    const rows =
      match !== undefined && rare
        ? this.#statements.all("searchSessions", { ...filter, match })
        : this.#statements.all("searchSessionsWalked", filter);
    return sql.listPage(rows, { limit: query.limit, order: "activity" }, (row): SearchHit => {
      const last = this.#statements.get("lastEvent", { sessionId: row.id });
      const listed = sql.listedHit(sql.headerFromRow(row), last?.seq, row.updatedAt);
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
   * Moves an earlier build's unindexed fork prefixes into `search_pending` (inside the open's
   * transaction). A session that has a range there too (an earlier build wrote to the store after
   * this one) gets its prefix indexed instead: the prefix ends before that range.
   */
  #movePrefixes(): void {
    for (const { sessionId, through } of this.#statements.all("unindexedPrefixes", {})) {
      const range = { sessionId, fromSeq: 0, through };
      if (this.#statements.get("pendingOf", { sessionId }) === undefined) {
        this.#statements.run("markPending", range);
      } else {
        this.#indexRange(String(sessionId), 0, Number(through));
      }
    }
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
        this.#writeText(row.sessionId, row);
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < BACKFILL_PAGE) break;
      after = { afterSessionId: last.sessionId, afterSeq: last.seq };
    }
    if (session !== undefined)
      this.#statements.run("indexSearchTexts", { sessionId: session, fromSeq: 0 });
  }

  /**
   * Writes the missing texts of a session's rows `fromSeq..through` from the events, a page of
   * rows at a time (only rows of a type that carries text, and without one), then puts the texts
   * of the range into the trigram index (inside a write transaction; the caller forgets or
   * replaces the range).
   */
  #indexRange(sessionId: string, fromSeq: number, through: number): void {
    let afterSeq = fromSeq - 1;
    for (;;) {
      const rows = this.#statements.all("unindexedEventRows", {
        sessionId,
        afterSeq,
        through,
        types: SEARCHABLE_TYPES_JSON,
        limit: BACKFILL_PAGE,
      });
      for (const row of rows) this.#writeText(sessionId, row);
      const last = rows.at(-1);
      if (last === undefined || rows.length < BACKFILL_PAGE) break;
      afterSeq = last.seq;
    }
    this.#statements.run("indexSearchRange", { sessionId, fromSeq, through });
  }

  /** Writes the folded text of one event row, if it has any (a row whose data is not JSON has none). */
  #writeText(
    sessionId: string,
    row: { readonly seq: number; readonly type: string; readonly data: string },
  ): void {
    let data: unknown;
    try {
      data = JSON.parse(row.data);
    } catch {
      return;
    }
    const text = searchableText({ type: row.type, data });
    if (text === "") return;
    this.#statements.run("insertSearchText", {
      sessionId,
      seq: row.seq,
      text: foldForSearch(text),
    });
  }
}
