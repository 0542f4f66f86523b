// Reads log files in chunks: whole logs line by line, or only the first line and the last event line.
import { closeSync, openSync, readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { type LogLine, parseHeaderLine } from "../../log/jsonl-codec.js";
import { isErrno } from "../../util/errno.js";
import { LogReader, type LogScan, type ResumePoint } from "./log-reader.js";

/** How much of a file is read at a time. */
export const CHUNK_BYTES = 1 << 20;

const NEWLINE = 0x0a;

/** How much {@link readFirstLineSync} reads at a time once a first line outgrows its buffer. */
const LONG_FIRST_LINE_BYTES = 1 << 16;

/** Where a read of lines starts: a byte offset at the start of a line, and that line's number. */
export interface LineStart {
  readonly position: number;
  /** The 1-based number of the line at `position`. */
  readonly number: number;
}

const FILE_START: LineStart = { position: 0, number: 1 };

/**
 * One line of a file as bytes: `bytes[from, to)` without its `\n`. `bytes` is the read buffer,
 * reused by the next read (copy what must outlive the call), or a buffer of its own for a line
 * that spanned reads; `read` numbers the reads, so that a search over a whole buffer can be kept
 * across the lines it holds (-1 for a line with a buffer of its own).
 */
export interface LineBytes {
  readonly bytes: Buffer;
  readonly from: number;
  readonly to: number;
  readonly read: number;
  /** The 1-based line number. */
  readonly number: number;
  /** The byte offset of the line's start in the file. */
  readonly start: number;
  /** The byte offset just past its `\n` (the file's end for an unterminated last fragment). */
  readonly end: number;
  readonly terminated: boolean;
}

/**
 * Calls `onLine` for every line of a file from `start` on, in order, as bytes, reading
 * `chunkBytes` at a time; a final fragment without `\n` comes last, unterminated. Only the line
 * being assembled is held, so memory does not grow with the file. Returning "stop" ends the read.
 */
export async function readLineBytes(
  handle: FileHandle,
  onLine: (line: LineBytes) => "stop" | undefined,
  chunkBytes: number = CHUNK_BYTES,
  start: LineStart = FILE_START,
): Promise<void> {
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let pending: Buffer[] = [];
  let position = start.position;
  let lineStart = start.position;
  let number = start.number;
  for (let read = 0; ; read++) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, from);
      if (newline === -1 || newline >= bytesRead) break;
      const end = position + newline + 1;
      let line: LineBytes;
      if (pending.length === 0) {
        line = {
          bytes: chunk,
          from,
          to: newline,
          read,
          number,
          start: lineStart,
          end,
          terminated: true,
        };
      } else {
        pending.push(chunk.subarray(from, newline));
        const bytes = Buffer.concat(pending);
        pending = [];
        line = {
          bytes,
          from: 0,
          to: bytes.length,
          read: -1,
          number,
          start: lineStart,
          end,
          terminated: true,
        };
      }
      if (onLine(line) === "stop") return;
      number++;
      lineStart = end;
      from = newline + 1;
    }
    // The chunk buffer is reused by the next read, so a line's first part is copied.
    if (from < bytesRead) pending.push(Buffer.from(chunk.subarray(from, bytesRead)));
    position += bytesRead;
  }
  if (pending.length > 0) {
    const bytes = Buffer.concat(pending);
    onLine({
      bytes,
      from: 0,
      to: bytes.length,
      read: -1,
      number,
      start: lineStart,
      end: position,
      terminated: false,
    });
  }
}

/**
 * Calls `onLine` for every line of a file from `start` on, in order, as text (see
 * {@link readLineBytes}). Returning "stop" ends the read.
 */
export function readLines(
  handle: FileHandle,
  onLine: (line: LogLine) => "stop" | undefined,
  chunkBytes: number = CHUNK_BYTES,
  start: LineStart = FILE_START,
): Promise<void> {
  return readLineBytes(
    handle,
    (line) =>
      onLine({
        text: line.bytes.toString("utf8", line.from, line.to),
        number: line.number,
        start: line.start,
        end: line.end,
        terminated: line.terminated,
      }),
    chunkBytes,
    start,
  );
}

/**
 * Streams a log file through the read rules of {@link LogReader}, handing each intact event to
 * `visit` and keeping nothing itself; `visit` returning "stop" ends the read early (the scan
 * then describes the lines read). With `resume`, reading starts just past the intact lines an
 * earlier read of the same file found, and only the bytes after them are read.
 * @throws StorageError CORRUPT_LOG, FORMAT_UNSUPPORTED, as {@link LogReader} does.
 */
