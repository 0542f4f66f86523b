// Checks one log text line by line against the JSONL read rules, the schema and the log invariants, collecting every problem.
import { InvalidEventError } from "../errors.js";
import { type LineProblem, readLogText } from "../log/log-text.js";
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
  const { events } = readLogText(
    text.endsWith("\n") ? text : `${text}\n`,
    file,
    { problem: (problem) => problems.push(logProblem(problem, file)) },
    { showLine: describe },
  );
  return { file, events, problems };
}

/** A problem as validate reports it: a broken rule's message without what its line already says. */
function logProblem(problem: LineProblem, file: string): LogProblem {
  const { line, rule, seq, instancePath } = problem;
  const broken = problem.cause instanceof InvalidEventError;
  return {
    file,
    line,
    rule,
    message: broken ? ruleMessage(problem.message) : problem.message,
    ...(seq === undefined ? {} : { seq }),
    ...(instancePath === undefined ? {} : { instancePath }),
  };
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
