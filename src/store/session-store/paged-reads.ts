// A session's events read from the store page by page, each page checked (from seq 0, the pages together against the log's invariants): what every read of a stored log goes through.
import { isDeepStrictEqual } from "node:util";
import { show } from "../../errors.js";
import type { DerivedMessage, SessionEvent } from "../../generated.js";
import { markAdmitted } from "../../log/admitted-events.js";
import { LogState } from "../../log/invariants.js";
import { formatEventLine, formatHeaderLine } from "../../log/jsonl-codec.js";
import { SessionLog } from "../../log/session-log.js";
import type { SessionBackend, StoredSuffix } from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import {
  admitStored,
  checkReadOptions,
  checkSeedLength,
  checkStoredHeader,
  type EventPage,
  type ReadOptions,
} from "../reads/event-pages.js";
import { checkSessionId } from "./checks.js";

/** How many events the store reads at a time when it streams a log (opening, rebuilding state). */
export const STREAM_PAGE = 4096;

/** Which events a read of a range returns: seqs `fromSeq` (inclusive) to `toSeq` (exclusive). */
export interface EventRange {
  readonly fromSeq?: number;
  readonly toSeq?: number;
}

/** How a session is named in errors: its id and the backend's kind. */
export function locationOf(backend: SessionBackend, id: string): string {
  return `session ${show(id)} (${backend.kind})`;
}

/** The reads of a store's sessions as stored now, over its backend (never from memory). */
export class PagedReads {
  readonly #backend: SessionBackend;

  constructor(backend: SessionBackend) {
    this.#backend = backend;
  }

  /** One page of a session's events; see `SessionStore.read`. */
  read(id: string, options: ReadOptions = {}): Promise<EventPage> {
    checkSessionId(id, "/sessionId");
    const { fromSeq, limit, maxBytes } = checkReadOptions(options);
    return this.#readPage(id, fromSeq, limit, maxBytes);
  }

