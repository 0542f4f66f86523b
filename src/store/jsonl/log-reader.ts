// The read rules of a JSONL log (torn tail, corruption, versions) every reader of its lines shares.
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import {
  type LogLine,
  missingHeaderLine,
  parseEventLine,
  textLines,
} from "../../log/jsonl-codec.js";
import { type LineProblem, LogTextReader } from "../../log/log-text.js";

/** Where the intact prefix of a log ends and its torn tail begins. */
export interface TornAt {
  /** The 1-based number of the first line that was not kept. */
  readonly line: number;
  /** The byte offset of that line: the size to cut the file back to. */
  readonly byteOffset: number;
}

/** What reading a log found, apart from the events themselves. */
export interface LogScan {
  readonly header: SessionHeader;
  /** The number of intact events. */
  readonly length: number;
  /** The byte offset just past the header line. */
  readonly headerEnd: number;
  /** The byte offset just past the last intact line. */
  readonly intactEnd: number;
  /** The byte offset just past the last line read (the file size when read to the end). */
  readonly end: number;
  /** Whether a torn tail follows the intact events. */
  readonly tornTail: boolean;
  readonly tornAt?: TornAt;
}

/**
 * Where an earlier read of the same file stopped among its intact lines, so that a later read
 * resumes there instead of reading the log again (the parts of a {@link LogScan} it needs).
 */
export interface ResumePoint {
  readonly header: SessionHeader;
  readonly headerEnd: number;
  /** The number of intact events before the resume point. */
  readonly length: number;
  /** The byte offset just past the last intact line: where reading resumes. */
  readonly intactEnd: number;
}

/** A log read from text: its header, intact events (fresh from `JSON.parse`) and torn tail. */
export interface ParsedLog {
  readonly header: SessionHeader;
  readonly events: unknown[];
  readonly tornTail: boolean;
  readonly tornAt?: TornAt;
}

/**
 * A line that does not parse but still looks like a `turn/end` (a damaged one). Counting it as a
 * `turn/end` errs towards reporting corruption rather than cutting a tail that may hold a
 * completed turn. Inside a JSON string every `"` is escaped, so a message that quotes this text
 * cannot match.
 */
const TURN_END_TEXT = /"type"\s*:\s*"turn(?:\/|\\\/)end"/;

/**
 * The read rules of a log, fed one line at a time by any line source, so that reading a string
 * and streaming a file apply one implementation. Each terminated line goes through the one line
 * reader of the format ({@link LogTextReader}, not admitting: the store admits events as it hands
 * them out), and this reader applies the store's rule to its outcome:
 * - line 1 is the header: missing or invalid is CORRUPT_LOG; a `version` other than
 *   `SESSION_FORMAT_VERSION` is FORMAT_UNSUPPORTED, checked on the raw object before
 *   anything else (so no event line of such a log is ever parsed);
 * - the intact events are the longest prefix of lines that parse as JSON objects with
 *   `seq` equal to their index; an intact event of a type outside the vocabulary is
 *   FORMAT_UNSUPPORTED;
 * - the first bad line is corruption (CORRUPT_LOG, naming the line and the seq it should hold)
 *   when it, or any later line, is a `turn/end`; otherwise it starts a torn tail. After a bad
 *   line every later line is still looked at — parsed, or matched against {@link TURN_END_TEXT}
 *   when it does not parse — but nothing is kept, so memory stays flat;
 * - a final fragment without `\n` is a torn tail and is never parsed.
 */
export class LogReader {
  readonly location: string;
  readonly #lines: LogTextReader;
  #headerEnd = 0;
  #intactEnd = 0;
  #end = 0;
  #bad: { readonly line: number; readonly start: number; readonly seq: number } | undefined;
  #fragment: TornAt | undefined;

