// Encodes a batch's event lines into a buffer kept from batch to batch, noting where its turn markers' lines end.
import type { TurnEndEvent, TurnStartEvent } from "../../generated.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { type IndexedMarker, type LineCheck, lineCheck } from "./file-state.js";

/** What a file's state learns from a batch of lines written at some byte of it. */
export interface WrittenLines {
  /** How many bytes the lines took. */
  readonly bytes: number;
  /** The turn markers among the events, in seq order, each with the byte just past its line. */
  readonly markers: IndexedMarker[];
  /** The check of the last line. */
  readonly last: LineCheck;
}

/** The largest buffer kept for the next batch; a larger batch is encoded into a buffer of its own. */
const KEEP_BYTES = 16 * 1024 * 1024;

/** The least buffer allocated, so that a run of small batches shares one. */
const MIN_BYTES = 64 * 1024;

/**
 * Encodes the lines of a batch (each event's text and a newline) into one buffer, which is kept for
 * the next batch once the write is done. Encoding into memory touched for the first time costs
 * more than the encoding (the pages are faulted in, and a fresh buffer per batch wakes the garbage
 * collector): with the buffer kept, a batch's lines cost a quarter of what `Buffer.from` of their
 * joined text costs. A batch encoded while another's write goes on gets a buffer of its own.
 */
export class LineEncoder {
  #spare: Buffer | undefined;

  /**
   * Encodes the lines of `events` (seqs from `firstSeq`, to go at byte `start` of a file) and
   * runs `write` with their bytes, which are valid only until it settles.
   * @throws what `write` throws.
   */
  async write(
    events: readonly SerializedEvent[],
    firstSeq: number,
    start: number,
    write: (data: Buffer) => Promise<void>,
  ): Promise<WrittenLines> {
    const buffer = this.#take(linesBound(events));
    try {
      const lines = encodeLines(events, firstSeq, start, buffer);
      await write(buffer.subarray(0, lines.bytes));
      return lines;
    } finally {
      this.#giveBack(buffer);
    }
  }

  #take(bytes: number): Buffer {
    const spare = this.#spare;
    if (spare !== undefined && spare.length >= bytes) {
      this.#spare = undefined;
      return spare;
    }
    return Buffer.allocUnsafeSlow(Math.max(bytes, MIN_BYTES));
  }

  #giveBack(buffer: Buffer): void {
    if (buffer.length > KEEP_BYTES) return;
    if (this.#spare === undefined || this.#spare.length < buffer.length) this.#spare = buffer;
  }
}

/**
 * The most bytes the lines of `events` can take in UTF-8: three per UTF-16 unit (a character
 * outside the basic plane, two units, takes four) and a newline each.
 */
export function linesBound(events: readonly SerializedEvent[]): number {
  let bytes = 0;
  for (let i = 0; i < events.length; i++)
    bytes += (events[i] as SerializedEvent).json.length * 3 + 1;
  return bytes;
}

/**
 * Encodes the lines of `events` into `buffer` from its first byte; `buffer` holds at least
 * {@link linesBound} bytes. Each turn marker's line end is the encoded length so far, plus
 * `start`; its turn is read off the event's view, not parsed back.
 */
export function encodeLines(
  events: readonly SerializedEvent[],
  firstSeq: number,
  start: number,
  buffer: Buffer,
): WrittenLines {
  const markers: IndexedMarker[] = [];
  let bytes = 0;
  let lastStart = 0;
  for (let i = 0; i < events.length; i++) {
    const serialized = events[i] as SerializedEvent;
    lastStart = bytes;
    bytes += buffer.write(serialized.json, bytes, "utf8");
    buffer[bytes++] = 0x0a;
    const type = serialized.type;
    if (type === "turn/start" || type === "turn/end") {
      const turn = (serialized.view as TurnStartEvent | TurnEndEvent).data.turn;
      markers.push({ seq: firstSeq + i, type, turn, end: start + bytes });
    }
  }
  return {
    bytes,
    markers,
    last: lineCheck(start + lastStart, buffer.subarray(lastStart, bytes)),
  };
}
