// A message reader that hands messages on only while its read gate is open, and pauses the input while it is shut.
import {
  type DataCallback,
  Disposable,
  Emitter,
  type Event,
  type Message,
  type MessageReader,
  type PartialMessageInfo,
} from "vscode-jsonrpc";
import type { InputFlow } from "./framing.js";

/** What a gated reader asks before handing a message on. */
export interface Gate {
  /** Whether the next message may be handed on now. */
  readonly open: boolean;
  /** Fires when the gate may have opened. */
  readonly onOpen: Event<void>;
}

/**
 * Wraps a framing reader: each message is handed on only while `gate` is open, and once the gate
 * shuts (checked after each message handed on) `flow` pauses the framing reader, so the server
 * stops reading its input and the client's writes back up in the pipe. When the gate opens again
 * the messages the framing reader still delivered after the pause (the rest of a chunk it had
 * taken; none for NDJSON, which stops between lines) are handed on first, in order, then reading
 * resumes. Nothing is dropped or refused. An input that ends while messages are held closes this
 * reader only after they are handed on, so a shutdown answers them too.
 */
export class GatedMessageReader implements MessageReader {
  readonly #inner: MessageReader;
  readonly #flow: InputFlow;
  readonly #gate: Gate;
  readonly #held: Message[] = [];
  readonly #closed = new Emitter<void>();
  readonly #subscriptions: Disposable[] = [];
  #callback: DataCallback | undefined;
  #paused = false;
  #releasing = false;
  #closePending = false;

  constructor(inner: MessageReader, flow: InputFlow, gate: Gate) {
    this.#inner = inner;
    this.#flow = flow;
    this.#gate = gate;
    this.#subscriptions.push(
      inner.onClose(() => {
        if (this.#held.length > 0) this.#closePending = true;
        else this.#closed.fire();
      }),
      gate.onOpen(() => this.#release()),
    );
  }

  get onError(): MessageReader["onError"] {
    return this.#inner.onError;
  }

  get onClose(): Event<void> {
    return this.#closed.event;
  }

  get onPartialMessage(): Event<PartialMessageInfo> {
    return this.#inner.onPartialMessage;
  }

  /** Whether reading is paused now (the gate was found shut). */
  get paused(): boolean {
    return this.#paused;
  }

  /** How many messages were read after the pause and wait for the gate to open. */
  get held(): number {
    return this.#held.length;
  }

  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    const listening = this.#inner.listen((message) => this.#arrive(message));
    return Disposable.create(() => {
      this.#callback = undefined;
      listening.dispose();
    });
  }

  #arrive(message: Message): void {
    if (this.#held.length > 0 || !this.#gate.open) {
      this.#held.push(message);
      this.#pause();
      return;
    }
    this.#pass(message);
  }

  #pass(message: Message): void {
    this.#callback?.(message);
    if (!this.#gate.open) this.#pause();
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#flow.pause();
  }

  /** Hands the held messages on while the gate stays open; resumes reading once none is left. */
  #release(): void {
    if (!this.#paused || this.#releasing) return;
    this.#releasing = true;
    try {
      for (let message = this.#held.shift(); message !== undefined; ) {
        this.#callback?.(message);
        if (!this.#gate.open) return;
        message = this.#held.shift();
      }
      if (this.#closePending) {
        this.#closePending = false;
        this.#closed.fire();
        return;
      }
      if (!this.#gate.open) return;
      this.#paused = false;
      // The framing reader may hand on messages (the rest of a paused chunk) from inside resume.
      this.#flow.resume();
    } finally {
      this.#releasing = false;
    }
  }

  dispose(): void {
    for (const subscription of this.#subscriptions) subscription.dispose();
    this.#closed.dispose();
    this.#inner.dispose();
  }
}
