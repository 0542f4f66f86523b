// A session as its store holds it (header and running state, never its events), and what it asks of that store: the store depends on the session, the session only on this interface.
import type { DerivedMessage, SessionEvent, SessionHeader } from "../../generated.js";
import type { SessionLog } from "../../log/session-log.js";
import type { ReleaseLock } from "../backend.js";
import type { EventPage, ReadOptions } from "../reads/event-pages.js";
import type { EventRange } from "./paged-reads.js";

/** What a {@link Session} asks of the store that holds it (a `SessionStore` is one). */
export interface SessionHost {
  read(id: string, options?: ReadOptions): Promise<EventPage>;
  pages(id: string, options?: ReadOptions): AsyncGenerator<EventPage, void, undefined>;
  readEvents(id: string, range?: EventRange): Promise<readonly SessionEvent[]>;
  messagesThrough(id: string, throughSeq: number): Promise<readonly DerivedMessage[]>;
  append(target: Session, events: readonly unknown[]): Promise<number>;
}

/**
 * A session as the store holds it: its header and running state (length, open turn, the derived
 * messages), not its events — those stay in the store and are read when asked for
 * ({@link read}, {@link pages}, {@link readEvents}). A `Session` stays the store's current instance
 * for its id until the session is deleted or unloaded; after that, store operations given this
 * object fail with `SESSION_NOT_LIVE`.
 */
export class Session {
  /** The store that holds the session, as far as the session uses it. */
  readonly store: SessionHost;
  readonly #log: SessionLog;

  /** @internal Sessions are made by a `SessionStore`. */
  constructor(store: SessionHost, log: SessionLog) {
    this.store = store;
    this.#log = log;
  }

  get id(): string {
    return this.#log.header.id;
  }

  get header(): SessionHeader {
    return this.#log.header;
  }

  /** The number of events: the seq the next append must start at. */
  get nextSeq(): number {
    return this.#log.length;
  }

  /** How many leading events were inherited (the header's `seedLength`, 0 when absent). */
  get seedLength(): number {
    return this.#log.header.seedLength ?? 0;
  }

  /**
   * The turn left open at the end of the log, if any: a turn in progress, or one whose writer died
   * (a reader sees it as stored; only the next writer closes it).
   */
  get openTurn(): number | undefined {
    return this.#log.openTurn;
  }

  /** One page of stored events; see `SessionStore.read`. */
  read(options: ReadOptions = {}): Promise<EventPage> {
    return this.store.read(this.id, options);
  }

  /** The stored events page by page; see `SessionStore.pages`. */
  pages(options: ReadOptions = {}): AsyncGenerator<EventPage, void, undefined> {
    return this.store.pages(this.id, options);
  }

  /** The stored events of a range, in one array; see `SessionStore.readEvents`. */
  readEvents(range: EventRange = {}): Promise<readonly SessionEvent[]> {
    return this.store.readEvents(this.id, range);
  }

  /** The session's own events (after the inherited prefix), read from the store. */
  ownEvents(): Promise<readonly SessionEvent[]> {
    return this.store.readEvents(this.id, { fromSeq: this.seedLength });
  }

  /**
   * The model-facing messages derived from the surface: of the whole log at once (kept up to date
   * with every append), or — given `throughSeq` — of the log as it stood then, read from the store.
   */
  deriveMessages(): readonly DerivedMessage[];
  deriveMessages(throughSeq: number): Promise<readonly DerivedMessage[]>;
  deriveMessages(
    throughSeq?: number,
  ): readonly DerivedMessage[] | Promise<readonly DerivedMessage[]> {
    if (throughSeq === undefined) return this.#log.deriveMessages();
    if (throughSeq >= this.#log.length - 1) return Promise.resolve(this.#log.deriveMessages());
    return this.store.messagesThrough(this.id, throughSeq);
  }

  /** Appends a batch through the store; see `SessionStore.append`. */
  append(events: readonly unknown[]): Promise<number> {
    return this.store.append(this, events);
  }

  /** @internal */
  get log(): SessionLog {
    return this.#log;
  }
}

/** A session `SessionStore.open` opened for writing, and whether the open repaired it. */
export interface OpenedSession {
  readonly session: Session;
  /**
   * Whether this open stored a repair: the closers of a turn left open by a writer that died (or
   * let go, when another process wrote the log since), or the cut of a torn tail.
   */
  readonly repaired: boolean;
}

/** What the store keeps of a live session besides the `Session`: its log and writer lock. */
export interface LiveState {
  readonly log: SessionLog;
  /**
   * The writer lock, while this process writes the session; absent for a session this process
   * only reads (a cached view, brought up to date from the store before every read).
   */
  release: ReleaseLock | undefined;
}