export async function scanLogFile(
  handle: FileHandle,
  location: string,
  visit?: (event: Record<string, unknown>, line: LogLine) => "stop" | undefined,
  chunkBytes: number = CHUNK_BYTES,
  resume?: ResumePoint,
): Promise<LogScan> {
  const reader = new LogReader(location, resume);
  await readLines(
    handle,
    (line) => {
      const event = reader.accept(line);
      return event === undefined || visit === undefined ? undefined : visit(event, line);
    },
    chunkBytes,
    // Line 1 is the header, so the line after `length` intact events is line `length + 2`.
    resume === undefined ? FILE_START : { position: resume.intactEnd, number: resume.length + 2 },
  );
  return reader.finish();
}

/**
 * The complete lines of a file from the end backwards, down to byte `floor`, reading a window
 * from the end that doubles as needed. `visit` returns "stop" to end the walk; a trailing fragment
 * without `\n` is skipped.
 */
export async function walkLinesBackwards(
  handle: FileHandle,
  size: number,
  floor: number,
  visit: (text: string) => "stop" | undefined,
): Promise<void> {
  let windowStart = size;
  let window = Buffer.alloc(0);
  let step = 4096;
  // Grows the window until it holds byte `offset`; false when that would go below `floor`.
  const reach = async (offset: number): Promise<boolean> => {
    while (windowStart > offset) {
      if (windowStart <= floor) return false;
      const from = Math.max(floor, windowStart - step);
      const more = Buffer.allocUnsafe(windowStart - from);
      const { bytesRead } = await handle.read(more, 0, more.length, from);
      if (bytesRead !== more.length) return false;
      window = Buffer.concat([more, window]);
      windowStart = from;
      step *= 2;
    }
    return true;
  };
  // `end` is the offset just past the `\n` of the line looked at; the line is [start, end - 1).
  let end = -1;
  for (;;) {
    const index = window.lastIndexOf(NEWLINE);
    if (index !== -1) {
      end = windowStart + index + 1;
      break;
    }
    if (!(await reach(windowStart - 1))) return;
  }
  while (end > floor) {
    let start: number;
    for (;;) {
      // A negative offset would make lastIndexOf count from the end of the buffer.
      const searchFrom = end - 2 - windowStart;
      const index = searchFrom < 0 ? -1 : window.lastIndexOf(NEWLINE, searchFrom);
      if (index !== -1) {
        start = windowStart + index + 1;
        break;
      }
      if (windowStart <= floor) {
        start = floor;
        break;
      }
      if (!(await reach(windowStart - 1))) return;
    }
    const text = window.toString("utf8", start - windowStart, end - 1 - windowStart);
    if (visit(text) === "stop") return;
    end = start;
  }
}

/**
 * The first complete line of an open file and where it ends, or undefined when it has none.
 * `buffer` is scratch space for the first read.
 */
export function readFirstLineSync(
  fd: number,
  buffer: Buffer,
): { readonly text: string; readonly end: number } | undefined {
  const parts: Buffer[] = [];
  let chunk = buffer;
  for (let position = 0; ; ) {
    const read = readSync(fd, chunk, 0, chunk.length, position);
    if (read === 0) return undefined;
    const newline = chunk.indexOf(0x0a);
    if (newline !== -1 && newline < read) {
      const line = chunk.subarray(0, newline);
      const text = (parts.length === 0 ? line : Buffer.concat([...parts, line])).toString("utf8");
      return { text, end: position + newline + 1 };
    }
    // A first line longer than what was read: keep it and read on, in larger chunks.
    parts.push(Buffer.from(chunk.subarray(0, read)));
    position += read;
    chunk = Buffer.allocUnsafe(LONG_FIRST_LINE_BYTES);
  }
}

/**
 * The header of the log at `path` and the byte offset after its line; undefined when there is no
 * such file (it may have been deleted a moment ago) or its first line is not a header this build
 * reads. `buffer` is scratch space for the first read.
 */
export function readHeaderSync(
  path: string,
  buffer: Buffer,
): { header: SessionHeader; end: number } | undefined {
  const fd = openIfPresentSync(path);
  if (fd === undefined) return undefined;
  try {
    const first = readFirstLineSync(fd, buffer);
    return first === undefined
      ? undefined
      : { header: parseHeaderLine(first.text, path), end: first.end };
  } catch (error) {
    if (error instanceof StorageError) return undefined;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens `path` for reading, or answers undefined when there is no such file (a log deleted a
 * moment ago by another process).
 */
export function openIfPresentSync(path: string): number | undefined {
  try {
    return openSync(path, "r");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}
