// A backend that keeps sessions in this process's memory, as JSON text (so nothing is shared with callers).

import type { SessionEvent, SessionHeader } from "../../generated.js";
import { lastTurnMarkerAt, nextTurnEndAfter } from "../../log/fork-rules.js";
import { type SerializedEvent, serializedTitle } from "../../log/serialized-event.js";
import { derivedTitle } from "../../log/session-title.js";
import type {
  IdMatches,
  ListedSession,
  ListPage,
  ListQuery,
  ReleaseLock,
  SessionBackend,
  SessionCatalog,
  StoredForkPoint,
  StoredLog,
  StoredSuffix,
  StoredTitles,
  Unsubscribe,
} from "../backend.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../errors/storage-errors.js";
import { matchIds } from "../ids/id-prefix.js";
import { pageOf } from "../listing/list-cursor.js";
import { checkListLimit } from "../listing/list-limit.js";
import { checkPageBytes, checkPageLimit, PageBytes } from "../reads/page-limit.js";
import { ChangeHub } from "../watch/change-hub.js";

interface Entry {
  readonly header: string;
  readonly events: string[];
  readonly lastTime: number | undefined;
  readonly title?: string | undefined;
  /** Derived from the first user message, once one is stored. */
  readonly derived?: string | undefined;
}

/** Sessions in memory: for tests, and for the SDK used without persistence. Gone with the process. */
export class MemoryBackend implements SessionBackend {
  readonly kind = "memory";
  #sessions = new Map<string, Entry>();
  readonly #changes = new ChangeHub();

  /** Listing, titles and id prefixes, from the entries themselves. */
  readonly catalog: SessionCatalog = {
    list: async (query: ListQuery): Promise<ListPage> => {
      checkListLimit(query.limit);
      const listed: ListedSession[] = [];
      for (const entry of this.#sessions.values()) {
        const header = JSON.parse(entry.header) as SessionHeader;
        if (query.cwd !== undefined && header.cwd !== query.cwd) continue;
        if (query.parentSession !== undefined && header.parentSession !== query.parentSession) {
          continue;
        }
        const title = entry.title ?? entry.derived;
        listed.push({
          header,
          eventCount: entry.events.length,
          updatedAt: entry.lastTime ?? header.createdAt,
          ...(title === undefined ? {} : { title }),
        });
      }
      return pageOf(listed, query);
    },
    setTitle: async (id: string, title: string | null): Promise<void> => {
      const entry = this.#get(id);
      this.#sessions.set(id, { ...entry, title: title ?? undefined });
    },
    titles: async (id: string): Promise<StoredTitles | undefined> => {
      const entry = this.#sessions.get(id);
      if (entry === undefined) return undefined;
      return {
        ...(entry.title === undefined ? {} : { explicit: entry.title }),
        ...(entry.derived === undefined ? {} : { derived: entry.derived }),
      };
    },
    idsWithPrefix: async (prefix: string, limit: number): Promise<IdMatches> =>
      matchIds(this.#sessions.keys(), prefix, limit),
  };

  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    if (this.#sessions.has(header.id)) throw sessionTaken(header.id);
    this.#sessions.set(header.id, {
      header: JSON.stringify(header),
      events: events.map((e) => e.json),
      lastTime: events.at(-1)?.time,
      derived: serializedTitle(events),
    });
    this.#changes.notify(header.id);
  }

  async append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void> {
    const entry = this.#get(id);
    if (entry.events.length !== fromSeq) {
      throw seqConflict(id, entry.events.length, fromSeq);
    }
    const lines = events.map((e) => e.json);
    this.#sessions.set(id, {
      ...entry,
      events: entry.events.concat(lines),
      lastTime: events.at(-1)?.time ?? entry.lastTime,
      derived: entry.derived ?? serializedTitle(events),
    });
    this.#changes.notify(id);
  }

  async load(id: string): Promise<StoredLog | undefined> {
    const entry = this.#sessions.get(id);
    if (entry === undefined) return undefined;
    return {
      header: JSON.parse(entry.header),
      events: entry.events.map((line) => JSON.parse(line)),
      tornTail: false,
    };
  }

  async loadFrom(
    id: string,
    fromSeq: number,
    limit?: number,
    maxBytes?: number,
  ): Promise<StoredSuffix | undefined> {
    checkPageLimit(limit);
    checkPageBytes(maxBytes);
    const entry = this.#sessions.get(id);
    if (entry === undefined) return undefined;
    const from = fromSeq <= entry.events.length ? fromSeq : 0;
    const to = Math.min(entry.events.length, limit === undefined ? Infinity : from + limit);
    const budget = new PageBytes(maxBytes);
    const events: unknown[] = [];
    for (let seq = from; seq < to; seq++) {
      const line = entry.events[seq] as string;
      if (!budget.takes(Buffer.byteLength(line, "utf8"))) break;
      events.push(JSON.parse(line));
    }
    const header = JSON.parse(entry.header);
    return { header, events, tornTail: false, from, ...(budget.cut ? { cut: true } : {}) };
  }

  subscribe(id: string, onChange: () => void): Unsubscribe {
    return this.#changes.subscribe(id, onChange);
  }

  async has(id: string): Promise<boolean> {
    return this.#sessions.has(id);
  }

  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    const log = await this.load(id);
    if (log === undefined) return undefined;
    const events = log.events as SessionEvent[];
    const at = boundary ?? events.length - 1;
    const marker = lastTurnMarkerAt(events, at);
    const closedAt = marker?.type === "turn/start" ? nextTurnEndAfter(events, at) : undefined;
    return {
      header: log.header,
      length: events.length,
      marker,
      ...(closedAt === undefined ? {} : { closedAt }),
    };
  }

  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    const source = this.#get(sourceId);
    if (this.#sessions.has(header.id)) throw sessionTaken(header.id);
    const events = source.events.slice(0, boundary + 1);
    const last = events.at(-1);
    this.#sessions.set(header.id, {
      header: JSON.stringify(header),
      events,
      lastTime: last === undefined ? undefined : (JSON.parse(last) as SessionEvent).time,
      derived: derivedTitle(events.map((line) => JSON.parse(line))),
    });
    this.#changes.notify(header.id);
  }

  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    const entry = this.#get(id);
    const events = entry.events.slice(0, keep).concat(closers.map((e) => e.json));
    this.#sessions.set(id, {
      ...entry,
      events,
      lastTime: closers.at(-1)?.time ?? entry.lastTime,
      derived: entry.derived ?? serializedTitle(closers),
    });
    this.#changes.notify(id);
  }

  async delete(id: string): Promise<boolean> {
    const deleted = this.#sessions.delete(id);
    if (deleted) this.#changes.notify(id);
    return deleted;
  }

  async lock(_id: string): Promise<ReleaseLock> {
    // One process owns this memory: there is no other writer to keep out.
    return async () => {};
  }

  async close(): Promise<void> {
    // The sessions live as long as this object: a store closed and opened again over the same
    // backend sees them, as it would see files or a database.
  }

  #get(id: string): Entry {
    const entry = this.#sessions.get(id);
    if (entry === undefined) {
      throw sessionNotFound(id);
    }
    return entry;
  }
}