  /**
   * A session's events page by page (see `SessionStore.pages`); `ahead`: each page's rows are asked for as soon as the rows of the page before
   * are in, before that page is checked (the store's work and the checks overlap), for a reader
   * that takes every page at once (memory then holds two pages of rows).
   */
  async *pages(
    id: string,
    options: ReadOptions = {},
    ahead = false,
  ): AsyncGenerator<EventPage, void, undefined> {
    checkSessionId(id, "/sessionId");
    const { fromSeq, limit, maxBytes } = checkReadOptions(options);
    // From seq 0 the pages go through a log of their own: the invariants span pages.
    const checked: { log?: SessionLog | undefined } = {};
    let next = fromSeq;
    let loading = this.#loadPage(id, next, limit, maxBytes);
    try {
      for (;;) {
        const stored = await loading;
        // A page that ends before the log does is followed by one from its end (a page whose
        // events fail the checks throws before that one is read).
        const more = stored.from === next && pageGoesOn(stored, limit);
        if (ahead && more) {
          loading = this.#loadPage(
            id,
            next + Math.min(limit, stored.events.length),
            limit,
            maxBytes,
          );
          // Handled now (it is awaited on the next turn, or at the end): a failure that comes while
          // this page is being taken is reported there, never as an unhandled rejection.
          loading.catch(() => undefined);
        }
        const page = this.#checkPage(id, next, limit, stored, fromSeq === 0 ? checked : undefined);
        yield page;
        if (page.done) return;
        next = page.nextSeq;
        if (!ahead) loading = this.#loadPage(id, next, limit, maxBytes);
      }
    } finally {
      // A read stopped early (or failed) leaves no page being read behind it.
      await loading.catch(() => undefined);
    }
  }

  /** The session as JSONL text, the header line then one line per event; see `SessionStore.exportLog`. */
  async exportLog(id: string): Promise<string> {
    const parts: string[] = [];
    for await (const page of this.pages(id, { limit: STREAM_PAGE }, true)) {
      if (parts.length === 0) parts.push(formatHeaderLine(page.header));
      for (const event of page.events) parts.push(formatEventLine(event));
    }
    return parts.join("");
  }

  /** The events of a range in one array; see `SessionStore.readEvents`. */
  async readEvents(id: string, range: EventRange = {}): Promise<readonly SessionEvent[]> {
    const events: SessionEvent[] = [];
    const toSeq = range.toSeq ?? Number.POSITIVE_INFINITY;
    const fromSeq = range.fromSeq ?? 0;
    if (toSeq <= fromSeq) return markAdmitted(events);
    for await (const page of this.pages(id, { fromSeq, limit: STREAM_PAGE }, true)) {
      for (const event of page.events) {
        if (event.seq >= toSeq) return markAdmitted(events);
        events.push(event);
      }
    }
    return markAdmitted(events);
  }

  /** The messages derived from a session's events 0…`throughSeq`; see `SessionStore.messagesThrough`. */
  async messagesThrough(id: string, throughSeq: number): Promise<readonly DerivedMessage[]> {
    const state = new LogState();
    for await (const page of this.pages(id, { limit: STREAM_PAGE })) {
      for (const event of page.events) {
        if (event.seq > throughSeq) return state.surface.messages();
        state.apply(event);
      }
    }
    return state.surface.messages();
  }

  /**
   * One page read from the store: `limit` events from `fromSeq` (one more is asked for, to tell
   * whether the page ends the log). With `checked`, the events also go through `checked.log`
   * (made at seq 0), which checks the invariants across pages.
   */
  async #readPage(
    id: string,
    fromSeq: number,
    limit: number,
    maxBytes: number,
    checked?: { log?: SessionLog | undefined },
  ): Promise<EventPage> {
    const stored = await this.#loadPage(id, fromSeq, limit, maxBytes);
    return this.#checkPage(id, fromSeq, limit, stored, checked);
  }

  /**
   * The rows of one page (see {@link #readPage}): one more than `limit` is asked for, within
   * `maxBytes` (the backend stops before the event that would pass it).
   */
  async #loadPage(
    id: string,
    fromSeq: number,
    limit: number,
    maxBytes: number,
  ): Promise<StoredSuffix> {
    const stored = await this.#backend.loadFrom(id, fromSeq, limit + 1, maxBytes);
    if (stored === undefined) throw sessionNotFound(id);
    return stored;
  }

  /** Checks the rows of one page {@link #loadPage} read (see {@link #readPage}). */
  #checkPage(
    id: string,
    fromSeq: number,
    limit: number,
    stored: StoredSuffix,
    checked?: { log?: SessionLog | undefined },
  ): EventPage {
    const location = locationOf(this.#backend, id);
    const header = stored.header;
    checkStoredHeader(header, location);
    if (stored.from !== fromSeq) {
      return { header, events: [], nextSeq: fromSeq, done: true, pastEnd: true, tornTail: false };
    }
    const more = pageGoesOn(stored, limit);
    if (stored.events.length > limit) stored.events.length = limit;
    if (checked !== undefined) {
      checked.log ??= fromSeq === 0 ? new SessionLog(header) : undefined;
      // Deleted and created again between two pages: not the log the first pages came from.
      if (checked.log !== undefined && !isDeepStrictEqual(checked.log.header, header)) {
        throw sessionNotFound(id);
      }
    }
    const log = checked?.log;
    const events = admitStored(stored.events, fromSeq, location, log);
    if (!more && log !== undefined) checkSeedLength(header, log.length, location);
    return {
      header,
      events,
      nextSeq: fromSeq + events.length,
      done: !more,
      pastEnd: false,
      tornTail: !more && stored.tornTail,
    };
  }
}

/** Whether events follow a page read with `limit + 1` (one more than it holds) or cut by bytes. */
function pageGoesOn(stored: StoredSuffix, limit: number): boolean {
  return stored.events.length > limit || stored.cut === true;
}
