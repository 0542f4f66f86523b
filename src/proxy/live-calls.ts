// The calls a proxy is relaying right now, and the recordings that wait for a pause in them: recording a step costs more than relaying it.
/**
 * How long a recording waits for the live calls to pause at the most: under traffic that never
 * pauses, recordings then run alongside it.
 */
const MAX_WAIT_MS = 1000;
/**
 * Recordings not yet stored at the most before they stop waiting for a pause: each holds its
 * response's bytes in memory until it is stored.
 */
const MAX_BACKLOG = 8;

/**
 * Counts the calls whose answers are being relayed and lets the work of recording wait for a
 * moment when none is: parsing, mapping, checking and storing a step takes the proxy's one thread
 * for longer than relaying its bytes did (a 2,000-event stream: tens of milliseconds), and a call
 * that starts meanwhile would wait for it. A recording waits at most {@link MAX_WAIT_MS}, and not
 * at all while more than {@link MAX_BACKLOG} are not yet stored; {@link flush} lets every one go
 * at once.
 */
export class LiveCalls {
  #live = 0;
  #flushing = 0;
  readonly #waiting: { readonly go: () => void; readonly timer: NodeJS.Timeout }[] = [];

  /** A call's answer starts to be relayed; the function returned says it ended (once). */
  begin(): () => void {
    this.#live++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#live--;
      if (this.#live === 0) this.#release(this.#waiting.length);
    };
  }

  /**
   * Resolves when no call is being relayed (at once when none is, or when `backlog`, the
   * recordings not yet stored, is over {@link MAX_BACKLOG}), or when the wait is over.
   */
  quiet(backlog: number): Promise<void> {
    if (this.#live === 0 || this.#flushing > 0 || backlog > MAX_BACKLOG) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = {
        go: resolve,
        timer: setTimeout(() => {
          const at = this.#waiting.indexOf(entry);
          if (at >= 0) this.#waiting.splice(at, 1);
          resolve();
        }, MAX_WAIT_MS),
      };
      entry.timer.unref();
      this.#waiting.push(entry);
    });
  }

  /** Runs `work` with no recording waiting for a pause (settling or closing: every one goes now). */
  async flush<T>(work: () => Promise<T>): Promise<T> {
    this.#flushing++;
    this.#release(this.#waiting.length);
    try {
      return await work();
    } finally {
      this.#flushing--;
    }
  }

  /** Lets the `count` oldest waiting recordings go. */
  #release(count: number): void {
    for (const entry of this.#waiting.splice(0, count)) {
      clearTimeout(entry.timer);
      entry.go();
    }
  }
}
