// Runs the TypeScript compiler as a subprocess (TypeScript 7 has no compiler API) and reads its diagnostics.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** One error tsc printed. */
export interface TscDiagnostic {
  /** The file as tsc printed it (relative to the folder tsc ran in); undefined for a global error. */
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
  /** `TS2322`. */
  readonly code: string;
  /** The message, with the lines tsc chains below it joined by newlines. */
  readonly message: string;
}

/** What a tsc run printed and how it ended. */
export interface TscRun {
  readonly exitCode: number;
  readonly diagnostics: readonly TscDiagnostic[];
  /** Everything tsc printed, for errors this reader does not recognise. */
  readonly output: string;
}

const LOCATED = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/;
const GLOBAL = /^error (TS\d+): (.*)$/;

/** Reads `--pretty false` output: one diagnostic per line, chained details indented below it. */
export function parseTscOutput(output: string): TscDiagnostic[] {
  const diagnostics: TscDiagnostic[] = [];
  let last: { -readonly [K in keyof TscDiagnostic]: TscDiagnostic[K] } | undefined;
  for (const line of output.split(/\r?\n/)) {
    const located = LOCATED.exec(line);
    const global = located === null ? GLOBAL.exec(line) : null;
    if (located !== null) {
      last = {
        file: located[1],
        line: Number(located[2]),
        column: Number(located[3]),
        code: located[4] as string,
        message: located[5] as string,
      };
      diagnostics.push(last);
    } else if (global !== null) {
      last = {
        file: undefined,
        line: 0,
        column: 0,
        code: global[1] as string,
        message: global[2] as string,
      };
      diagnostics.push(last);
    } else if (last !== undefined && /^\s+\S/.test(line)) {
      last.message += `\n${line.trim()}`;
    }
  }
  return diagnostics;
}

/** The tsc launcher of the installed `typescript` package. */
export function tscPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
}

/**
 * Runs `tsc -p tsconfig.json --pretty false` in `dir` and collects its diagnostics.
 * @throws Error when tsc cannot be started or dies without an exit code.
 */
export function runTsc(dir: string): Promise<TscRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tscPath(), "-p", "tsconfig.json", "--pretty", "false"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === null) {
        reject(new Error(`expected tsc to exit, got signal ${signal}: ${output}`));
        return;
      }
      resolve({ exitCode: code, diagnostics: parseTscOutput(output), output });
    });
  });
}
