// The doc-sync check as a library: read the docs, render what the schema gives, run every rule, report problems.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { loadSchemaSet } from "../lib/schema-set.js";
import { renderDocRegions } from "../render-docs.js";
import { renderTypes } from "../render-types.js";
import { DERIVED_TYPES, PERSISTENCE_DOC } from "./manifest.js";
import { type MarkdownDoc, parseMarkdown, replaceRegions } from "./markdown.js";
import type { Problem } from "./problem.js";
import { checkGeneratedDrift, checkManifest, checkRegions } from "./rules.js";
import { runTsc } from "./tsc.js";
import {
  type CodeBlock,
  PACKAGE_SPECIFIER,
  planTypeChecks,
  type TypeCheckPlan,
  typeCheckProblems,
} from "./type-checks.js";

/** The generated file the type-equiv blocks are compared with. */
const TYPES_FILE = "types.gen.ts";

/** What the check reads. */
export interface DocSyncOptions {
  /** The folder holding README.md and docs/; messages name files relative to it. */
  readonly docsRoot: string;
  /** The package the docs describe: its src/index.ts, tsconfig.json and node_modules. */
  readonly packageRoot: string;
  /** The schema folder, rendered in memory; defaults to `<packageRoot>/schema`. */
  readonly schemaDir?: string;
  /** The generated folder compared with the schema; defaults to `<packageRoot>/generated`. */
  readonly generatedDir?: string;
}

/** What a run found and what it looked at. */
export interface DocSyncResult {
  readonly problems: readonly Problem[];
  readonly counts: {
    readonly documents: number;
    readonly typeEquivBlocks: number;
    readonly examples: number;
    readonly regions: number;
  };
}

/**
 * Runs every rule: generated types against the schema, the manifest, the generated regions, and —
 * in one tsc run — every type-equiv block against the package's types and every ts example
 * against the package. Never throws for what it finds; every finding is a problem.
 *
 * The compiler starts at once, on the committed generated/types.gen.ts, while the schema is
 * rendered in memory; only when the schema gives other types than the committed ones (a schema
 * change without `npm run generate`) does it run again on the rendered types, so that the blocks
 * are compared with what the schema says now.
 * @throws Error only when tsc cannot be run at all.
 */
export async function runDocSync(options: DocSyncOptions): Promise<DocSyncResult> {
  const { schemaDir, generatedDir } = resolvedDirs(options);
  const docs = readDocs(options.docsRoot);
  const problems: Problem[] = docs.flatMap((d) => d.problems);
  const { typeEquiv, examples } = codeBlocks(docs);
  const committedPath = join(generatedDir, TYPES_FILE);
  const committed = existsSync(committedPath) ? readFileSync(committedPath, "utf8") : "";
  const plan = (schemaTypes: string) =>
    planTypeChecks({ typeEquiv, examples, schemaTypes, derived: DERIVED_TYPES });
  const early = plan(committed);
  const earlyRun = compileAndCheck(early, options.packageRoot);
  // A rejected run is awaited below; this keeps it from counting as unhandled meanwhile.
  earlyRun.catch(() => {});

  let rendered: { types: string; regions: Record<string, string> | undefined } | undefined;
  try {
    const set = loadSchemaSet(schemaDir);
    const types = await renderTypes(set);
    let regions: Record<string, string> | undefined;
    try {
      regions = renderDocRegions(set);
    } catch (error) {
      problems.push(schemaProblem(error));
    }
    rendered = { types, regions };
  } catch (error) {
    problems.push(schemaProblem(error));
  }

  let final = early;
  let typeProblems: Problem[];
  if (rendered !== undefined && rendered.types !== committed) {
    problems.push(
      ...checkGeneratedDrift(
        [{ path: TYPES_FILE, kind: committed === "" ? "missing" : "differs" }],
        displayPath(generatedDir),
      ),
    );
    await earlyRun.catch(() => []);
    final = plan(rendered.types);
    typeProblems = await compileAndCheck(final, options.packageRoot);
  } else {
    typeProblems = await earlyRun;
  }
  problems.push(...final.problems);
  const persistence = docs.find((d) => d.file === PERSISTENCE_DOC);
  const declared = new Map(
    [...final.declared].map(([name, at]) => [name, { file: at.block.file }]),
  );
  problems.push(...checkManifest(persistence, declared));
  if (rendered?.regions !== undefined) problems.push(...checkRegions(docs, rendered.regions));
  problems.push(...typeProblems);

  return {
    problems: sortProblems(problems),
    counts: {
      documents: docs.length,
      typeEquivBlocks: typeEquiv.length,
      examples: examples.length,
      regions: docs.reduce((n, d) => n + d.regions.length, 0),
    },
  };
}

