// Finds an event's line in a JSONL log by bisecting the file on the seqs its lines start with.
import { readSync } from "node:fs";
import type { OpenFile } from "./file-state.js";

/** Where an event's line lies in a log file, and its text. */
export interface SoughtLine {
  /** The byte offset of the line's first byte. */
  readonly start: number;
  /** The byte offset just past its `\n`. */
  readonly end: number;
  readonly text: string;
}

/** The start of an event line in canonical form: its type, then its seq. */
const CANONICAL_START = /^\{"type":"[^"\\]{1,64}","seq":(0|[1-9]\d{0,15}),"/;

/** How many bytes of a line {@link CANONICAL_START} needs at most. */
const START_BYTES = 96;

/**
 * The line of event `seq` among the lines between `from` (the first event line's start) and
 * `to`, found in a few small reads: the seqs of a log's lines rise by one from line to line, so
 * the seq a line starts with tells on which side of it the wanted line lies. Only lines in
 * canonical form (`{"type":…,"seq":N,` — what this package writes) are read this way; undefined
 * when a probed line is not, when the seqs do not rise as they should, or when no whole line
 * holds that seq. The caller then reads the log line by line, which tells what is wrong.
 */
export function seekEventLine(
  handle: OpenFile,
  from: number,
  to: number,
  seq: number,
  probeBytes = 4096,
): SoughtLine | undefined {
  const reader = new Probe(handle, to, probeBytes);
  // `low` is the start of a line whose seq is at most `seq`; no line at or past `high` holds it.
  let low = from;
  let lowSeq = reader.seqAt(low);
  let high = to;
  if (lowSeq === undefined || lowSeq > seq) return undefined;
  while (lowSeq < seq) {
    if (high - low <= probeBytes) {
      // Close enough: walk the lines.
      const next = reader.lineStartAfter(low);
      if (next === undefined || next >= high) return undefined;
      const nextSeq = reader.seqAt(next);
      if (nextSeq !== lowSeq + 1) return undefined;
      low = next;
      lowSeq = nextSeq;
      continue;
    }
    const mid = low + Math.floor((high - low) / 2);
    // The first line starting at or after `mid` (a line may start at `mid` itself).
    const start = reader.lineStartAfter(mid - 1);
    if (start === undefined || start >= high) {
      high = mid;
      continue;
    }
    const found = reader.seqAt(start);
    // Seqs rise by one per line: a line at least one line past `low` has a larger seq.
    if (found === undefined || found <= lowSeq) return undefined;
    if (found <= seq) {
      low = start;
      lowSeq = found;
    } else {
      high = start;
    }
  }
  return reader.wholeLine(low);
}

/**
 * Small positioned reads of one file, never past `to`. They are synchronous: a probe reads a few
 * kilobytes of a file that is almost always in the page cache, which takes microseconds, where a
 * round trip through the thread pool takes a few hundred (a bisection of a 100 MB log makes about
 * fifty of them: 11 ms of a 30 ms fork went there).
 */
class Probe {
  readonly #handle: OpenFile;
  readonly #to: number;
  readonly #buffer: Buffer;

  constructor(handle: OpenFile, to: number, bytes: number) {
    this.#handle = handle;
    this.#to = to;
    this.#buffer = Buffer.allocUnsafe(Math.max(bytes, START_BYTES));
  }

  /** The seq a line starting at `start` begins with, when it is in canonical form. */
  seqAt(start: number): number | undefined {
    const bytes = this.#read(start, START_BYTES);
    const match = CANONICAL_START.exec(bytes.toString("latin1"));
    return match === null ? undefined : Number(match[1]);
  }

  /** The start of the first line that begins after byte `at` (just past the next `\n` from `at`). */
  lineStartAfter(at: number): number | undefined {
    for (let position = at; position < this.#to; ) {
      const bytes = this.#read(position, this.#buffer.length);
      if (bytes.length === 0) return undefined;
      const newline = bytes.indexOf(10);
      if (newline !== -1) return position + newline + 1;
      position += bytes.length;
    }
    return undefined;
  }

  /** The line starting at `start`, when it ends with `\n` before `to`. */
  wholeLine(start: number): SoughtLine | undefined {
    const end = this.lineStartAfter(start);
    if (end === undefined) return undefined;
    const bytes = Buffer.allocUnsafe(end - start);
    if (readAll(this.#handle, bytes, start) !== bytes.length) return undefined;
    return { start, end, text: bytes.toString("utf8", 0, bytes.length - 1) };
  }

  #read(position: number, length: number): Buffer {
    const wanted = Math.min(length, this.#buffer.length, this.#to - position);
    if (wanted <= 0) return this.#buffer.subarray(0, 0);
    return this.#buffer.subarray(
      0,
      readAll(this.#handle, this.#buffer.subarray(0, wanted), position),
    );
  }
}

/** Reads into all of `into` from `position` on, or up to the end of the file; the count read. */
function readAll(handle: OpenFile, into: Buffer, position: number): number {
  let done = 0;
  while (done < into.length) {
    const read = readSync(handle.fd, into, done, into.length - done, position + done);
    if (read === 0) break;
    done += read;
  }
  return done;
}
