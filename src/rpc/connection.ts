// The server's connection layer: framing plus the inbound guard, vscode-jsonrpc's MessageConnection, and a drain for shutdown.
import { setImmediate as nextMacrotask } from "node:timers/promises";
import {
  createMessageConnection,
  Emitter,
  type Event,
  type Logger,
  type Message,
  type MessageWriter,
  type ResponseMessage,
} from "vscode-jsonrpc/node";
import type { Dispatch } from "./dispatch.js";
import { toResponseError } from "./error-mapping.js";
import { FrameLimitWriter } from "./frame-limit-writer.js";
import { createFraming, type Framing } from "./framing.js";
import { GatedMessageReader } from "./gated-reader.js";
import { CheckedMessageReader } from "./inbound.js";
import { DEFAULT_MAX_IN_FLIGHT, ReadGate } from "./read-gate.js";
import { ClientIdWriter, RequestIds } from "./request-ids.js";

/** A server's end of one stream pair. */
export interface ServerConnection {
  /** Fires once when the input ends or breaks (or the output closes). */
  readonly onClose: Event<void>;
  /** Starts reading and answering. */
  listen(): void;
  /** Stops reading: later input is ignored (a shutdown asked for by signal). */
  stopReading(): void;
  /**
   * Resolves once every request read so far has been answered and every answer handed to the
   * output stream.
   */
  drain(): Promise<void>;
  /** Sends a notification to the client; resolves once the output stream has taken it. */
  notify(method: string, params: object): Promise<void>;
  /** Releases the connection; the streams are left to the caller. */
  dispose(): void;
}

/** What a server connection runs on. */
export interface ServerConnectionOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly framing: Framing;
  readonly dispatch: Dispatch;
  readonly log: (line: string) => void;
  /**
   * The most requests in flight (read, and their answer not yet written out) before the
   * connection stops reading; {@link DEFAULT_MAX_IN_FLIGHT} unless given.
   */
  readonly maxInFlight?: number;
}

/**
 * Wires framing → inbound guard → `createMessageConnection` → one star request handler (the
 * dispatcher). Refused messages (not JSON, too large, a batch, not a request) are answered here
 * through the same writer, so answers never interleave inside a line. Notifications are not
 * methods to run: they are logged and ignored (vscode-jsonrpc's `$/cancelRequest` aside).
 * vscode-jsonrpc sees each request under an internal id ({@link RequestIds}) and its answer goes
 * out under the id the client sent, so every request read is answered once, whatever its id.
 *
 * Backpressure ({@link ReadGate}, {@link GatedMessageReader}): the connection stops reading its
 * input while `maxInFlight` requests are in flight or the output needs draining, and reads on
 * once answers are written and the output drained. Requests are never refused for it.
 */
