// The catalog of a backend that keeps none: listing, titles and id prefixes read from the durable primitives alone.
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { derivedTitle } from "../../log/session-title.js";
import type {
  IdMatches,
  ListedSession,
  ListOrder,
  ListPage,
  ListQuery,
  SessionBackend,
  SessionCatalog,
  StoredTitles,
} from "../backend.js";
import { matchIds } from "../ids/id-prefix.js";
import { DEFAULT_PAGE_BYTES } from "../reads/event-pages.js";
import { decodeCursor, pageOf } from "./list-cursor.js";
import { checkListLimit } from "./list-limit.js";

/** How many sessions a listing reads at once: a backend over a connection answers them side by side. */
const READS_AT_ONCE = 16;

/**
 * How many events a read for the derived title asks for at once: the first user message is
 * usually among a log's first few events, and a log without one is read a page at a time.
 */
const TITLE_PAGE = 64;

/**
 * {@link SessionCatalog} over a backend's durable primitives, for a backend that keeps no catalog
 * (the store falls back to it; see {@link catalogOf}). Nothing is indexed, so every answer is a
 * scan: `list` reads each stored session's fork point (header and length, from `ids()` and
 * `forkPoint`) and, in activity order, its last event (`loadFrom`), then the titles of the page's
 * sessions only — the explicit one (`readTitle`), else the one derived from the first
 * `user/message`, read from the top of the log a page at a time. `idsWithPrefix` matches over
 * `ids()`. It has no `search`: the store scans the logs without one.
 *
 * A log the backend refuses to read (CORRUPT_LOG, FORMAT_UNSUPPORTED) is left out of the listing,
 * and a derived title it cannot read is none: `load` reports what is wrong with it.
 */
export class ScanCatalog implements SessionCatalog {
  readonly #backend: SessionBackend;

  constructor(backend: SessionBackend) {
    this.#backend = backend;
  }

  /**
   * One page in `query.order`, from a read of every stored session (its titles read for the page
   * only).
   * @throws StorageError INVALID_PARAMS for a limit above MAX_LIST_LIMIT or a cursor this did not
   *   issue, before any log is read.
   */
  async list(query: ListQuery): Promise<ListPage> {
    checkListLimit(query.limit);
    const order = query.order ?? "created";
    if (query.cursor !== undefined) decodeCursor(query.cursor, order);
    const ids = await this.#backend.ids();
    const listed: ListedSession[] = [];
    for (let start = 0; start < ids.length; start += READS_AT_ONCE) {
      const batch = ids.slice(start, start + READS_AT_ONCE);
      for (const session of await Promise.all(batch.map((id) => this.#listed(id, query, order)))) {
        if (session !== undefined) listed.push(session);
      }
    }
    const page = pageOf(listed, query);
    const sessions = await Promise.all(
      page.sessions.map((session) => this.#complete(session, order)),
    );
    return { ...page, sessions };
  }

  async setTitle(id: string, title: string | null): Promise<void> {
    await this.#backend.writeTitle(id, title);
  }

  async titles(id: string): Promise<StoredTitles | undefined> {
    const derived = await this.#derived(id);
    if (derived === undefined) return undefined;
    const explicit = await this.#backend.readTitle(id);
    return {
      ...(explicit === undefined ? {} : { explicit }),
      ...(derived.title === undefined ? {} : { derived: derived.title }),
    };
  }

  async idsWithPrefix(prefix: string, limit: number): Promise<IdMatches> {
    return matchIds(await this.#backend.ids(), prefix, limit);
  }

  /**
   * Session `id` as the listing sorts it, when it passes the filters: in `created` order its
   * `updatedAt` is left at `createdAt` (the order does not need it) until {@link #complete}.
   * Undefined when it is filtered out, gone since `ids()`, or unreadable.
   */
  async #listed(
    id: string,
    query: ListQuery,
    order: ListOrder,
  ): Promise<ListedSession | undefined> {
    const point = await unlessUnreadable(this.#backend.forkPoint(id, undefined), undefined);
    if (point === undefined) return undefined;
    const { header, length } = point;
    if (query.cwd !== undefined && header.cwd !== query.cwd) return undefined;
    if (query.parentSession !== undefined && header.parentSession !== query.parentSession) {
      return undefined;
    }
    const updatedAt =
      order === "activity" ? await this.#lastActivity(header, length) : header.createdAt;
    return { header, eventCount: length, updatedAt };
  }

  /** A listed session of the page with its last activity (in `created` order) and its title. */
  async #complete(session: ListedSession, order: ListOrder): Promise<ListedSession> {
    const { header, eventCount } = session;
    const updatedAt =
      order === "activity" ? session.updatedAt : await this.#lastActivity(header, eventCount);
    const title =
      (await this.#backend.readTitle(header.id)) ?? (await this.#derived(header.id))?.title;
    return { ...session, updatedAt, ...(title === undefined ? {} : { title }) };
  }

  /** The time of the last of a session's first `length` events; `createdAt` when it has none. */
  async #lastActivity(header: SessionHeader, length: number): Promise<number> {
    if (length === 0) return header.createdAt;
    const page = await unlessUnreadable(
      this.#backend.loadFrom(header.id, length - 1, 1),
      undefined,
    );
    const last = page?.events.at(-1) as { time?: unknown } | undefined;
    return typeof last?.time === "number" ? last.time : header.createdAt;
  }

  /**
   * The title derived from a session's first `user/message` (see {@link derivedTitle}), its log
   * read from the top until one is found; `title` absent when it has none (or it cannot be read).
   * Undefined when there is no such session.
   */
  async #derived(id: string): Promise<{ readonly title?: string } | undefined> {
    for (let from = 0; ; ) {
      const page = await unlessUnreadable(
        this.#backend.loadFrom(id, from, TITLE_PAGE, DEFAULT_PAGE_BYTES),
        null,
      );
      if (page === null) return {};
      if (page === undefined) return undefined;
      const first = page.events.find((e) => (e as { type?: unknown }).type === "user/message");
      if (first !== undefined) {
        const title = derivedTitle([first]);
        return title === undefined ? {} : { title };
      }
      if (page.events.length < TITLE_PAGE && page.cut !== true) return {};
      from = page.from + page.events.length;
    }
  }
}

/** The catalog a store uses over `backend`: the backend's own, else a {@link ScanCatalog}. */
export function catalogOf(backend: SessionBackend): SessionCatalog {
  return backend.catalog ?? new ScanCatalog(backend);
}

/** What `read` answers, or `fallback` when the backend refuses the log as damaged or foreign. */
async function unlessUnreadable<T, F>(read: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await read;
  } catch (error) {
    if (
      error instanceof StorageError &&
      (error.code === "CORRUPT_LOG" || error.code === "FORMAT_UNSUPPORTED")
    ) {
      return fallback;
    }
    throw error;
  }
}
