// Terminal output for the CLI: colour that honours NO_COLOR and non-TTY streams, and small text helpers.
import { cutToWidth, oneLine } from "../util/text-width.js";

/** A stream the CLI writes to: stdout or stderr, or a test's stand-in. */
export interface OutStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  /** A terminal's width in columns. */
  readonly columns?: number;
}

/** Styles for human output; every one is the identity when colour is off. */
export interface Palette {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

/**
 * Whether to colour what goes to `stream`: never when `NO_COLOR` is set to anything but the empty
 * string (https://no-color.org), always when `FORCE_COLOR` is set (and not "0"), otherwise only
 * on a terminal that is not `TERM=dumb`. NO_COLOR wins over FORCE_COLOR.
 */
export function colourEnabled(stream: OutStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") {
    return true;
  }
  return stream.isTTY === true && env.TERM !== "dumb";
}

/** A palette that styles with ANSI SGR codes when `enabled`, and changes nothing otherwise. */
export function palette(enabled: boolean): Palette {
  const sgr =
    (open: number, close: number) =>
    (text: string): string =>
      enabled && text !== "" ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

/** Where a command writes: both streams, each with the palette that suits it. */
export interface Output {
  /** Writes to stdout as given (add the `\n` yourself). */
  out(text: string): void;
  /** Writes to stderr as given. */
  err(text: string): void;
  /** Styles for stdout. */
  readonly paint: Palette;
  /** Styles for stderr. */
  readonly errPaint: Palette;
  /** Whether stderr is a terminal (progress lines may then overwrite themselves). */
  readonly errIsTTY: boolean;
  /** Whether stdout is a terminal (output may then go through a pager). */
  readonly outIsTTY: boolean;
  /**
   * The width of the terminal stdout is, in columns: `$COLUMNS` when set, else the terminal's,
   * else 80; undefined when stdout is not a terminal (lines are then never cut to a width).
   */
  readonly columns: number | undefined;
  /** stderr when it is a terminal, for a progress bar that redraws itself. */
  readonly errTerminal?: NodeJS.WritableStream;
}

/** The output of a process: its two streams, coloured as `colourEnabled` decides for each. */
export function makeOutput(stdout: OutStream, stderr: OutStream, env: NodeJS.ProcessEnv): Output {
  const outIsTTY = stdout.isTTY === true;
  const fromEnv = Number(env.COLUMNS);
  const columns = !outIsTTY
    ? undefined
    : Number.isSafeInteger(fromEnv) && fromEnv > 0
      ? fromEnv
      : stdout.columns !== undefined && stdout.columns > 0
        ? stdout.columns
        : 80;
  return {
    out: (text) => {
      stdout.write(text);
    },
    err: (text) => {
      stderr.write(text);
    },
    paint: palette(colourEnabled(stdout, env)),
    errPaint: palette(colourEnabled(stderr, env)),
    errIsTTY: stderr.isTTY === true,
    outIsTTY,
    columns,
    ...(stderr.isTTY === true && isWritable(stderr) ? { errTerminal: stderr } : {}),
  };
}

function isWritable(stream: OutStream): stream is OutStream & NodeJS.WritableStream {
  return typeof (stream as { on?: unknown }).on === "function";
}

/**
 * One line of `text` at most `max` display columns wide: whitespace runs collapsed to one space,
 * cut between graphemes, and an ellipsis when something was cut.
 */
export function excerpt(text: string, max = 96): string {
  return cutToWidth(oneLine(text), max);
}

/** An epoch-milliseconds time as an ISO 8601 UTC string. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export { plural } from "../util/plural.js";
