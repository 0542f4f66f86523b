// Runs tasks in call order per key, and tasks of different keys concurrently.

/** A queue per key: tasks sharing a key never overlap and start in the order they were queued. */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<void>>();
  readonly #pending = new Map<string, number>();

  /**
   * Runs `task` after every earlier task queued under `key` has settled (whatever its outcome:
   * a failed task does not stop the later ones), or at once when `key` is undefined. Resolves or
   * rejects as `task` does.
   */
  run<T>(key: string | undefined, task: () => Promise<T>): Promise<T> {
    if (key === undefined) return task();
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run = previous.then(task);
    const tail: Promise<void> = run.then(
      (): void => this.#settle(key, tail),
      (): void => this.#settle(key, tail),
    );
    this.#tails.set(key, tail);
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    return run;
  }

  /** Whether nothing is queued or running under `key`. */
  isIdle(key: string): boolean {
    return !this.#pending.has(key);
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.#pending.size;
  }

  #settle(key: string, tail: Promise<void>): void {
    const left = (this.#pending.get(key) ?? 1) - 1;
    if (left > 0) this.#pending.set(key, left);
    else this.#pending.delete(key);
    if (this.#tails.get(key) === tail) this.#tails.delete(key);
  }
}
