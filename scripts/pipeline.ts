// The generation pipeline as a library: render every generated file from a schema folder, compare, write.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { REGENERATE_COMMAND } from "./lib/header.js";
import { loadSchemaSet, type SchemaSet } from "./lib/schema-set.js";
import { renderEventCatalogue } from "./render-event-catalogue.js";
import { renderPostgresFiles } from "./render-postgres.js";
import { renderRpcFiles } from "./render-rpc.js";
import { renderSearchFields } from "./render-search-fields.js";
import { renderSqliteFiles } from "./render-sqlite.js";
import { renderTypes } from "./render-types.js";
import { renderValidators } from "./render-validators.js";

/** One file of the output folder. */
export interface GeneratedFile {
  /** Path relative to the output folder. */
  readonly path: string;
  readonly content: string;
}

/** Generated files carry this infix, so stale ones can be told from anything else in the folder. */
const GENERATED_NAME = /\.gen\.(ts|js|sql)$/;

/**
 * Renders every generated file from a schema set, in memory. Storage and RPC files are rendered
 * only when their documents are present, so a user's vocabulary-only schema folder works too.
 */
export async function renderAll(set: SchemaSet): Promise<GeneratedFile[]> {
  const files: GeneratedFile[] = [
    { path: "types.gen.ts", content: await renderTypes(set) },
    { path: "validators.gen.ts", content: renderValidators(set) },
    { path: "event-catalogue.gen.ts", content: renderEventCatalogue(set) },
    { path: "search-fields.gen.ts", content: renderSearchFields(set) },
  ];
  if (set.files.has("storage/sqlite-layout.json")) files.push(...renderSqliteFiles(set));
  if (set.files.has("storage/sqlite-layout.json")) files.push(...renderPostgresFiles(set));
  if (set.files.has("rpc/methods.json")) files.push(...(await renderRpcFiles(set)));
  return files.sort((a, b) => a.path.localeCompare(b.path));
}

/** A difference between the output folder and what the schema gives. */
export interface Drift {
  readonly path: string;
  readonly kind: "missing" | "differs" | "stale";
}

/** Compares rendered files with an output folder, byte for byte; stale `.gen.*` files count too. */
export function findDrift(outDir: string, files: readonly GeneratedFile[]): Drift[] {
  const drift: Drift[] = [];
  for (const file of files) {
    const path = join(outDir, file.path);
    if (!existsSync(path)) drift.push({ path: file.path, kind: "missing" });
    else if (readFileSync(path, "utf8") !== file.content)
      drift.push({ path: file.path, kind: "differs" });
  }
  const expected = new Set(files.map((f) => f.path));
  if (existsSync(outDir)) {
    for (const name of readdirSync(outDir).sort()) {
      if (GENERATED_NAME.test(name) && !expected.has(name))
        drift.push({ path: name, kind: "stale" });
    }
  }
  return drift;
}

/** Writes the files (each through a temporary name, so no half-written file is left) and removes stale ones. */
export function writeGenerated(outDir: string, files: readonly GeneratedFile[]): Drift[] {
  const drift = findDrift(outDir, files);
  mkdirSync(outDir, { recursive: true });
  for (const change of drift) {
    const path = join(outDir, change.path);
    if (change.kind === "stale") {
      rmSync(path);
      continue;
    }
    const file = files.find((f) => f.path === change.path) as GeneratedFile;
    writeFileSync(`${path}.tmp`, file.content);
    renameSync(`${path}.tmp`, path);
  }
  return drift;
}

const HELP = `Usage: generate [--check] [--schema DIR] [--out DIR]

Renders TypeScript types, validators, the SQLite DDL and the RPC tables from a schema folder.
  --check        compare with the output folder instead of writing; exit 1 on any difference
  --schema DIR   the schema folder (default: schema)
  --out DIR      the output folder (default: generated)
`;

/** Where the command writes: the process's streams, or strings in a test that runs it in-process. */
export interface GenerateOutput {
  readonly out: { write(text: string): unknown };
  readonly err: { write(text: string): unknown };
  /**
   * Renders the schema folder (default: {@link renderAll} of it): a test that runs the command
   * many times over the same schema renders it once.
   */
  readonly render?: (schemaDir: string) => Promise<GeneratedFile[]>;
}

/** The command-line entry: returns the exit code. */
export async function main(
  argv: readonly string[],
  io: GenerateOutput = { out: process.stdout, err: process.stderr },
): Promise<number> {
  let values: { check?: boolean; schema?: string; out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        check: { type: "boolean" },
        schema: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    io.err.write(`generate: ${(error as Error).message}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    io.out.write(HELP);
    return 0;
  }
  const schemaDir = resolve(values.schema ?? "schema");
  const outDir = resolve(values.out ?? "generated");
  const files = await (io.render ?? ((dir) => renderAll(loadSchemaSet(dir))))(schemaDir);
  if (values.check) {
    const drift = findDrift(outDir, files);
    for (const d of drift) {
      const what =
        d.kind === "stale"
          ? "is no longer generated from the schema"
          : d.kind === "missing"
            ? "is missing"
            : "differs from what the schema gives";
      io.err.write(`generate --check: ${join(outDir, d.path)} ${what}\n`);
    }
    if (drift.length > 0) {
      io.err.write(
        `generate --check: ${drift.length} file(s) out of date; run: ${REGENERATE_COMMAND}\n`,
      );
      return 1;
    }
    io.out.write(`generate --check: ${files.length} files up to date\n`);
    return 0;
  }
  const written = writeGenerated(outDir, files);
  io.out.write(`generate: ${files.length} files in ${outDir} (${written.length} changed)\n`);
  return 0;
}
