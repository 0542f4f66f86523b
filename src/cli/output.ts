// Terminal output for the CLI: colour that honours NO_COLOR and non-TTY streams, and small text helpers.

/** A stream the CLI writes to: stdout or stderr, or a test's stand-in. */
export interface OutStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  /** The width of the terminal, when it is one. */
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
  /** The width of stdout when it is a terminal. */
  readonly columns?: number;
}

/** The output of a process: its two streams, coloured as `colourEnabled` decides for each. */
export function makeOutput(stdout: OutStream, stderr: OutStream, env: NodeJS.ProcessEnv): Output {
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
    ...(stdout.isTTY === true && typeof stdout.columns === "number" && stdout.columns > 0
      ? { columns: stdout.columns }
      : {}),
  };
}

/**
 * One line of `text` at most `max` characters long: whitespace runs collapsed to one space, and
 * an ellipsis when something was cut.
 */
export function excerpt(text: string, max = 96): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** An epoch-milliseconds time as an ISO 8601 UTC string. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** `count` with the noun in singular or plural: "1 event", "3 events". */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
