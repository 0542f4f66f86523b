// A backend that keeps sessions in this process's memory, as JSON text (so nothing is shared with callers).

import type { SessionEvent, SessionHeader } from "../../generated.js";
import { lastTurnMarkerAt, nextTurnEndAfter } from "../../log/fork-rules.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import type {
  ReleaseLock,
  SessionBackend,
  StoredForkPoint,
  StoredLog,
  StoredSuffix,
  Unsubscribe,
} from "../backend.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../errors/storage-errors.js";
import { checkPageBytes, checkPageLimit, PageBytes } from "../reads/page-limit.js";
import { ChangeHub } from "../watch/change-hub.js";

interface Entry {
  readonly header: string;
  readonly events: string[];
  /** The explicit title a user set. */
  readonly title?: string | undefined;
}

/**
 * Sessions in memory: for tests, and for the SDK used without persistence. Gone with the process.
 * It keeps no catalog: the store lists, titles and matches id prefixes by a `ScanCatalog` over its
 * primitives — the backend that shows the primitives are enough.
 */
export class MemoryBackend implements SessionBackend {
  readonly kind = "memory";
  #sessions = new Map<string, Entry>();
  readonly #changes = new ChangeHub();

  /** Every stored id, in insertion order. */
  async ids(): Promise<string[]> {
    return [...this.#sessions.keys()];
  }

  async readTitle(id: string): Promise<string | undefined> {
    return this.#sessions.get(id)?.title;
  }

  /** @throws StorageError SESSION_NOT_FOUND. */
  async writeTitle(id: string, title: string | null): Promise<void> {
    const entry = this.#get(id);
    this.#sessions.set(id, { ...entry, title: title ?? undefined });
  }

  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    if (this.#sessions.has(header.id)) throw sessionTaken(header.id);
    this.#sessions.set(header.id, {
      header: JSON.stringify(header),
      events: events.map((e) => e.json),
    });
    this.#changes.notify(header.id);
  }

  async append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void> {
    const entry = this.#get(id);
    if (entry.events.length !== fromSeq) {
      throw seqConflict(id, entry.events.length, fromSeq);
    }
    const lines = events.map((e) => e.json);
    this.#sessions.set(id, { ...entry, events: entry.events.concat(lines) });
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

  /**
   * Parses only the events the marker search reaches (from the boundary back to the last marker,
   * and on to the closing `turn/end` of a turn open there): a listing asks this of every session.
   */
  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    const entry = this.#sessions.get(id);
    if (entry === undefined) return undefined;
    const lines = entry.events;
    const events = {
      length: lines.length,
      at: (seq: number) => JSON.parse(lines[seq] as string) as SessionEvent,
    };
    const at = boundary ?? lines.length - 1;
    const marker = lastTurnMarkerAt(events, at);
    const closedAt = marker?.type === "turn/start" ? nextTurnEndAfter(events, at) : undefined;
    return {
      header: JSON.parse(entry.header),
      length: lines.length,
      marker,
      ...(closedAt === undefined ? {} : { closedAt }),
    };
  }

  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    const source = this.#get(sourceId);
    if (this.#sessions.has(header.id)) throw sessionTaken(header.id);
    this.#sessions.set(header.id, {
      header: JSON.stringify(header),
      events: source.events.slice(0, boundary + 1),
    });
    this.#changes.notify(header.id);
  }

  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    const entry = this.#get(id);
    const events = entry.events.slice(0, keep).concat(closers.map((e) => e.json));
    this.#sessions.set(id, { ...entry, events });
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
