// The calls a proxy is relaying right now, and the recordings that wait for a pause in them: recording a step costs more than relaying it.
/**
 * How long a recording waits for the live calls to pause at the most: under traffic that never
 * pauses, recordings then run alongside it.
 */
const MAX_WAIT_MS = 1000;
/** Recordings waiting at the most: past this many, the oldest runs at once (what waits is held in memory). */
const MAX_WAITING = 32;

/**
 * Counts the calls whose answers are being relayed and lets the work of recording wait for a
 * moment when none is: parsing, mapping, checking and storing a step takes the proxy's one thread
 * for longer than relaying its bytes did (a 2,000-event stream: tens of milliseconds), and a call
 * that starts meanwhile would wait for it. A recording waits at most {@link MAX_WAIT_MS}, and at
 * most {@link MAX_WAITING} wait; {@link flush} lets every one go at once.
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

  /** Resolves when no call is being relayed (at once when none is), or when the wait is over. */
  quiet(): Promise<void> {
    if (this.#live === 0 || this.#flushing > 0) return Promise.resolve();
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
      if (this.#waiting.length > MAX_WAITING) this.#release(1);
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
