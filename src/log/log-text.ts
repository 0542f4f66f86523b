// The one reader of a log's lines: the header first, then each event line parsed, its seq checked, admitted and run through the log invariants, each line's outcome handed to the caller.
import { hasCode, InvalidEventError, show } from "../errors.js";
import type { SessionEvent, SessionHeader } from "../generated.js";
import { admitEvent, LogState } from "./invariants.js";
import {
  type LogLine,
  missingHeaderLine,
  parseEventLine,
  parseHeaderLine,
  textLines,
  unknownEventType,
} from "./jsonl-codec.js";

/**
 * What is wrong with one line of a log (or, for `header` on a log without one and for
 * `seed-length`, with the log as a whole). A caller decides what a problem does: replay files
 * throw at the first, `seedline validate` collects them all, the store's reader applies its
 * torn-tail rule.
 */
export interface LineProblem {
  /** The 1-based line (the header's line for a missing header or a `seed-length`). */
  readonly line: number;
  /**
   * An invariant name as INVALID_EVENT reports it (`seq-contiguous`, `schema`, `surface-marker`,
   * `turn-order`…), or one of the file rules `json` (a line that is not a JSON object),
   * `header`, `format-version`, `unknown-type`, `seed-length`.
   */
  readonly rule: string;
  /** The problem as the check that found it words it. */
  readonly message: string;
  /**
   * For an event line, the seq the problem names: the one the error names (the line's own, for a
   * seq out of place) or the one its place calls for.
   */
  readonly seq?: number;
  /**
   * The error a reader that stops at the first problem throws: as it is (a StorageError of the
   * header or of an unknown event type, naming the line and location), or as the cause of its
   * CORRUPT_LOG (an InvalidEventError). Absent for `json` and `seed-length`, which such a reader
   * words itself.
   */
  readonly cause?: Error;
  /** The JSON Pointer an InvalidEventError names, when it names one. */
  readonly instancePath?: string;
  /** The line parsed as a JSON object, when it parses as one. */
  readonly parsed?: Record<string, unknown>;
}

/** How a {@link LogTextReader} reads event lines. */
export interface LogLineOptions {
  /**
   * Whether each event line is admitted (the schema, lossless JSON, frozen in place) and run
   * through the log invariants (true, the default). False checks only that the line parses, holds
   * the seq of its place and names a known type, and hands on the object fresh from `JSON.parse`:
   * the JSONL store reads its logs this way and admits events as it hands them out.
   */
  readonly admit?: boolean;
  /** How a line that is not a JSON object is shown in its `json` problem (`show` by default). */
  readonly showLine?: (text: string) => string;
}

/** Where an earlier read of the same log stopped: its header, and how many event lines it read. */
export interface LogTextResume {
  readonly header: SessionHeader;
  readonly length: number;
}

/**
 * Reads a log line by line under the rules every reader of the JSONL format shares, fed by any
 * line source (a text, a file read in chunks), and hands each line's outcome to its caller:
 * - the first line fed is the header (`parseHeaderLine`: FORMAT_UNSUPPORTED for another version,
 *   checked first, CORRUPT_LOG for a line that is no valid header);
 * - every later line is the event at the next seq: it must parse as a JSON object (`json`), and
 *   is admitted as the event at its place (a seq out of place first: `seq-contiguous`; then an
 *   unknown type: `unknown-type`; then the surface marker, lossless JSON and the schema), then
 *   run through the invariants that depend on the events before (turn and step order, tool
 *   pairing, provenance, replace) — up to the first problem of the log: past it the running
 *   state is unknown, and guessing it would report follow-on errors of one mistake;
 * - at the end ({@link finish}), a log without a header line, or with a header `seedLength`
 *   longer than its events, is a problem of the log.
 * Nothing is kept but the header and the running state, so memory stays flat.
 */
