// The CLI as a function: the command table, top-level help and version, dispatch and exit codes (0 ok, 1 failed, 2 usage).

import { packageInfo } from "../rpc/package-info.js";
import { DEFAULT_STORE_URL, STORE_URL_FORMS } from "../store/open/open-backend.js";
import {
  type CommandSpec,
  commandHelp,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  parseCommandArgs,
  UsageError,
  usageLine,
  wantsHelp,
} from "./command.js";
import { completionCommand } from "./commands/completion.js";
import { continueCommand } from "./commands/continue.js";
import { demoCommand } from "./commands/demo.js";
import { exportCommand } from "./commands/export.js";
import { forkCommand } from "./commands/fork.js";
import { generateCommand } from "./commands/generate.js";
import { importCommand } from "./commands/import.js";
import { lsCommand } from "./commands/ls.js";
import { proxyCommand } from "./commands/proxy.js";
import { replayCommand } from "./commands/replay.js";
import { rmCommand } from "./commands/rm.js";
import { searchCommand } from "./commands/search.js";
import { serveCommand } from "./commands/serve.js";
import { showCommand } from "./commands/show.js";
import { uiCommand } from "./commands/ui.js";
import { validateCommand } from "./commands/validate.js";
import { unknownName } from "./did-you-mean.js";
import type { Output } from "./output.js";
import { reportError } from "./report.js";
import { STORE_ENV } from "./store.js";

/** Every command, in the order `seedline --help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  serveCommand,
  validateCommand,
  replayCommand,
  importCommand,
  exportCommand,
  lsCommand,
  showCommand,
  uiCommand,
  proxyCommand,
  continueCommand,
  searchCommand,
  forkCommand,
  rmCommand,
  demoCommand,
  generateCommand,
  completionCommand,
];

const TOP_USAGE = "seedline <command> [options]   (seedline --help lists the commands)";

/** The text of `seedline --help`. */
export function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const list = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n");
  return `seedline ${packageInfo().version}: event-sourced agent session logs: store, fork, replay.

Usage: seedline <command> [options]
       seedline <command> --help
       seedline --version

Commands:
${list}

Stores are named by URL: ${STORE_URL_FORMS.join(", ")} (default ${DEFAULT_STORE_URL}).
--store URL overrides $${STORE_ENV}, which overrides the default.

Exit status: 0 ok, 1 the thing checked or asked for failed, 2 usage error.
Human output is coloured on a terminal; NO_COLOR=1 turns colour off, FORCE_COLOR=1 on.
`;
}

/**
 * Runs the CLI with `argv` (the arguments after the script) and resolves with the exit code.
 * Errors never escape: a usage error is 2 with a usage line on stderr, any other failure 1 with
 * `seedline <command>: <code>: <message>` on stderr.
 */
export async function runCli(
  argv: readonly string[],
  out: Output,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    out.err(`usage: ${TOP_USAGE}\n`);
    return EXIT_USAGE;
  }
  if (first === "--help" || first === "-h" || first === "help") {
    const named = first === "help" ? rest[0] : undefined;
    const command = named === undefined ? undefined : COMMANDS.find((c) => c.name === named);
    if (named !== undefined && command === undefined) return unknownCommand(named, out);
    out.out(command === undefined ? topHelp() : commandHelp(command));
    return EXIT_OK;
  }
  if (first === "--version" || first === "-V") {
    out.out(`${packageInfo().version}\n`);
    return EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (command === undefined) return unknownCommand(first, out);
  if (wantsHelp(rest)) {
    out.out(commandHelp(command));
    return EXIT_OK;
  }
  try {
    const args = parseCommandArgs(command, rest);
    return await command.run({ args, out, env, commands: COMMANDS });
  } catch (error) {
    if (error instanceof UsageError) {
      out.err(`${out.errPaint.red(`seedline ${command.name}:`)} ${error.message}\n`);
      out.err(`usage: ${usageLine(command)}\n`);
      return EXIT_USAGE;
    }
    reportError(command.name, error, out, env);
    return EXIT_FAILED;
  }
}

/** The top-level options, for did-you-mean. */
const TOP_OPTIONS = ["--help", "--version"];

function unknownCommand(name: string, out: Output): number {
  const message = name.startsWith("-")
    ? unknownName("option", name, TOP_OPTIONS)
    : unknownName(
        "command",
        name,
        COMMANDS.map((c) => c.name),
      );
  out.err(`${out.errPaint.red("seedline:")} ${message}\nusage: ${TOP_USAGE}\n`);
  return EXIT_USAGE;
}
