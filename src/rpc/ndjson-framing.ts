// Newline-delimited JSON framing (ACP's): one JSON-RPC message per UTF-8 line, as a vscode-jsonrpc reader/writer pair.
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  Disposable,
  type Message,
  type MessageWriter,
} from "vscode-jsonrpc";
import { HEAD_SCAN_BYTES, headId } from "./head-id.js";

/** The largest message either framing accepts: a longer line is refused without being parsed. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** Why a framed message could not be read. */
export type FramingFailure = "parse" | "too-large";

/**
 * A framed message that is not a message: not UTF-8 JSON (`parse`) or over the size limit
 * (`too-large`). Readers report it through `onError` and keep reading. `id` is the request id
 * read from the head of a message too large to parse (see `headId`), null when none could be.
 */
export class FramingError extends Error {
  readonly failure: FramingFailure;
  readonly id: string | number | null;

  constructor(failure: FramingFailure, message: string, id: string | number | null = null) {
    super(message);
    this.name = "FramingError";
    this.failure = failure;
    this.id = id;
  }
}

const NEWLINE = 0x0a;

/**
 * Reads one JSON value per line from a byte stream and hands each to the listener as parsed
 * (checking that it is a JSON-RPC message is the consumer's job). Blank lines are skipped; a
 * last line without a newline is read at end of input. A line that is not UTF-8 JSON, or that
 * grows past `maxMessageBytes` (its bytes are dropped as they arrive, up to the next newline),
 * is reported as a {@link FramingError} on `onError`, and reading goes on. `pause` stops it
 * between two lines (the rest of the chunk is kept as bytes, the input stream paused) until
 * `resume`; an input that ends meanwhile closes the reader once the rest is read.
 */
export class NdjsonMessageReader extends AbstractMessageReader {
  readonly #input: NodeJS.ReadableStream;
  readonly #maxBytes: number;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  #parts: Buffer[] = [];
  #size = 0;
  /** The current line passed the limit: drop its bytes until the next newline. */
  #skipping = false;
  #callback: DataCallback | undefined;
  #paused = false;
  /** Bytes read but not split into lines yet: `pause` came in the middle of a chunk. */
  #rest: Buffer | undefined;
  /** The input ended while paused: close once `resume` has read the rest. */
  #endPending = false;

  constructor(input: NodeJS.ReadableStream, options: { maxMessageBytes?: number } = {}) {
    super();
    this.#input = input;
    this.#maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  /** Starts reading; the returned disposable stops it (the stream itself is left open). */
  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    const onData = (chunk: Buffer | string) => {
      this.#onChunk(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
    };
    let ended = false;
    // A stream destroyed without an orderly end emits only "close"; either way close fires once.
    const onEnd = () => {
      if (ended) return;
      ended = true;
      if (this.#paused) this.#endPending = true;
      else this.#end();
    };
    const onError = (error: unknown) => this.fireError(error);
    this.#input.on("data", onData);
    this.#input.on("end", onEnd);
    this.#input.on("close", onEnd);
    this.#input.on("error", onError);
    return Disposable.create(() => {
      this.#callback = undefined;
      this.#input.off("data", onData);
      this.#input.off("end", onEnd);
      this.#input.off("close", onEnd);
      this.#input.off("error", onError);
    });
  }

  /** Stops handing on lines after the current one, and pauses the input stream. */
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#input.pause();
  }

  /** Hands on the lines kept since `pause`, then reads the input on (or closes, if it ended). */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    const rest = this.#rest;
    this.#rest = undefined;
    if (rest !== undefined) this.#onChunk(rest);
    if (this.#paused) return;
    if (this.#endPending) {
      this.#endPending = false;
      this.#end();
    } else {
      this.#input.resume();
    }
  }

  #end(): void {
    this.#flushLast();
    this.fireClose();
  }

  #onChunk(chunk: Buffer): void {
    if (this.#paused) {
      this.#rest = this.#rest === undefined ? chunk : Buffer.concat([this.#rest, chunk]);
      return;
    }
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline < 0) return;
      this.#endLine();
      start = newline + 1;
      if (this.#paused) {
        if (start < chunk.length) this.#rest = chunk.subarray(start);
        return;
      }
    }
  }

  #take(bytes: Buffer): void {
    if (this.#skipping || bytes.length === 0) return;
    if (this.#size + bytes.length > this.#maxBytes) {
      // The line's head (its first bytes only) may still name the request to refuse.
      const head = [...this.#parts, bytes];
      const id = headId(Buffer.concat(head, Math.min(HEAD_SCAN_BYTES, this.#size + bytes.length)));
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
      this.fireError(
        new FramingError(
          "too-large",
          `expected a message of at most ${this.#maxBytes} bytes, got a longer line`,
          id,
        ),
      );
      return;
    }
    this.#parts.push(bytes);
    this.#size += bytes.length;
  }

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      return;
    }
    const line = this.#parts.length === 1 ? this.#parts[0] : Buffer.concat(this.#parts);
    this.#parts = [];
    this.#size = 0;
    if (line !== undefined) this.#deliver(line);
  }

  #flushLast(): void {
    if (this.#size > 0 || this.#skipping) this.#endLine();
  }

  #deliver(line: Buffer): void {
    let text: string;
    let value: unknown;
    try {
      text = this.#decoder.decode(line);
      if (text.trim() === "") return;
      value = JSON.parse(text);
    } catch (error) {
      this.fireError(
        new FramingError(
          "parse",
          `expected one JSON value per line, got a line that does not parse (${(error as Error).message})`,
        ),
      );
      return;
    }
    this.#callback?.(value as Message);
  }
}

/**
 * Writes each message as one line of JSON (JSON.stringify never emits a raw newline) and resolves
 * once the stream has taken it. Writes reach the stream in call order. A failed write is
 * reported on `onError` and rejects.
 */
export class NdjsonMessageWriter extends AbstractMessageWriter implements MessageWriter {
  readonly #output: NodeJS.WritableStream;
  #errorCount = 0;

  constructor(output: NodeJS.WritableStream) {
    super();
    this.#output = output;
  }

  write(message: Message): Promise<void> {
    return this.writeSerialized(message, JSON.stringify(message));
  }

  /** Writes `message` whose JSON text (`JSON.stringify(message)`) the caller already has. */
  writeSerialized(message: Message, json: string): Promise<void> {
    const line = `${json}\n`;
    return new Promise<void>((resolve, reject) => {
      this.#output.write(line, "utf8", (error?: Error | null) => {
        if (error) {
          this.#errorCount++;
          this.fireError(error, message, this.#errorCount);
          reject(error);
        } else {
          this.#errorCount = 0;
          resolve();
        }
      });
    });
  }

  /** Ends the stream once what was written is flushed. */
  end(): void {
    this.#output.end();
  }
}
