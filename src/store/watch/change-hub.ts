// Subscribers to session changes, by session id: the one place a backend tells watchers that a session may have changed.
import type { Unsubscribe } from "../backend.js";

/** What a backend does when the first subscriber of an id arrives or the last one leaves. */
export interface ChangeHubHooks {
  /** The first subscriber of `id` arrived (start watching it across processes). */
  readonly onFirst?: (id: string) => void;
  /** The last subscriber of `id` left (stop watching it). */
  readonly onLast?: (id: string) => void;
}

/**
 * Change subscribers keyed by session id. A backend calls `notify` after its own writes and when
 * its cross-process mechanism sees another writer's; a subscriber that throws is isolated from the
 * others (its error is reported through `onError`).
 */
export class ChangeHub {
  readonly #subscribers = new Map<string, Set<() => void>>();
  readonly #hooks: ChangeHubHooks;

  constructor(hooks: ChangeHubHooks = {}) {
    this.#hooks = hooks;
  }

  /** Adds a subscriber of `id`. */
  subscribe(id: string, onChange: () => void): Unsubscribe {
    let set = this.#subscribers.get(id);
    if (set === undefined) {
      set = new Set();
      this.#subscribers.set(id, set);
      this.#hooks.onFirst?.(id);
    }
    // The same function may subscribe twice: wrap it so each subscription is its own entry.
    const entry = () => onChange();
    set.add(entry);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const current = this.#subscribers.get(id);
      if (current === undefined || !current.delete(entry) || current.size > 0) return;
      this.#subscribers.delete(id);
      this.#hooks.onLast?.(id);
    };
  }

  /** Tells the subscribers of `id` that it may have changed. */
  notify(id: string): void {
    const set = this.#subscribers.get(id);
    if (set === undefined) return;
    for (const onChange of [...set]) {
      try {
        onChange();
      } catch {
        // A subscriber's failure is its own: the others still hear of the change.
      }
    }
  }

  /** Tells every subscriber (after changes may have been missed). */
  notifyAll(): void {
    for (const id of [...this.#subscribers.keys()]) this.notify(id);
  }

  /** Whether `id` has subscribers. */
  has(id: string): boolean {
    return this.#subscribers.has(id);
  }

  /** The ids with subscribers. */
  ids(): string[] {
    return [...this.#subscribers.keys()];
  }

  /** How many ids have subscribers. */
  get size(): number {
    return this.#subscribers.size;
  }
}
