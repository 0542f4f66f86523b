// Checks one log text line by line against the JSONL read rules, the schema and the log invariants, collecting every problem.
import { hasCode, InvalidEventError } from "../errors.js";
import { admitEvent, LogState } from "../log/invariants.js";
import {
  missingHeaderLine,
  parseEventLine,
  parseHeaderLine,
  textLines,
} from "../log/jsonl-codec.js";
import { cutToWidth } from "../util/text-width.js";

/** One problem of a log: where it is and which rule it breaks. */
export interface LogProblem {
  readonly file: string;
  /** The 1-based line; the header is line 1. */
  readonly line: number;
  /**
   * The rule: an invariant name as INVALID_EVENT reports it (`seq-contiguous`, `schema`,
   * `surface-marker`, `turn-order`…), or one of the file rules `json` (a line that is not a JSON
   * object), `header`, `format-version`, `unknown-type`, `seed-length`.
   */
  readonly rule: string;
  readonly message: string;
  readonly seq?: number;
  readonly instancePath?: string;
}

/** What checking one log found. */
export interface LogCheck {
  readonly file: string;
  /** The number of event lines (every line after the header). */
  readonly events: number;
  readonly problems: readonly LogProblem[];
}

/**
 * Checks a log held as text, as the store would read it: line 1 is the header, every later line
 * one event whose `seq` equals its position. Each line is checked on its own for JSON, `seq`,
 * the surface marker, lossless JSON and the schema; the invariants that depend on the events
 * before (turn and step order, tool pairing, provenance, replace) are checked up to the first
 * problem of the file — past it the running state is unknown, and guessing it would report
 * follow-on errors of one mistake. A missing final newline is accepted, as import accepts it.
 */
export function checkLogText(text: string, file: string): LogCheck {
  const problems: LogProblem[] = [];
  const report = (line: number, rule: string, message: string, extra: Partial<LogProblem> = {}) =>
    problems.push({ file, line, rule, message, ...extra });
  const state = new LogState();
  let stateKnown = true;
  let seedLength = 0;
  let events = 0;
  let sawHeader = false;

  for (const line of textLines(text.endsWith("\n") ? text : `${text}\n`)) {
    if (!sawHeader) {
      sawHeader = true;
      seedLength = checkHeader(line.text, file, (rule, message) => report(1, rule, message));
      continue;
    }
    const seq = events++;
    const raw = parseEventLine(line.text);
    if (raw === undefined) {
      report(
        line.number,
        "json",
        `expected event seq ${seq} as a JSON object, got ${describe(line.text)}`,
        {
          seq,
        },
      );
      stateKnown = false;
      continue;
    }
    try {
      const event = admitEvent(raw, seq, seq, "parsed");
      if (stateKnown) {
        state.check(event, seq);
        state.apply(event);
      }
    } catch (error) {
      stateKnown = false;
      if (error instanceof InvalidEventError) {
        report(line.number, error.rule, ruleMessage(error.message), {
          seq: error.seq,
          ...(error.details.instancePath === undefined
            ? {}
            : { instancePath: error.details.instancePath }),
        });
      } else if (hasCode(error, "FORMAT_UNSUPPORTED")) {
        report(line.number, "unknown-type", error.message, { seq });
      } else {
        throw error;
      }
    }
  }
  if (!sawHeader) report(1, "header", missingHeaderLine(file).message);
  else if (seedLength > events) {
    report(1, "seed-length", `expected at least seedLength ${seedLength} events, got ${events}`);
  }
  return { file, events, problems };
}

/** Checks the header line as every reader parses it; returns its `seedLength` (0 when absent or unreadable). */
function checkHeader(
  text: string,
  file: string,
  report: (rule: string, message: string) => void,
): number {
  try {
    return parseHeaderLine(text, file).seedLength ?? 0;
  } catch (error) {
    if (hasCode(error, "FORMAT_UNSUPPORTED")) report("format-version", error.message);
    else if (hasCode(error, "CORRUPT_LOG")) report("header", error.message);
    else throw error;
    return 0;
  }
}

/**
 * An InvalidEventError message without what the problem line already says: "<type> at seq N
 * (index N) breaks <rule>: …" becomes "<type> at seq N: …".
 */
function ruleMessage(message: string): string {
  return message.replace(/ \(index \d+\) breaks [a-z-]+: /, ": ");
}

function describe(text: string): string {
  if (text.trim() === "") return "an empty line";
  // Cut between characters, never inside an emoji (a cut by code units printed half of one).
  return JSON.stringify(cutToWidth(text, 58));
}
