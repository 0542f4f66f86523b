// Real storage faults for process tests: a small tmpfs to fill or remount read-only, and servers spawned from dist (as root or as nobody).
import { execFileSync } from "node:child_process";
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  rmSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SeedlineClient } from "../../src/index.js";
import { ROOT } from "./rpc-fixtures.js";
import { within } from "./waits.js";

/** The built CLI the process tests spawn: `node dist/src/cli/main.js serve --store …`. */
export const CLI_MAIN = join(ROOT, "dist", "src", "cli", "main.js");

/** The uid and gid of `nobody`, the unprivileged user servers run as in permission tests. */
export const NOBODY = 65534;

/** A mounted tmpfs. */
export interface Tmpfs {
  readonly dir: string;
  /** Remounts it read-only (`ro`) or read-write again. */
  readonly remount: (mode: "ro" | "rw") => void;
  /** Unmounts it and removes its folder. */
  readonly unmount: () => void;
}

/**
 * Mounts a tmpfs of `size` (e.g. "256k") on a new folder. Call it in `beforeAll` (with the
 * unmount in `afterAll`): a mount made while the file is collected would stay behind when a
 * filter skips its block.
 * @throws the mount's error.
 */
export function mountTmpfs(prefix: string, size: string): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0777`, "tmpfs", dir], {
      stdio: "pipe",
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`mount -t tmpfs failed: ${stderr || String(error)}`);
  }
  return {
    dir,
    remount: (mode) => {
      execFileSync("mount", ["-o", `remount,${mode}`, dir], { stdio: "pipe" });
    },
    unmount: () => {
      execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Why no tmpfs can be mounted here (one mounted and unmounted at once), or undefined. */
export function tmpfsCannotMount(): string | undefined {
  try {
    mountTmpfs("seedline-probe-", "64k").unmount();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Fills the file system of `dir` with a file `filler`: writes until ENOSPC. Returns its path;
 * removing it frees the space.
 */
export function fill(dir: string): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  try {
    for (const size of [65536, 4096, 1]) {
      const block = Buffer.alloc(size, 0x78);
      try {
        for (;;) writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/**
 * Why the unprivileged user cannot run the built server, or undefined when it can (node, the
 * worktree and its node_modules are readable by others, and setpriv exists).
 */
export function nobodyCannotRun(): string | undefined {
  try {
    execFileSync(
      "setpriv",
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        process.execPath,
        "-e",
        `require(${JSON.stringify(CLI_MAIN)}.replace(/main\\.js$/, "output.js"))`,
      ],
      { stdio: "pipe", timeout: 20_000 },
    );
    accessSync(CLI_MAIN, constants.R_OK);
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return `setpriv --reuid=${NOBODY} cannot run node on the build: ${stderr || String(error)}`;
  }
}

/** A server spawned from dist on `store`, its stderr kept. */
export interface SpawnedServer {
  readonly client: SeedlineClient;
  readonly stderr: () => string;
  /** Closes the connection and waits for the process to exit. */
  readonly stop: () => Promise<void>;
}

/** Spawns `node dist/src/cli/main.js serve --store <store>`, as nobody when `asNobody`. */
export function startServer(store: string, asNobody = false): SpawnedServer {
  const node = [process.execPath, CLI_MAIN, "serve", "--store", store];
  const [command, ...args] = asNobody
    ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...node]
    : node;
  const client = SeedlineClient.spawn({
    command: command as string,
    args,
    stderr: "pipe",
    cwd: tmpdir(),
  });
  let text = "";
  client.process?.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  return {
    client,
    stderr: () => text,
    stop: async () => {
      await within(client.close(), "the server to close");
      await within<unknown>(client.exited ?? Promise.resolve(), "the server to exit");
    },
  };
}
