// Running the CLI in this process: `runCli` with string streams, for tests that need a command's exit status and output but not a process of its own.
import { makeOutput } from "../../src/cli/output.js";
import { runCli } from "../../src/cli/run.js";
import { type Run, type RunOptions, seedline } from "./cli-harness.js";

/**
 * Runs `seedline ARGS` in this process and resolves with its exit status and what it wrote. The
 * streams are no terminal and colour is off; no `SEEDLINE_STORE` is set unless `env` gives one.
 */
export async function runCliHere(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const environment = { NO_COLOR: "1", ...env };
  const out = makeOutput(
    { write: (text: string) => (stdout += text) },
    { write: (text: string) => (stderr += text) },
    environment,
  );
  const status = await runCli(args, out, environment);
  return { status, stdout, stderr };
}

/**
 * Runs `seedline ARGS` in this process ({@link runCliHere}) unless what a case puts under test
 * belongs to a process of its own — a working directory, stdin, forced colour — and then runs the
 * built CLI ({@link seedline}). A spawn costs a Node start and the CLI's imports, ~0.5 s a run.
 */
export async function cli(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  if (
    options.cwd !== undefined ||
    options.input !== undefined ||
    options.env?.FORCE_COLOR !== undefined
  ) {
    return seedline(args, options);
  }
  return runCliHere(args, options.env);
}
