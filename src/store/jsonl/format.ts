// The JSONL log format: header and event lines, and the read rules (torn tail, corruption, versions) every reader shares.
import { StorageError, show } from "../../errors.js";
import {
  EVENT_TYPES,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateSessionHeaderLine,
} from "../../generated.js";
import { checkFormatVersion } from "../format-version.js";

/**
 * The header line of a log: `{"type":"session","version":…,"id":…,"createdAt":…}` plus `cwd`,
 * `parentSession` and `seedLength` when present, in that order, ending in `\n`.
 */
export function formatHeaderLine(header: SessionHeader): string {
  const line = {
    type: "session",
    version: header.version,
    id: header.id,
    createdAt: header.createdAt,
    ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
    ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
    ...(header.seedLength === undefined ? {} : { seedLength: header.seedLength }),
  };
  return `${JSON.stringify(line)}\n`;
}

/** One event line: the event as `JSON.stringify` writes it (its canonical form), ending in `\n`. */
export function formatEventLine(event: SessionEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/** One line of a log, as a line source (a string or a file read in chunks) hands it over. */
export interface LogLine {
  /** The line's text without its `\n`. */
  readonly text: string;
  /** The 1-based line number; the header is line 1. */
  readonly number: number;
  /** The byte offset of the line's first byte. */
  readonly start: number;
  /** The byte offset just past the line's `\n` (past its last byte, for a fragment). */
  readonly end: number;
  /** False for a final fragment without `\n`: a torn tail, never parsed. */
  readonly terminated: boolean;
}

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

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * A line that does not parse but still looks like a `turn/end` (a damaged one). Counting it as a
 * `turn/end` errs towards reporting corruption rather than cutting a tail that may hold a
 * completed turn. Inside a JSON string every `"` is escaped, so a message that quotes this text
 * cannot match.
 */
const TURN_END_TEXT = /"type"\s*:\s*"turn(?:\/|\\\/)end"/;

/**
 * The read rules of a log, fed one line at a time by any line source, so that reading a string
 * and streaming a file apply one implementation:
 * - line 1 is the header: missing or invalid is CORRUPT_LOG; a `version` other than
 *   {@link SESSION_FORMAT_VERSION} is FORMAT_UNSUPPORTED, checked on the raw object before
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
  #header: SessionHeader | undefined;
  #headerEnd = 0;
  #length = 0;
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
    if (resume === undefined) return;
    this.#header = resume.header;
    this.#headerEnd = resume.headerEnd;
    this.#length = resume.length;
    this.#intactEnd = resume.intactEnd;
    this.#end = resume.intactEnd;
  }

  /** The number of intact events so far. */
  get length(): number {
    return this.#length;
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
    if (this.#header === undefined) {
      this.#header = parseHeaderLine(line.text, this.location);
      this.#headerEnd = line.end;
      this.#intactEnd = line.end;
      return undefined;
    }
    if (this.#bad !== undefined) {
      if (isTurnEnd(line.text, parseObject(line.text))) throw this.#corrupt(this.#bad);
      return undefined;
    }
    const seq = this.#length;
    const event = parseObject(line.text);
    if (event === undefined || event.seq !== seq) {
      this.#bad = { line: line.number, start: line.start, seq };
      if (isTurnEnd(line.text, event)) throw this.#corrupt(this.#bad);
      return undefined;
    }
    if (typeof event.type === "string" && !KNOWN_TYPES.has(event.type)) {
      throw new StorageError(
        "FORMAT_UNSUPPORTED",
        `expected an event type of session format version ${SESSION_FORMAT_VERSION}, got ${show(event.type)} on line ${line.number} of ${this.location}`,
        { found: event.type, supported: SESSION_FORMAT_VERSION, location: this.location },
      );
    }
    this.#length = seq + 1;
    this.#intactEnd = line.end;
    return event;
  }

  /**
   * Ends the log: what was read, and whether a torn tail follows the intact events. A reader
   * stopped early describes only the lines it was fed.
   * @throws StorageError CORRUPT_LOG when there was no header line.
   */
  finish(): LogScan {
    if (this.#header === undefined) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected a header line on line 1 of ${this.location}, found none`,
        { location: this.location, line: 1 },
      );
    }
    const bad = this.#bad;
    const tornAt = bad === undefined ? this.#fragment : { line: bad.line, byteOffset: bad.start };
    return {
      header: this.#header,
      length: this.#length,
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
 * Parses a header line (line 1) into a `SessionHeader` with its members in canonical order.
 * @throws StorageError FORMAT_UNSUPPORTED (another `version`, checked first, on the raw object);
 *   CORRUPT_LOG (not JSON, or not a valid header line).
 */
export function parseHeaderLine(text: string, location: string): SessionHeader {
  const raw = parseObject(text);
  // A header without `version` is damaged rather than foreign: it falls to CORRUPT_LOG below.
  if (raw !== undefined && "version" in raw) checkFormatVersion(raw, location);
  if (raw === undefined || !validateSessionHeaderLine(raw)) {
    const problem = validateSessionHeaderLine.errors?.[0];
    const why =
      raw === undefined ? "not a JSON object" : `${problem?.instancePath} ${problem?.message}`;
    throw new StorageError(
      "CORRUPT_LOG",
      `expected a session header on line 1 of ${location}, got ${show(text)} (${why})`,
      { location, line: 1 },
    );
  }
  return {
    version: raw.version,
    id: raw.id,
    createdAt: raw.createdAt,
    ...(raw.cwd === undefined ? {} : { cwd: raw.cwd }),
    ...(raw.parentSession === undefined ? {} : { parentSession: raw.parentSession }),
    ...(raw.seedLength === undefined ? {} : { seedLength: raw.seedLength }),
  };
}

/**
 * The lines of a text, with byte offsets (UTF-8), without building an array of them. A final
 * piece without `\n` comes as an unterminated fragment; an empty one is not a line.
 */
export function* textLines(text: string): Generator<LogLine> {
  let from = 0;
  let byte = 0;
  let number = 1;
  while (from < text.length) {
    const newline = text.indexOf("\n", from);
    const terminated = newline !== -1;
    const lineText = text.slice(from, terminated ? newline : text.length);
    const bytes = Buffer.byteLength(lineText, "utf8");
    const end = byte + bytes + (terminated ? 1 : 0);
    yield { text: lineText, number, start: byte, end, terminated };
    if (!terminated) return;
    from = newline + 1;
    byte = end;
    number++;
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

/** The line parsed as a plain JSON object, or undefined (not JSON, or an array, null, a scalar). */
function parseObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function isTurnEnd(text: string, parsed: Record<string, unknown> | undefined): boolean {
  return parsed === undefined ? TURN_END_TEXT.test(text) : parsed.type === "turn/end";
}