export class LogTextReader {
  readonly location: string;
  readonly #showLine: (text: string) => string;
  /** The running invariants while they are known; undefined when not admitting. */
  readonly #state: LogState | undefined;
  #stateKnown = true;
  #headerRead = false;
  #header: SessionHeader | undefined;
  #headerLine = 1;
  #length = 0;
  #problem: LineProblem | undefined;

  /**
   * @param location names the log in errors (a file path, or what a text came from).
   * @param resume where an earlier read of the same log stopped: the reader then expects the
   *   event line at seq `length` first. Only a reader that does not admit resumes (the running
   *   invariants of the lines before are not known).
   */
  constructor(location: string, options: LogLineOptions = {}, resume?: LogTextResume) {
    this.location = location;
    this.#showLine = options.showLine ?? show;
    this.#state = options.admit === false ? undefined : new LogState();
    if (resume === undefined) return;
    this.#headerRead = true;
    this.#header = resume.header;
    this.#length = resume.length;
  }

  /** Whether the next line fed is the header line (none was fed yet). */
  get expectsHeader(): boolean {
    return !this.#headerRead;
  }

  /** The header, once a valid header line was fed. */
  get header(): SessionHeader | undefined {
    return this.#header;
  }

  /** The number of event lines fed: the seq the next one must hold. */
  get length(): number {
    return this.#length;
  }

  /**
   * The problem of the last line whose read answered undefined. A problem is handed over here
   * rather than returned in place of the event: telling the two apart by `instanceof` cost the
   * store's read of every line a prototype lookup on objects of many shapes (about 5% of a scan).
   */
  get problem(): LineProblem | undefined {
    return this.#problem;
  }

  /** Feeds the header line: returns the header, or undefined for a line that is no header (see {@link problem}). */
  readHeader(line: LogLine): SessionHeader | undefined {
    this.#headerRead = true;
    this.#headerLine = line.number;
    try {
      this.#header = parseHeaderLine(line.text, this.location, line.number);
      return this.#header;
    } catch (error) {
      if (hasCode(error, "FORMAT_UNSUPPORTED")) return this.#fail(line, "format-version", error);
      if (hasCode(error, "CORRUPT_LOG")) return this.#fail(line, "header", error);
      throw error;
    }
  }

  /**
   * Feeds the next event line: returns the event — admitted and frozen, or fresh from
   * `JSON.parse` when the reader does not admit — or undefined for a line with a problem (see
   * {@link problem}).
   */
  readEvent(line: LogLine): SessionEvent | Record<string, unknown> | undefined {
    const seq = this.#length++;
    const raw = parseEventLine(line.text);
    if (raw === undefined) return this.#notAnObject(line, seq);
    // Kept small, so that the store's read of every line (not admitting) stays cheap.
    if (this.#state !== undefined) return this.#admit(raw, line, seq, this.#state);
    if (raw.seq !== seq) return this.#outOfPlace(raw, line, seq);
    const unknown = unknownEventType(raw, line.number, this.location);
    if (unknown === undefined) return raw;
    this.#problem = unknownType(raw, line, seq, unknown.message, unknown);
    return undefined;
  }

  #notAnObject(line: LogLine, seq: number): undefined {
    this.#stateKnown = false;
    const message = `expected event seq ${seq} as a JSON object, got ${this.#showLine(line.text)}`;
    this.#problem = { line: line.number, rule: "json", message, seq };
    return undefined;
  }

