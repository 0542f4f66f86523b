// When a server connection may read on: its output is draining and fewer requests than the cap are in flight.
import { Emitter, type Event } from "vscode-jsonrpc";

/**
 * How many requests one connection may have in flight (read, and their answer not yet written)
 * unless told otherwise: enough to keep both cores and a store busy for a client that pipelines,
 * few enough that what waits is a few hundred requests and answers, not the client's whole backlog.
 */
export const DEFAULT_MAX_IN_FLIGHT = 128;

/** What a gate watches. */
export interface ReadGateOptions {
  /** Where answers go; while it needs draining (a write returned false) the gate is shut. */
  readonly output: NodeJS.WritableStream;
  /** The most requests in flight; with that many in flight the gate is shut. */
  readonly maxInFlight: number;
  /** How many requests are in flight now: read, and their answer not yet written out. */
  readonly inFlight: () => number;
}

/**
 * The backpressure rule of one connection: reading may go on while fewer than `maxInFlight`
 * requests are in flight and the output is draining (its `writableNeedDrain` is false; it turns
 * true when a `write` returned false, false again on `'drain'`). An output that closed or broke
 * does not hold reading back: writes to it fail at once, so nothing piles up, and reading on is
 * how the server comes to see the end of its input. The reader asks {@link ReadGate.open} before
 * each message; {@link ReadGate.onOpen} tells it when to try again.
 */
export class ReadGate {
  readonly #output: NodeJS.WritableStream;
  readonly #max: number;
  readonly #inFlight: () => number;
  readonly #opened = new Emitter<void>();
  readonly #recheck = () => this.update();

  constructor(options: ReadGateOptions) {
    this.#output = options.output;
    this.#max = Math.max(1, options.maxInFlight);
    this.#inFlight = options.inFlight;
    for (const event of OUTPUT_EVENTS) this.#output.on(event, this.#recheck);
  }

  /** Whether the next message may be read now. */
  get open(): boolean {
    return this.#inFlight() < this.#max && !needsDrain(this.#output);
  }

  /** Fires when the gate may have opened (an answer was written, the output drained or closed). */
  get onOpen(): Event<void> {
    return this.#opened.event;
  }

  /** Checks the gate again after something that may open it; fires `onOpen` if it is open. */
  update(): void {
    if (this.open) this.#opened.fire();
  }

  /** Stops watching the output. */
  dispose(): void {
    for (const event of OUTPUT_EVENTS) this.#output.off(event, this.#recheck);
    this.#opened.dispose();
  }
}

/** The output events after which the gate may be open again. */
const OUTPUT_EVENTS = ["drain", "close", "error"] as const;

/** Whether a write to `output` returned false and `'drain'` has not come since. */
function needsDrain(output: NodeJS.WritableStream): boolean {
  return (output as { writableNeedDrain?: boolean }).writableNeedDrain === true;
}
