// Loads a schema folder into memory once, so every renderer works on the same parsed input.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/**
 * Every file of a schema folder, keyed by its POSIX path relative to that folder: `.json` files
 * parsed, `.sql` files (named queries) as text.
 */
export interface SchemaSet {
  readonly dir: string;
  readonly files: ReadonlyMap<string, unknown>;
}

/**
 * Reads every `.json` and `.sql` file below `schemaDir` (sorted by path, so iteration order is stable).
 * @throws Error naming the file when one is not valid JSON.
 */
export function loadSchemaSet(schemaDir: string): SchemaSet {
  const files = new Map<string, unknown>();
  for (const path of listJsonFiles(schemaDir)) {
    const key = relative(schemaDir, path).split(sep).join("/");
    const text = readFileSync(path, "utf8");
    if (key.endsWith(".sql")) {
      files.set(key, text);
      continue;
    }
    try {
      files.set(key, JSON.parse(text));
    } catch (cause) {
      throw new Error(`expected valid JSON in ${join(schemaDir, key)}, got a parse error`, {
        cause,
      });
    }
  }
  return { dir: schemaDir, files };
}

/** The document at `path` (relative to the schema folder). @throws Error when it is missing. */
export function schemaFile(set: SchemaSet, path: string): unknown {
  if (!set.files.has(path)) {
    throw new Error(`expected ${path} in the schema folder ${set.dir}, found no such file`);
  }
  return set.files.get(path);
}

function listJsonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listJsonFiles(path));
    else if (entry.isFile() && /\.(json|sql)$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

/** A schema file whose root becomes a named TypeScript type and a validator. */
export interface RootSchema {
  /** Path relative to the schema folder. */
  readonly path: string;
  /** The root's `title`: the type's name; the validator is `validate<title>`. */
  readonly title: string;
  /** The root's `$id`. */
  readonly id: string;
}

/**
 * The files that define types: every `*.schema.json` with a root `title`, except the schema of a
 * document (a `<name>.schema.json` beside a `<name>.json`, which describes a generator input).
 * Sorted by path.
 * @throws Error when two roots share a title or a root has no `$id`.
 */
export function rootSchemas(set: SchemaSet): RootSchema[] {
  const roots: RootSchema[] = [];
  const byTitle = new Map<string, string>();
  for (const [path, doc] of set.files) {
    if (!path.endsWith(".schema.json")) continue;
    if (set.files.has(path.replace(/\.schema\.json$/, ".json"))) continue;
    const { title, $id } = (doc ?? {}) as { title?: unknown; $id?: unknown };
    if (typeof title !== "string") continue;
    if (typeof $id !== "string") {
      throw new Error(`expected a string $id in ${path}, got ${JSON.stringify($id)}`);
    }
    const clash = byTitle.get(title);
    if (clash !== undefined) {
      throw new Error(`expected unique schema titles, got "${title}" in both ${clash} and ${path}`);
    }
    byTitle.set(title, path);
    roots.push({ path, title, id: $id });
  }
  return roots;
}

/** Every schema file (`*.schema.json`) that is not the schema of a document, for ajv to load. */
export function schemaDocuments(set: SchemaSet): [string, Record<string, unknown>][] {
  const out: [string, Record<string, unknown>][] = [];
  for (const [path, doc] of set.files) {
    if (!path.endsWith(".schema.json")) continue;
    if (set.files.has(path.replace(/\.schema\.json$/, ".json"))) continue;
    out.push([path, doc as Record<string, unknown>]);
  }
  return out;
}