/** The ts fences of the docs: type-equiv blocks and plain examples. */
export function codeBlocks(docs: readonly MarkdownDoc[]): {
  typeEquiv: CodeBlock[];
  examples: CodeBlock[];
} {
  const typeEquiv: CodeBlock[] = [];
  const examples: CodeBlock[] = [];
  for (const doc of docs) {
    for (const fence of doc.fences) {
      if (fence.lang !== "ts" && fence.lang !== "typescript") continue;
      const block = { file: doc.file, openLine: fence.openLine, content: fence.content };
      if (fence.attributes.includes("type-equiv")) typeEquiv.push(block);
      else examples.push(block);
    }
  }
  return { typeEquiv, examples };
}

/**
 * The fix mode: rewrites every generated region of the docs with what the renderer gives now,
 * leaving everything else byte for byte. Returns the files it changed (relative to `docsRoot`).
 * @throws Error when the schema does not render.
 */
export function writeDocRegions(options: DocSyncOptions): string[] {
  const { schemaDir } = resolvedDirs(options);
  const rendered = renderDocRegions(loadSchemaSet(schemaDir));
  const changed: string[] = [];
  for (const doc of readDocs(options.docsRoot)) {
    const text = replaceRegions(doc, rendered);
    if (text === doc.text) continue;
    writeFileSync(join(options.docsRoot, doc.file), text);
    changed.push(doc.file);
  }
  return changed;
}

/** README.md and every `.md` file under docs/, in a stable order, parsed. */
/**
 * The API report (docs/api-report.md) is the built declarations printed, not prose with examples:
 * `npm run api-report -- --check` keeps it, and its blocks name types they do not import.
 */
function isApiReport(docsRoot: string, path: string): boolean {
  return relative(docsRoot, path).split(sep).join("/") === "docs/api-report.md";
}

export function readDocs(docsRoot: string): MarkdownDoc[] {
  const paths: string[] = [];
  if (existsSync(join(docsRoot, "README.md"))) paths.push(join(docsRoot, "README.md"));
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith(".md") && !isApiReport(docsRoot, path)) {
        paths.push(path);
      }
    }
  };
  walk(join(docsRoot, "docs"));
  return paths.map((path) =>
    parseMarkdown(readFileSync(path, "utf8"), relative(docsRoot, path).split(sep).join("/")),
  );
}

function resolvedDirs(options: DocSyncOptions): { schemaDir: string; generatedDir: string } {
  return {
    schemaDir: resolve(options.schemaDir ?? join(options.packageRoot, "schema")),
    generatedDir: resolve(options.generatedDir ?? join(options.packageRoot, "generated")),
  };
}

/** Writes the plan into a temporary folder, runs tsc once, maps its errors, removes the folder. */
async function compileAndCheck(plan: TypeCheckPlan, packageRoot: string): Promise<Problem[]> {
  const dir = mkdtempSync(join(tmpdir(), "seedline-doc-sync-"));
  try {
    for (const [name, text] of plan.files) writeFileSync(join(dir, name), text);
    writeFileSync(join(dir, "package.json"), '{ "type": "module", "private": true }\n');
    writeFileSync(
      join(dir, "tsconfig.json"),
      `${JSON.stringify(workspaceTsconfig(resolve(packageRoot), [...plan.files.keys()]), null, 2)}\n`,
    );
    return typeCheckProblems(plan, await runTsc(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The package's own compiler options (so examples meet the project's strictness), with the
 * package mapped to its sources and the options a check needs: no emit, no truncated types.
 */
function workspaceTsconfig(packageRoot: string, files: readonly string[]): object {
  let own: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(readFileSync(join(packageRoot, "tsconfig.json"), "utf8")) as {
      compilerOptions?: Record<string, unknown>;
    };
    own = parsed.compilerOptions ?? {};
  } catch {
    // No readable tsconfig.json: the strict defaults below stand alone.
  }
  return {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2023"],
      strict: true,
      ...own,
      noEmit: true,
      skipLibCheck: true,
      noErrorTruncation: true,
      // The assertions are unused constants by design.
      noUnusedLocals: false,
      noUnusedParameters: false,
      moduleDetection: "force",
      types: ["node"],
      typeRoots: [join(packageRoot, "node_modules", "@types")],
      paths: {
        [PACKAGE_SPECIFIER]: [join(packageRoot, "src", "index.ts")],
        [`${PACKAGE_SPECIFIER}/testing`]: [join(packageRoot, "src", "testing", "index.ts")],
      },
    },
    files,
  };
}

/** Problems of no file first, then by file and line; the rules' own order otherwise. */
function sortProblems(problems: readonly Problem[]): Problem[] {
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort(
      (a, b) =>
        (a.problem.file ?? "").localeCompare(b.problem.file ?? "") ||
        (a.problem.line ?? 0) - (b.problem.line ?? 0) ||
        a.index - b.index,
    )
    .map((x) => x.problem);
}

function schemaProblem(error: unknown): Problem {
  return {
    rule: "generated-drift",
    message: `the schema folder does not render: ${(error as Error).message}`,
    fix: "fix the schema (npm run generate shows the same error)",
  };
}

function displayPath(path: string): string {
  const rel = relative(process.cwd(), path).split(sep).join("/");
  return rel === "" ? "." : rel.startsWith("..") ? path : rel;
}