export function openServerConnection(options: ServerConnectionOptions): ServerConnection {
  const { dispatch, log } = options;
  const transport = createFraming(options.framing, options.input, options.output);
  const ids = new RequestIds();
  // A request is in flight from when it is read (its id interned) until its answer is written out.
  const inFlight = () => ids.size + writer.pendingResponses;
  const gate = new ReadGate({
    output: options.output,
    maxInFlight: options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    inFlight,
  });
  // Every answer, refusal and notification passes the frame limit's check on its way out.
  const writer = new TrackedMessageWriter(new FrameLimitWriter(transport.writer, log), () =>
    gate.update(),
  );
  const gated = new GatedMessageReader(transport.reader, transport.flow, gate);
  const reader = new CheckedMessageReader(gated, log, ids);
  // Refused messages are answered through `writer` itself: their ids are the client's already.
  const connection = createMessageConnection(
    reader,
    new ClientIdWriter(writer, ids),
    loggerOf(log),
  );
  const answering = new Set<Promise<void>>();
  const closeEmitter = new Emitter<void>();
  let dispatched = 0;
  let stopped = false;

  /** Keeps `work` (which never rejects) until it settles, so `drain` can wait for it. */
  const track = (work: Promise<void>): void => {
    answering.add(work);
    void work.then(() => answering.delete(work));
  };

  connection.onRequest((method, params) => {
    dispatched++;
    const answer = dispatch(method, params);
    track(answer.then(ignore, ignore));
    return answer;
  });
  reader.onRejected(({ id, error }) => {
    if (stopped) return;
    const response: ResponseMessage = {
      jsonrpc: "2.0",
      id,
      error: toResponseError(error, log).toJson(),
    };
    track(
      writer.write(response).catch((cause: unknown) => {
        log(`could not answer a refused message: ${String(cause)}`);
      }),
    );
  });
  connection.onUnhandledNotification((message) => {
    log(`ignored notification ${JSON.stringify(message.method)} (notifications are not run)`);
  });
  connection.onError(([error]) => log(`transport error: ${error.message}`));
  connection.onClose(() => closeEmitter.fire());

  return {
    onClose: closeEmitter.event,
    listen: () => connection.listen(),
    stopReading() {
      stopped = true;
      reader.stop();
    },
    async drain() {
      // vscode-jsonrpc dispatches queued messages one per macrotask and the content-length reader
      // decodes on later macrotasks, so "nothing left" is only believed after a few quiet turns.
      let last = "";
      let quiet = 0;
      for (;;) {
        await nextMacrotask();
        if (answering.size > 0) {
          await Promise.all(answering);
          quiet = 0;
          continue;
        }
        if (writer.pending > 0) {
          await writer.idle();
          quiet = 0;
          continue;
        }
        // Messages read but held back by the gate (the stock reader can deliver after its close)
        // are handed on when it opens: as answers go out, or the output drains or closes.
        if (gated.held > 0) {
          await new Promise<void>((resolve) => {
            const opened = gate.onOpen(() => {
              opened.dispose();
              resolve();
            });
          });
          quiet = 0;
          continue;
        }
        const progress = `${dispatched}/${reader.requestCount}`;
        if (progress !== last) {
          last = progress;
          quiet = 0;
          continue;
        }
        quiet++;
        if (dispatched >= reader.requestCount && quiet >= QUIET_TURNS) return;
        // Every request reaches the dispatcher (ids are made unique on the way in); should one
        // ever not, a shutdown must not wait for it forever.
        if (quiet > STALL_LIMIT) {
          log(`${reader.requestCount - dispatched} request(s) were never dispatched`);
          return;
        }
      }
    },
    notify: (method, params) => connection.sendNotification(method, params),
    dispose() {
      connection.dispose();
      gate.dispose();
      closeEmitter.dispose();
    },
  };
}

/**
 * A `MessageWriter` that counts the writes still in progress, so a shutdown can wait until every
 * answer is handed to the stream, and backpressure can count the answers not yet written out.
 */
export class TrackedMessageWriter implements MessageWriter {
  readonly #inner: MessageWriter;
  readonly #pending = new Set<Promise<void>>();
  readonly #onSettled: (() => void) | undefined;
  #responses = 0;

  /** `onSettled` is called after each write completes or fails. */
  constructor(inner: MessageWriter, onSettled?: () => void) {
    this.#inner = inner;
    this.#onSettled = onSettled;
  }

  get onError(): MessageWriter["onError"] {
    return this.#inner.onError;
  }

  get onClose(): Event<void> {
    return this.#inner.onClose;
  }

  /** How many writes have not completed. */
  get pending(): number {
    return this.#pending.size;
  }

  /** How many of the writes not completed are responses (answers, not notifications). */
  get pendingResponses(): number {
    return this.#responses;
  }

  write(message: Message): Promise<void> {
    const response = (message as { method?: unknown }).method === undefined;
    if (response) this.#responses++;
    const written = this.#inner.write(message);
    const settled = written.then(ignore, ignore);
    this.#pending.add(settled);
    void settled.then(() => {
      this.#pending.delete(settled);
      if (response) this.#responses--;
      this.#onSettled?.();
    });
    return written;
  }

  /** Resolves once every write started so far has completed or failed. */
  async idle(): Promise<void> {
    await Promise.all(this.#pending);
  }

  end(): void {
    this.#inner.end();
  }

  dispose(): void {
    this.#inner.dispose();
  }
}

/** Quiet macrotasks after which `drain` believes every request read has been dispatched. */
const QUIET_TURNS = 5;

/** Macrotasks without progress after which `drain` stops waiting for undispatched requests. */
const STALL_LIMIT = 100;

function loggerOf(log: (line: string) => void): Logger {
  return {
    error: (message) => log(message),
    warn: (message) => log(message),
    info: () => {},
    log: () => {},
  };
}

function ignore(): void {}
