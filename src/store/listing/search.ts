// Full-text search over a backend: the checks of a query, the scan for backends without an index, and the excerpts of a page.

import { show } from "../../errors.js";
import {
  RPC_METHOD,
  RPC_PARAM_BOUNDS,
  type SessionSearchParams,
  type SessionSearchResult,
  validateSessionSearchParams,
} from "../../generated.js";
import {
  type Excerpt,
  excerptOf,
  foldForSearch,
  holdsEveryTerm,
  MAX_EXCERPTS,
  searchableText,
  searchTerms,
} from "../../log/search-text.js";
import { schemaProblem } from "../../util/schema-problem.js";
import type {
  SearchHit,
  SearchPage,
  SearchQuery,
  SessionBackend,
  SessionCatalog,
} from "../backend.js";
import { invalidParams } from "../errors/storage-errors.js";
import { DEFAULT_PAGE_BYTES } from "../reads/event-pages.js";
import { listPage } from "../sql/list-pages.js";
import { MAX_LIST_LIMIT } from "./list-limit.js";

/** What `store.search` takes: the words to find, a cwd filter, a page size and a cursor. */
export type SearchOptions = Pick<SessionSearchParams, "query" | "cwd" | "limit" | "cursor">;

/** The page size of `search` when none is given. */
export const DEFAULT_SEARCH_LIMIT: number =
  RPC_PARAM_BOUNDS[RPC_METHOD.sessionSearch].limit.default;

/** How many events a scan reads at once from one log. */
const SCAN_PAGE = 1000;

/**
 * The backend query of search options, checked as the session/search params schema states.
 * @throws StorageError INVALID_PARAMS for a query out of bounds or without a term, a limit out of
 *   range (a cursor is checked by the backend that decodes it).
 */
export function searchQueryOf(options: SearchOptions): SearchQuery {
  const params = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  );
  if (!validateSessionSearchParams(params)) {
    const found = schemaProblem(validateSessionSearchParams.errors);
    throw invalidParams(
      found.instancePath,
      `expected search params ${found.message}, got ${show(options)}`,
    );
  }
  const terms = searchTerms(options.query);
  if (terms.length === 0) {
    throw invalidParams(
      "/query",
      `expected a query with a term to find, got ${show(options.query)}`,
    );
  }
  return {
    terms,
    limit: options.limit ?? DEFAULT_SEARCH_LIMIT,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  };
}

/** The first events (at most MAX_EXCERPTS) of a stored log whose text holds every term, reading it a page at a time. */
async function matchingEvents(
  backend: SessionBackend,
  id: string,
  terms: readonly string[],
): Promise<unknown[]> {
  const found: unknown[] = [];
  for (let from = 0; ; ) {
    const page = await backend.loadFrom(id, from, SCAN_PAGE, DEFAULT_PAGE_BYTES);
    if (page === undefined) return found;
    for (const event of page.events) {
      if (!holdsEveryTerm(foldForSearch(searchableText(event)), terms)) continue;
      found.push(event);
      if (found.length === MAX_EXCERPTS) return found;
    }
    if (page.events.length < SCAN_PAGE && page.cut !== true) return found;
    from = page.from + page.events.length;
  }
}

/**
 * Search without an index — the slow path (memory, JSONL, a backend without a catalog): walks the
 * pages of `catalog.list` in its order and reads each listed log until its first matches, until
 * one hit past the page is found.
 * @throws StorageError INVALID_PARAMS for a cursor `list` would refuse.
 */
export async function scanSearch(
  backend: SessionBackend,
  catalog: SessionCatalog,
  query: SearchQuery,
): Promise<SearchPage> {
  const hits: SearchHit[] = [];
  let cursor = query.cursor;
  do {
    const page = await catalog.list({
      limit: MAX_LIST_LIMIT,
      order: "activity",
      ...(query.cwd === undefined ? {} : { cwd: query.cwd }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const listed of page.sessions) {
      if (listed.eventCount === 0) continue;
      const events = await matchingEvents(backend, listed.header.id, query.terms);
      if (events.length === 0) continue;
      hits.push({ ...listed, events });
      if (hits.length > query.limit) {
        return listPage(hits, { limit: query.limit, order: "activity" }, (hit) => hit);
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return listPage(hits, { limit: query.limit, order: "activity" }, (hit) => hit);
}

/** The excerpts of a hit's events: one per event, around its first match. */
export function excerptsOf(hit: SearchHit, terms: readonly string[]): Excerpt[] {
  const excerpts: Excerpt[] = [];
  for (const event of hit.events) {
    const seq = (event as { seq: number }).seq;
    const excerpt = excerptOf(seq, searchableText(event), terms);
    if (excerpt !== undefined) excerpts.push(excerpt);
  }
  return excerpts;
}

/** The wire shape of a page, with each session's title. */
export async function searchResult(
  page: SearchPage,
  terms: readonly string[],
  titleOf: (id: string) => Promise<string>,
): Promise<SessionSearchResult> {
  const results: SessionSearchResult["results"][number][] = [];
  for (const hit of page.sessions) {
    const excerpts = excerptsOf(hit, terms);
    // An index is a prefilter; the excerpt checks the text itself.
    if (excerpts.length === 0) continue;
    results.push({
      sessionId: hit.header.id,
      title: await titleOf(hit.header.id),
      excerpts: excerpts as SessionSearchResult["results"][number]["excerpts"],
    });
  }
  return page.nextCursor === undefined ? { results } : { results, nextCursor: page.nextCursor };
}