  /**
   * @param location names the log in errors (a file path, or what an import came from).
   * @param resume where an earlier read of the same log stopped: the reader then expects the
   *   line after the last intact one (line `length + 2`, seq `length`) as its first line.
   */
  constructor(location: string, resume?: ResumePoint) {
    this.location = location;
    this.#lines = new LogTextReader(location, { admit: false }, resume);
    if (resume === undefined) return;
    this.#headerEnd = resume.headerEnd;
    this.#intactEnd = resume.intactEnd;
    this.#end = resume.intactEnd;
  }

  /** The number of intact events so far. */
  get length(): number {
    return this.#bad === undefined ? this.#lines.length : this.#bad.seq;
  }

  /**
   * Feeds the next line. Returns the parsed event when the line is kept as an intact event.
   * @throws StorageError CORRUPT_LOG, FORMAT_UNSUPPORTED.
   */
  accept(line: LogLine): Record<string, unknown> | undefined {
    this.#end = line.end;
    if (!line.terminated) {
      this.#fragment ??= { line: line.number, byteOffset: line.start };
      return undefined;
    }
    if (this.#bad !== undefined) {
      if (isTurnEnd(line.text, parseEventLine(line.text))) throw this.#corrupt(this.#bad);
      return undefined;
    }
    const lines = this.#lines;
    if (lines.expectsHeader) {
      if (lines.readHeader(line) === undefined) throw (lines.problem as LineProblem).cause;
      this.#headerEnd = line.end;
      this.#intactEnd = line.end;
      return undefined;
    }
    const event = lines.readEvent(line);
    if (event === undefined) {
      const problem = lines.problem as LineProblem;
      if (problem.rule === "unknown-type") throw problem.cause;
      this.#bad = { line: line.number, start: line.start, seq: problem.seq as number };
      if (isTurnEnd(line.text, problem.parsed)) throw this.#corrupt(this.#bad);
      return undefined;
    }
    this.#intactEnd = line.end;
    return event as Record<string, unknown>;
  }

  /**
   * Ends the log: what was read, and whether a torn tail follows the intact events. A reader
   * stopped early describes only the lines it was fed.
   * @throws StorageError CORRUPT_LOG when there was no header line.
   */
  finish(): LogScan {
    const header = this.#lines.header;
    if (header === undefined) throw missingHeaderLine(this.location);
    const bad = this.#bad;
    const tornAt = bad === undefined ? this.#fragment : { line: bad.line, byteOffset: bad.start };
    return {
      header,
      length: this.length,
      headerEnd: this.#headerEnd,
      intactEnd: this.#intactEnd,
      end: this.#end,
      tornTail: tornAt !== undefined,
      ...(tornAt === undefined ? {} : { tornAt }),
    };
  }

  #corrupt(bad: { line: number; seq: number }): StorageError<"CORRUPT_LOG"> {
    return new StorageError(
      "CORRUPT_LOG",
      `expected event seq ${bad.seq} as a JSON object on line ${bad.line} of ${this.location}, got a damaged line before the last turn/end`,
      { location: this.location, line: bad.line, seq: bad.seq },
    );
  }
}

/**
 * Reads a log held as text (an import, an export, a replay fixture) under the rules of
 * {@link LogReader}: the header, the intact events and where a torn tail starts.
 * @throws StorageError CORRUPT_LOG (location and line), FORMAT_UNSUPPORTED (found, supported,
 *   location).
 */
export function parseLogText(text: string, location: string): ParsedLog {
  const reader = new LogReader(location);
  const events: unknown[] = [];
  for (const line of textLines(text)) {
    const event = reader.accept(line);
    if (event !== undefined) events.push(event);
  }
  const scan = reader.finish();
  return {
    header: scan.header,
    events,
    tornTail: scan.tornTail,
    ...(scan.tornAt === undefined ? {} : { tornAt: scan.tornAt }),
  };
}

function isTurnEnd(text: string, parsed: Record<string, unknown> | undefined): boolean {
  return parsed === undefined ? TURN_END_TEXT.test(text) : parsed.type === "turn/end";
}
