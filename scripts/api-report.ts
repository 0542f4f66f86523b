// Writes docs/api-report.md: every name the package exports, with its declaration, read from the built .d.ts files.
// With --check nothing is written: exits 1 and prints a diff when the API differs from the committed report.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript-5";

const ROOT = join(import.meta.dirname, "..");
const REPORT = join(ROOT, "docs", "api-report.md");

/** The package's entry points: the exports map's keys and the declaration files they resolve to. */
const ENTRIES = [
  { specifier: "seedline", file: "dist/src/index.d.ts" },
  { specifier: "seedline/testing", file: "dist/src/testing/index.d.ts" },
] as const;

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** The statement a declaration stands in, printed without comments (a variable with its `declare const`). */
function declarationText(declaration: ts.Declaration): string {
  const node =
    ts.isVariableDeclaration(declaration) && ts.isVariableStatement(declaration.parent.parent)
      ? declaration.parent.parent
      : declaration;
  return printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile()).trim();
}

/** The report of one entry: its exported names in order, each with the declarations behind it. */
function entryReport(program: ts.Program, specifier: string, file: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(join(ROOT, file));
  if (source === undefined)
    throw new Error(`expected ${file} to exist, found none: run npm run build`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`expected ${file} to be a module`);
  const exported = checker
    .getExportsOfModule(moduleSymbol)
    .slice()
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sections = exported.map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const texts = (target.declarations ?? []).map(declarationText);
    return `### \`${symbol.name}\`\n\n\`\`\`ts\n${texts.join("\n")}\n\`\`\``;
  });
  return [`## \`${specifier}\` (${exported.length} names)`, ...sections].join("\n\n");
}

/** The whole report, from the built declaration files. */
export function renderApiReport(): string {
  const program = ts.createProgram(
    ENTRIES.map((e) => join(ROOT, e.file)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      types: ["node"],
    },
  );
  return `${[
    "# seedline API report",
    "",
    "Every name the package exports, with its declaration as the built `.d.ts` files state it",
    "(comments left out). Written by `npm run api-report` after `npm run build`; CI runs",
    "`npm run api-report -- --check`, which fails on any difference, so a change of the API shows",
    "in review as a change of this file.",
    "",
    ...ENTRIES.map((e) => entryReport(program, e.specifier, e.file))
      .join("\n\n")
      .split("\n"),
  ].join("\n")}\n`;
}

function main(argv: readonly string[]): number {
  const text = renderApiReport();
  if (!argv.includes("--check")) {
    writeFileSync(REPORT, text);
    console.log(`api-report: wrote ${REPORT}`);
    return 0;
  }
  const committed = existsSync(REPORT) ? readFileSync(REPORT, "utf8") : "";
  if (committed === text) {
    console.log("api-report --check: the API matches docs/api-report.md");
    return 0;
  }
  const dir = mkdtempSync(join(tmpdir(), "seedline-api-"));
  try {
    const built = join(dir, "api-report.md");
    writeFileSync(built, text);
    const diff = spawnSync("diff", ["-u", REPORT, built], { encoding: "utf8" });
    process.stdout.write(diff.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.error(
    "api-report --check: the API differs from docs/api-report.md; review the change, then run npm run api-report",
  );
  return 1;
}

process.exitCode = main(process.argv.slice(2));