  #outOfPlace(raw: Record<string, unknown>, line: LogLine, seq: number): undefined {
    const message = `expected seq ${seq} (the index in the log), got ${show(raw.seq)}`;
    const rule = "seq-contiguous";
    this.#problem = { line: line.number, rule, message, seq, instancePath: "/seq", parsed: raw };
    return undefined;
  }

  #fail(line: LogLine, rule: string, error: Error): undefined {
    this.#problem = { line: line.number, rule, message: error.message, cause: error };
    return undefined;
  }

  /** Admits `raw` as the event at `seq` and, while the state is known, runs the invariants. */
  #admit(
    raw: Record<string, unknown>,
    line: LogLine,
    seq: number,
    state: LogState,
  ): SessionEvent | undefined {
    try {
      const event = admitEvent(raw, seq, seq, "parsed");
      if (this.#stateKnown) {
        state.check(event, seq);
        state.apply(event);
      }
      return event;
    } catch (error) {
      this.#stateKnown = false;
      if (error instanceof InvalidEventError) {
        const path = error.details.instancePath;
        this.#problem = {
          line: line.number,
          rule: error.rule,
          message: error.message,
          seq: error.seq,
          cause: error,
          ...(path === undefined ? {} : { instancePath: path }),
          parsed: raw,
        };
        return undefined;
      }
      if (hasCode(error, "FORMAT_UNSUPPORTED")) {
        // Admission finds an unknown type exactly where the codec does (a seq out of place is
        // found first by both); a reader that stops throws the codec's error, naming the line.
        const cause = unknownEventType(raw, line.number, this.location) ?? error;
        this.#problem = unknownType(raw, line, seq, error.message, cause);
        return undefined;
      }
      throw error;
    }
  }

  /**
   * Ends the log: the problem of a log without a header line, or of a header `seedLength`
   * longer than the event lines fed; undefined when there is neither.
   */
  finish(): LineProblem | undefined {
    if (!this.#headerRead) {
      const error = missingHeaderLine(this.location);
      return { line: 1, rule: "header", message: error.message, cause: error };
    }
    const seedLength = this.#header?.seedLength ?? 0;
    if (seedLength <= this.#length) return undefined;
    const message = `expected at least seedLength ${seedLength} events, got ${this.#length}`;
    return { line: this.#headerLine, rule: "seed-length", message };
  }
}

/** What a caller of {@link readLogText} does with each line's outcome. */
export interface LogTextVisitor {
  /** The header; returning "stop" ends the read there, without the checks of its end. */
  readonly header?: (header: SessionHeader, line: LogLine) => "stop" | undefined;
  /** An admitted, frozen event. */
  readonly event?: (event: SessionEvent, line: LogLine) => void;
  /** A problem of a line or of the log; throwing ends the read. */
  readonly problem: (problem: LineProblem) => void;
}

/** How {@link readLogText} reads a text. */
export interface LogTextOptions {
  /** Whether lines of only white space are passed over (as replay fixtures allow); they still count as lines. */
  readonly skipBlankLines?: boolean;
  /** How a line that is not a JSON object is shown in its `json` problem (`show` by default). */
  readonly showLine?: (text: string) => string;
}

/**
 * Reads a log held as text with a {@link LogTextReader} that admits every event, handing each
 * line's outcome to `visit` in line order and the problems of the log's end last. A final line
 * without `\n` is read as any other.
 * @returns the header (undefined when the header line was not one) and the number of event lines.
 */
export function readLogText(
  text: string,
  location: string,
  visit: LogTextVisitor,
  options: LogTextOptions = {},
): { readonly header: SessionHeader | undefined; readonly events: number } {
  const reader = new LogTextReader(
    location,
    options.showLine === undefined ? {} : { showLine: options.showLine },
  );
  for (const line of textLines(text)) {
    if (options.skipBlankLines === true && line.text.trim() === "") continue;
    if (reader.expectsHeader) {
      const header = reader.readHeader(line);
      if (header === undefined) visit.problem(reader.problem as LineProblem);
      else if (visit.header?.(header, line) === "stop") return { header, events: 0 };
      continue;
    }
    const event = reader.readEvent(line);
    if (event === undefined) visit.problem(reader.problem as LineProblem);
    else visit.event?.(event as SessionEvent, line);
  }
  const problem = reader.finish();
  if (problem !== undefined) visit.problem(problem);
  return { header: reader.header, events: reader.length };
}

function unknownType(
  raw: Record<string, unknown>,
  line: LogLine,
  seq: number,
  message: string,
  cause: Error,
): LineProblem {
  return { line: line.number, rule: "unknown-type", message, seq, cause, parsed: raw };
}
