// The README's CLI table against the CLI's help (run in this process): every command of `seedline --help` has a row, and each row names exactly the options of that command's --help.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli-harness.js";
import { runCliHere } from "../helpers/cli-in-process.js";

/** A command as `--help` tells it: its usage line, summary and options (long names, short letters). */
interface HelpedCommand {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly options: readonly string[];
}

/** The commands `seedline --help` lists, in its order, with their one-line summaries. */
async function listedCommands(): Promise<{ name: string; summary: string }[]> {
  const run = await runCliHere(["--help"]);
  expect(run.status).toBe(0);
  const section = /^Commands:\n((?: {2}\S.*\n)+)/m.exec(run.stdout)?.[1];
  if (section === undefined) throw new Error(`expected a Commands: section, got\n${run.stdout}`);
  return section
    .trimEnd()
    .split("\n")
    .map((line) => {
      const [, name = "", summary = ""] = /^ {2}(\S+) +(.*)$/.exec(line) ?? [];
      return { name, summary };
    });
}

/** The options a command's --help lists (`--name`, and `-x` for a short form), without --help. */
async function helped(name: string, summary: string): Promise<HelpedCommand> {
  const run = await runCliHere([name, "--help"]);
  expect(run.status, `${name} --help`).toBe(0);
  const usage = /^Usage: seedline (.*)$/m.exec(run.stdout)?.[1] ?? name;
  const options: string[] = [];
  const section = run.stdout.slice(run.stdout.indexOf("\nOptions:\n"));
  for (const match of section.matchAll(/^ {2}(?:-([a-zA-Z]), )? *--([a-z][\w-]*)/gm)) {
    const [, short, long] = match;
    if (long === "help") continue;
    options.push(`--${long}`);
    if (short !== undefined) options.push(`-${short}`);
  }
  return { name, summary, usage, options };
}

/** The README's CLI table: the first cell of each row (the synopsis) by command name. */
function readmeRows(): Map<string, string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## CLI\n");
  const end = readme.indexOf("\n## ", start + 1);
  const rows = new Map<string, string>();
  for (const [, cell = ""] of readme.slice(start, end).matchAll(/^\| `([^`]+)` \|/gm)) {
    rows.set(cell.split(" ")[0] ?? "", cell.replaceAll("\\|", "|"));
  }
  return rows;
}

/** The options a synopsis names: `--name` anywhere, `-x` standing alone (not `-` for stdin). */
function optionsOf(synopsis: string): string[] {
  const long = [...synopsis.matchAll(/--([a-z][\w-]*)/g)].map(([, name]) => `--${name}`);
  const short = [...synopsis.matchAll(/(?<![\w-])-([a-zA-Z])(?![\w-])/g)].map(
    ([, letter]) => `-${letter}`,
  );
  return [...long, ...short];
}

describe("the README's CLI table", () => {
  // Derived from the CLI, so that a command added later is checked without touching this test.
  const commands: HelpedCommand[] = [];
  beforeAll(async () => {
    for (const { name, summary } of await listedCommands()) {
      commands.push(await helped(name, summary));
    }
  });
  const rows = readmeRows();

  it("finds the commands and the table", () => {
    expect(commands.map((c) => c.name)).toEqual(
      expect.arrayContaining(["serve", "import", "show", "fork", "rm"]),
    );
    expect(rows.size).toBeGreaterThan(5);
  });

  // Before: the table missed `fork --child-id/--json`, `replay --json` and every option added to
  // `show` and `import`, and had no `rm` row; nothing noticed.
  it("has a row for every command, naming exactly the options of its --help", () => {
    const problems: string[] = [];
    for (const command of commands) {
      const row = rows.get(command.name);
      if (row === undefined) {
        problems.push(
          `${command.name}: no row; add one such as\n    | \`${command.usage.replaceAll("|", "\\|")}\` | ${command.summary} |`,
        );
        continue;
      }
      const named = new Set(optionsOf(row));
      const missing = command.options.filter((o) => !named.has(o));
      const extra = [...named].filter((o) => !command.options.includes(o));
      if (missing.length > 0 || extra.length > 0) {
        problems.push(
          [
            `${command.name}:`,
            missing.length > 0 ? ` in --help but not in the row: ${missing.join(", ")};` : "",
            extra.length > 0 ? ` in the row but not in --help: ${extra.join(", ")};` : "",
            ` --help's usage is \`${command.usage}\``,
          ].join(""),
        );
      }
    }
    for (const name of rows.keys()) {
      if (!commands.some((c) => c.name === name)) {
        problems.push(`${name}: a row for a command seedline --help does not list`);
      }
    }
    expect(problems, `README.md ## CLI table out of date:\n${problems.join("\n")}`).toEqual([]);
  });
});
