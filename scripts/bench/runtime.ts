// Which build the benchmarks measure: dist/ (tsc, what ships) when it is up to date, else the sources through tsx.
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";

/** Whether this module runs from dist/scripts/bench (compiled by tsc) rather than from the sources. */
export const RUNNING_FROM_DIST = basename(join(import.meta.dirname, "..", "..")) === "dist";

/** The repository root, whichever build runs. */
export const REPO_ROOT = join(
  import.meta.dirname,
  ...(RUNNING_FROM_DIST ? ["..", "..", ".."] : ["..", ".."]),
);

function typescriptFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .map((name) => join(dir, name));
}

/** The compiled counterpart of a source file under the repository root. */
export function builtPath(source: string): string {
  return join(REPO_ROOT, "dist", relative(REPO_ROOT, source)).replace(/\.ts$/, ".js");
}

/**
 * The source files (src/, generated/, scripts/bench/) whose dist/ build is missing or older than
 * they are; empty when dist/ is an up-to-date build of everything the benchmarks run.
 */
export function staleBuild(): string[] {
  // The viewer's browser app is bundled by esbuild into dist/viewer, not compiled by tsc.
  const app = join(REPO_ROOT, "src", "viewer", "app");
  const sources = ["src", "generated", join("scripts", "bench")]
    .flatMap((dir) => typescriptFiles(join(REPO_ROOT, dir)))
    .filter((file) => !file.startsWith(app));
  return sources
    .filter((file) => {
      const built = builtPath(file);
      return !existsSync(built) || statSync(built).mtimeMs < statSync(file).mtimeMs;
    })
    .map((file) => relative(REPO_ROOT, file));
}

/**
 * How the figures were produced. tsx compiles with esbuild's `keepNames`, which wraps every
 * closure a function creates per call in a naming helper: per-event closures then cost more than
 * they do in the shipped build, so figures under tsx overstate the subjects.
 */
export function runtimeDescription(): string {
  return RUNNING_FROM_DIST ? "node on dist/ (tsc build)" : "tsx on the sources";
}

/**
 * The node arguments that run a TypeScript entry in the build this process runs: its dist/ file
 * on plain node, or the source through tsx.
 */
export function entryArgs(source: string): string[] {
  return RUNNING_FROM_DIST ? [builtPath(source)] : ["--import", "tsx", source];
}
