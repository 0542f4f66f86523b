// Finds the session logs a command was pointed at: files as given, folders searched for *.jsonl.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

const PRIMARY = "session.jsonl";
const CHILD = /^session\.(\d+)\.jsonl$/;

/**
 * The log files of `paths`, in a stable order: a file as given; a folder as every `*.jsonl`
 * below it. Inside a folder a fixture's `session.jsonl` comes first, then `session.N.jsonl` by N,
 * then other logs by name, then subfolders by name. A path named twice is listed once.
 * @throws the file system's error (ENOENT…) for a path that cannot be read.
 */
export async function collectLogFiles(paths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) await walk(path, found);
    else found.push(path);
  }
  return [...new Set(found)];
}

async function walk(dir: string, found: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => e.name)
    .sort(compareLogNames);
  for (const name of files) found.push(join(dir, name));
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort(compareCodeUnits);
  for (const name of dirs) await walk(join(dir, name), found);
}

function compareLogNames(a: string, b: string): number {
  return rank(a) - rank(b) || compareCodeUnits(a, b);
}

/** 0 for the primary, 1 + N for a child, past every child for anything else. */
function rank(name: string): number {
  if (name === PRIMARY) return 0;
  const child = CHILD.exec(name);
  return child ? 1 + Number(child[1]) : Number.MAX_SAFE_INTEGER;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
