// What a store knows of its sessions beyond their logs, over the backend: listing pages, titles, id prefixes and search.
import { show } from "../../errors.js";
import { type SessionSearchResult, validateSessionListParams } from "../../generated.js";
import { titleProblem } from "../../log/session-title.js";
import { schemaProblem } from "../../util/schema-problem.js";
import type { ListQuery, SessionBackend, SessionCatalog } from "../backend.js";
import { invalidParams, sessionNotFound } from "../errors/storage-errors.js";
import { MAX_ID_CANDIDATES, onlyMatch } from "../ids/id-prefix.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "../listing/list-limit.js";
import { catalogOf } from "../listing/scan-catalog.js";
import { type SearchOptions, scanSearch, searchQueryOf, searchResult } from "../listing/search.js";
import { checkSessionId } from "./checks.js";
import type { StoreListPage } from "./options.js";

/** The latest instant `Date` can represent (ms): later activity times get no `updatedAt`. */
const MAX_DATE_MS = 8.64e15;

/**
 * Listing, titles, id prefixes and search of a store's sessions (see `SessionStore`): asked of the
 * backend's catalog, or of a `ScanCatalog` over its primitives when it keeps none.
 */
export class StoreCatalog {
  readonly #backend: SessionBackend;
  readonly #catalog: SessionCatalog;

  constructor(backend: SessionBackend) {
    this.#backend = backend;
    this.#catalog = catalogOf(backend);
  }

  /** A page of sessions; see `SessionStore.list`. */
  async list(query: Partial<ListQuery> = {}): Promise<StoreListPage> {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    checkListLimit(limit);
    if (query.order !== undefined && query.order !== "activity" && query.order !== "created") {
      throw invalidParams(
        "/order",
        `expected order "activity" or "created", got ${show(query.order)}`,
      );
    }
    // A filter the wire's schema refuses (U+0000, which no stored cwd holds and PostgreSQL text
    // cannot) is refused here too, so SDK callers get INVALID_PARAMS from every backend alike.
    if (query.cwd !== undefined && !validateSessionListParams({ cwd: query.cwd })) {
      throw invalidParams(
        "/cwd",
        `expected a cwd filter ${schemaProblem(validateSessionListParams.errors).message}, got ${show(query.cwd)}`,
      );
    }
    const page = await this.#catalog.list({
      ...query,
      limit,
      order: query.order ?? "activity",
    });
    return {
      sessions: page.sessions.map(({ updatedAt, ...session }) => ({
        ...session,
        ...(updatedAt > MAX_DATE_MS ? {} : { updatedAt: new Date(updatedAt).toISOString() }),
      })),
      ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
    };
  }
  /**
   * Checks a title to set (a string) or clear (null) for session `id`; returns the write that sets
   * it, for the caller to run in the session's order. See `SessionStore.setTitle`.
   * @throws StorageError INVALID_PARAMS at once.
   */
  titleSetter(id: string, title: string | null): () => Promise<void> {
    checkSessionId(id, "/sessionId");
    if (title !== null) {
      const problem = titleProblem(title);
      if (problem !== undefined) throw invalidParams("/title", problem);
    }
    return () => this.#catalog.setTitle(id, title);
  }

  /** The explicit title, else the derived one; see `SessionStore.title`. */
  async title(id: string): Promise<string | undefined> {
    checkSessionId(id, "/sessionId");
    const titles = await this.#catalog.titles(id);
    if (titles === undefined) throw sessionNotFound(id);
    return titles.explicit ?? titles.derived;
  }
  /** The full id a prefix names; see `SessionStore.resolveId`. */
  async resolveId(prefixOrId: string): Promise<string> {
    checkSessionId(prefixOrId, "/sessionId");
    if (await this.#backend.has(prefixOrId)) return prefixOrId;
    return onlyMatch(prefixOrId, await this.#catalog.idsWithPrefix(prefixOrId, MAX_ID_CANDIDATES));
  }
  /** The sessions whose text holds every term; see `SessionStore.search`. */
  async search(options: SearchOptions): Promise<SessionSearchResult> {
    const query = searchQueryOf(options);
    const page =
      this.#catalog.search === undefined
        ? await scanSearch(this.#backend, this.#catalog, query)
        : await this.#catalog.search(query);
    return searchResult(page, query.terms, async (id) => (await this.title(id)) ?? "");
  }
}
