// Running the built `seedline` binary from tests: to completion, or in the background while the test watches its output.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
/** The built CLI; test/global-setup.ts builds dist/ once for every end-to-end test. */
export const MAIN = join(ROOT, "dist", "src", "cli", "main.js");

/** How long a background run may take to print what a test waits for. */
const WAIT_MS = 30_000;

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** What the run reads on stdin (nothing when absent). */
  readonly input?: string;
}

/** The environment of a run: this process's, without colour or store settings unless given. */
function cliEnv(options: RunOptions): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const name of ["NO_COLOR", "FORCE_COLOR", "SEEDLINE_STORE"]) {
    if (options.env?.[name] === undefined) delete env[name];
  }
  return env;
}

/** Runs the built CLI under a pseudo-terminal (`script`), so that stdout and stderr are a terminal. */
export function seedlineInTerminal(args: readonly string[], options: RunOptions = {}): Run {
  const command = [process.execPath, MAIN, ...args].map(shellQuote).join(" ");
  const result = spawnSync("script", ["-qec", command, "/dev/null"], {
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The terminal turns each "\n" into "\r\n"; both streams arrive on script's stdout.
  return {
    status: result.status,
    stdout: result.stdout.replaceAll("\r\n", "\n"),
    stderr: result.stderr,
  };
}

/** Whether `script` (util-linux) is there to run a command under a pseudo-terminal. */
export function hasScript(): boolean {
  return spawnSync("script", ["-qec", "true", "/dev/null"], { stdio: "ignore" }).status === 0;
}

function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Runs the built CLI to completion with a clean colour and store environment. */
export function seedline(args: readonly string[], options: RunOptions = {}): Run {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options),
    encoding: "utf8",
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A run of the CLI in the background (a process of its own), its output as it comes. */
export interface BackgroundRun {
  readonly child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once `done(stdout)` holds; rejects with the output so far if the process ends first or it takes too long. */
  waitFor(what: string, done: (stdout: string) => boolean): Promise<void>;
  /** The exit code (null when a signal killed it). */
  readonly exited: Promise<number | null>;
}

/** Starts the built CLI in the background; the test stops it (a signal) or waits for it to end. */
export function startSeedline(args: readonly string[], options: RunOptions = {}): BackgroundRun {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  let ended = false;
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      ended = true;
      resolve(code);
    });
  });
  const waitFor = async (what: string, done: (out: string) => boolean): Promise<void> => {
    const deadline = Date.now() + WAIT_MS;
    while (!done(stdout)) {
      if (ended || Date.now() > deadline) {
        const why = ended ? "the process ended first" : `nothing after ${WAIT_MS} ms`;
        throw new Error(
          `expected the output to show ${what}, got ${why}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited };
}
