// No hand-written source file grows past 600 lines: a module past it holds more than one concern.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");
const MAX_LINES = 600;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** The files of `paths` longer than `max` lines, with their lengths. */
function oversized(paths: readonly string[], max: number): string[] {
  return paths.flatMap((path) => {
    const lines = readFileSync(path, "utf8").split("\n").length - 1;
    return lines > max ? [`${relative(SRC, path)}: ${lines} lines`] : [];
  });
}

describe("src/ file sizes", () => {
  // Failed before the store's hubs were split: session-store.ts 1369 lines, jsonl-backend.ts 1357,
  // postgres-backend.ts 919.
  it(`has no file over ${MAX_LINES} lines`, () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    expect(oversized(files, MAX_LINES)).toEqual([]);
  });

  it("names a file over the limit", () => {
    const files = sourceFiles(join(SRC, "store"));
    expect(oversized(files, 10).length).toBeGreaterThan(0);
  });
});
