// Runs tasks in call order per key, and tasks of different keys concurrently.

/** A queue per key: each task starts after every earlier task of its key has settled. */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` after the earlier tasks of `key`; a failed task does not stop the later ones. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
