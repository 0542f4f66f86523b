// What a CLI command is: its options stated once (parsing and help are both made from them), and its run function.
import { parseArgs } from "node:util";
import { unknownName } from "./did-you-mean.js";
import type { Output } from "./output.js";

/** One option of a command. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** The value's placeholder in help, e.g. "URL" (string options only). */
  readonly arg?: string;
  readonly short?: string;
  /** The choices a string option accepts; anything else is a usage error. */
  readonly choices?: readonly string[];
  /** Whether the value names a file or folder (shell completion offers paths). */
  readonly files?: boolean;
  readonly description: string;
}

/** The positional arguments a command takes. */
export interface PositionalSpec {
  /** How help names them, e.g. "FILE|DIR…". */
  readonly name: string;
  readonly min: number;
  /** Undefined for "any number". */
  readonly max?: number;
  /** The values they may take (anything else is a usage error); shell completion offers them. */
  readonly choices?: readonly string[];
  /** Whether they name files or folders (shell completion offers paths). */
  readonly files?: boolean;
}

/** A command's arguments after parsing. */
export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** What a command runs with. */
export interface CommandContext {
  readonly args: ParsedArgs;
  readonly out: Output;
  readonly env: NodeJS.ProcessEnv;
  /** Every command of the binary (for commands about the CLI itself, such as `completion`). */
  readonly commands: readonly CommandSpec[];
}

/** A command of the `seedline` binary. */
export interface CommandSpec {
  readonly name: string;
  /** One line for the command list of `seedline --help`. */
  readonly summary: string;
  /** The synopsis after `seedline <name>`, e.g. "ID [--at SEQ] [--store URL]". */
  readonly synopsis: string;
  /** Paragraphs of help between the usage line and the options. */
  readonly description: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  readonly positionals: PositionalSpec;
  /** Runs the command; resolves with the exit code. Throwing is reported by the caller. */
  run(context: CommandContext): Promise<number>;
}

/** A command line that does not fit its command: exit code 2, a short usage line on stderr. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Exit codes: success, the thing checked failed, a usage error. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export const HELP_OPTION: OptionSpec = {
  type: "boolean",
  short: "h",
  description: "show this help",
};

/** Whether the arguments ask for help (before any `--`), so help wins over other mistakes. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
  }
  return false;
}

/**
 * Parses a command's arguments against its options and positional count.
 * @throws UsageError for an unknown option, a missing value, a value outside `choices`, or too
 *   few or too many positionals.
 */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, option] of Object.entries(spec.options)) {
    options[name] = option.short === undefined ? { type: option.type } : option;
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error, optionNames(spec)));
  }
  const values: Record<string, string | boolean | undefined> = {};
  for (const [name, option] of Object.entries(spec.options)) {
    const value = parsed.values[name] as string | boolean | undefined;
    if (typeof value === "string" && option.choices && !option.choices.includes(value)) {
      throw new UsageError(
        `expected --${name} to be one of ${option.choices.join(", ")}, got ${JSON.stringify(value)}`,
      );
    }
    if (typeof value === "string" && value === "") {
      throw new UsageError(`expected a value for --${name}, got an empty string`);
    }
    values[name] = value;
  }
  const { min, max, name } = spec.positionals;
  const count = parsed.positionals.length;
  if (count < min) throw new UsageError(`expected ${name}, got nothing`);
  if (max !== undefined && count > max) {
    const extra = parsed.positionals.slice(max).map((p) => JSON.stringify(p));
    throw new UsageError(`unexpected argument ${extra.join(" ")}`);
  }
  const choices = spec.positionals.choices;
  const wrong = parsed.positionals.find((p) => choices !== undefined && !choices.includes(p));
  if (choices !== undefined && wrong !== undefined) {
    throw new UsageError(
      `expected ${name} to be one of ${choices.join(", ")}, got ${JSON.stringify(wrong)}`,
    );
  }
  return { values, positionals: parsed.positionals };
}

/** `seedline <name> <synopsis>`. */
export function usageLine(spec: CommandSpec): string {
  return `seedline ${spec.name}${spec.synopsis === "" ? "" : ` ${spec.synopsis}`}`;
}

/** The full `--help` text of a command, made from its spec. */
export function commandHelp(spec: CommandSpec): string {
  const rows = Object.entries({ ...spec.options, help: HELP_OPTION }).map(([name, option]) => {
    const flag = `${option.short === undefined ? "    " : `-${option.short}, `}--${name}${
      option.type === "string" ? ` ${option.arg ?? "VALUE"}` : ""
    }`;
    const choices = option.choices ? ` (${option.choices.join(" | ")})` : "";
    return [flag, `${option.description}${choices}`] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const options = rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`).join("\n");
  return `Usage: ${usageLine(spec)}\n\n${spec.description.trim()}\n\nOptions:\n${options}\n`;
}

/** Every option of a command as typed: `--name`, and `-x` for a short one; `--help` and `-h` too. */
export function optionNames(spec: CommandSpec): string[] {
  return Object.entries({ ...spec.options, help: HELP_OPTION }).flatMap(([name, option]) => [
    `--${name}`,
    ...(option.short === undefined ? [] : [`-${option.short}`]),
  ]);
}

function parseArgsMessage(error: unknown, options: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  // node's messages are long and mention `strict: false`; keep the part a user can act on.
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'([^']+)'/.exec(message)?.[1];
    if (option === undefined) return `unknown option ${message}`;
    return unknownName("option", option, option.startsWith("--") ? options : []);
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && message.includes("argument missing")) {
    const option = /Option '(\S+)/.exec(message)?.[1];
    return option ? `option ${option} needs a value` : message;
  }
  return message.split(". ")[0] ?? message;
}
