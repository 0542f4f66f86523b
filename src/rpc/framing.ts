// Picks the framing of a stream pair: seedline's NDJSON default, or vscode-jsonrpc's stock Content-Length headers.
import type { Message, MessageReader, MessageWriter } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { HEAD_SCAN_BYTES, headId } from "./head-id.js";
import {
  FramingError,
  MAX_MESSAGE_BYTES,
  NdjsonMessageReader,
  NdjsonMessageWriter,
} from "./ndjson-framing.js";

/** How messages are delimited on the wire. */
export type Framing = "ndjson" | "content-length";

/** Every framing, for help texts and argument checks. */
export const FRAMINGS: readonly Framing[] = ["ndjson", "content-length"];

/** Stops and restarts reading the input, for backpressure. */
export interface InputFlow {
  /** Stops reading: no message after the one being handed on, the input stream paused. */
  pause(): void;
  /** Reads on from where `pause` stopped. */
  resume(): void;
}

/** A reader and a writer over one stream pair. */
export interface FramedTransport {
  readonly reader: MessageReader;
  readonly writer: MessageWriter;
  /**
   * Pauses and resumes `reader`. The NDJSON reader stops between two lines; the stock
   * Content-Length reader only at the input stream, so the messages of a chunk it already took
   * still come (the caller holds them: at most one chunk of the input, 64 KiB for stdin).
   */
  readonly flow: InputFlow;
}

/**
 * The reader and writer of `framing` over `input` (read) and `output` (written). Both framings
 * refuse a message over {@link MAX_MESSAGE_BYTES} and report a body that is not JSON as a
 * {@link FramingError} on the reader's `onError`, so a server can answer it.
 */
export function createFraming(
  framing: Framing,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): FramedTransport {
  if (framing === "ndjson") {
    const reader = new NdjsonMessageReader(input);
    return { reader, writer: new NdjsonMessageWriter(output), flow: reader };
  }
  return {
    reader: new StreamMessageReader(input, { contentTypeDecoder: GUARDED_JSON }),
    writer: new StreamMessageWriter(output),
    flow: { pause: () => input.pause(), resume: () => input.resume() },
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The stock reader's JSON body decoder, with the size limit and a typed parse failure. The stock
 * reader buffers a body before decoding it, so a body over the limit is refused unparsed.
 */
const GUARDED_JSON = {
  name: "application/json",
  async decode(buffer: Uint8Array): Promise<Message> {
    if (buffer.byteLength > MAX_MESSAGE_BYTES) {
      throw new FramingError(
        "too-large",
        `expected a message of at most ${MAX_MESSAGE_BYTES} bytes, got ${buffer.byteLength}`,
        headId(buffer.subarray(0, HEAD_SCAN_BYTES)),
      );
    }
    try {
      return JSON.parse(utf8.decode(buffer)) as Message;
    } catch (error) {
      throw new FramingError(
        "parse",
        `expected a JSON body, got one that does not parse (${(error as Error).message})`,
      );
    }
  },
};
