// Running the CLI in this process: `runCli` with string streams, for tests that need a command's exit status and output but not a process of its own.
import { makeOutput } from "../src/cli/output.js";
import { runCli } from "../src/cli/run.js";
import type { Run } from "./cli-harness.js";

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
