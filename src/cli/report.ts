// How a command's failure is told on stderr: `seedline <cmd>: <code>: <message>` for coded errors.
import { SeedlineError } from "../errors.js";
import { CliError } from "./cli-error.js";
import type { Output } from "./output.js";

/**
 * The `data.code` or `code` of an error a user should see by name: a seedline error's code, the
 * string code of a JSON-RPC error response (`data.code`), or a file system code such as ENOENT
 * (which node already puts at the start of its message).
 */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof SeedlineError || error instanceof CliError) return error.code;
  const data = (error as { data?: { code?: unknown } } | null)?.data;
  if (typeof data?.code === "string") return data.code;
  return undefined;
}

/**
 * Writes one line for a failed command on stderr: `seedline <command>: <code>: <message>`, or
 * `seedline <command>: <message>` when the error has no code. With SEEDLINE_DEBUG set, the stack
 * follows.
 */
export function reportError(
  command: string,
  error: unknown,
  out: Output,
  env: NodeJS.ProcessEnv,
  prefix = "",
): void {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const where = `seedline ${command}:`;
  out.err(
    `${out.errPaint.red(where)} ${prefix}${code === undefined ? "" : `${out.errPaint.bold(code)}: `}${message}\n`,
  );
  if (env.SEEDLINE_DEBUG && error instanceof Error && error.stack) out.err(`${error.stack}\n`);
}
