// Every document a comment in src/, scripts/, test/ or generated/ cites exists in the repository: a comment cites docs/log.md, never a file kept elsewhere.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import ts from "typescript-5";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** The folders whose comments are checked. */
const SCANNED = ["src", "scripts", "test", "generated"];
/** Folders under them that hold no source of the project's own. */
const SKIPPED = new Set(["node_modules", "artifacts"]);
const SCRIPT_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);

/** One comment: its text and the 1-based line it starts on. */
interface Comment {
  readonly text: string;
  readonly line: number;
}

/** A document a comment names, where it names it, and whether the repository holds it. */
interface Reference {
  readonly file: string;
  readonly line: number;
  readonly cited: string;
  readonly exists: boolean;
}

/** The 1-based line of each offset of `text`, given in increasing order (one pass). */
function linesAt(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    for (; at < offset; at++) if (text.charCodeAt(at) === 10) line++;
    lines.push(line);
  }
  return lines;
}

/** The comments a pattern finds in `searched` (`text`, or a copy of it of the same length). */
function matchedComments(text: string, searched: string, pattern: RegExp): Comment[] {
  const matches = [...searched.matchAll(pattern)];
  const lines = linesAt(
    text,
    matches.map((m) => m.index),
  );
  return matches.map((m, i) => ({
    text: text.slice(m.index, m.index + m[0].length),
    line: lines[i] as number,
  }));
}

const Kind = ts.SyntaxKind;

/** Tokens after which a `/` divides (anything else before it starts a regular expression). */
function endsOperand(kind: ts.SyntaxKind): boolean {
  switch (kind) {
    case Kind.Identifier:
    case Kind.PrivateIdentifier:
    case Kind.NumericLiteral:
    case Kind.BigIntLiteral:
    case Kind.StringLiteral:
    case Kind.NoSubstitutionTemplateLiteral:
    case Kind.TemplateTail:
    case Kind.RegularExpressionLiteral:
    case Kind.CloseParenToken:
    case Kind.CloseBracketToken:
    case Kind.CloseBraceToken:
    case Kind.ThisKeyword:
    case Kind.SuperKeyword:
    case Kind.NullKeyword:
    case Kind.TrueKeyword:
    case Kind.FalseKeyword:
    case Kind.PlusPlusToken:
    case Kind.MinusMinusToken:
      return true;
    default:
      // Contextual keywords (`type`, `of`, `get`, …) are names wherever a `/` could follow them.
      return kind >= Kind.AbstractKeyword && kind <= Kind.OfKeyword;
  }
}

/**
 * The comments of a script, from TypeScript's own scanner: strings, template literals (their
 * substitutions included) and regular expressions are tokens of their own, so a `//` inside one
 * is never taken for a comment. A `/` is read as division after an operand, else as the start of
 * a regular expression, and a `}` that closes a template substitution goes on with the template,
 * as the parser reads them.
 */
function scriptComments(text: string): Comment[] {
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  const spans: { start: number; end: number }[] = [];
  // For each open brace: whether it opened a template substitution (`${`).
  const braces: boolean[] = [];
  let previous: ts.SyntaxKind = Kind.Unknown;
  for (let kind = scanner.scan(); kind !== Kind.EndOfFileToken; kind = scanner.scan()) {
    switch (kind) {
      case Kind.SingleLineCommentTrivia:
      case Kind.MultiLineCommentTrivia:
        spans.push({ start: scanner.getTokenStart(), end: scanner.getTokenEnd() });
        continue;
      case Kind.WhitespaceTrivia:
      case Kind.NewLineTrivia:
      case Kind.ShebangTrivia:
      case Kind.ConflictMarkerTrivia:
        continue;
      case Kind.SlashToken:
      case Kind.SlashEqualsToken:
        if (!endsOperand(previous)) kind = scanner.reScanSlashToken();
        break;
      case Kind.TemplateHead:
      case Kind.OpenBraceToken:
        braces.push(kind === Kind.TemplateHead);
        break;
      case Kind.CloseBraceToken:
        if (braces.pop() === true) {
          kind = scanner.reScanTemplateToken(false);
          if (kind === Kind.TemplateMiddle) braces.push(true);
        }
        break;
      default:
        break;
    }
    previous = kind;
  }
  const lines = linesAt(
    text,
    spans.map((span) => span.start),
  );
  return spans.map((span, i) => ({
    text: text.slice(span.start, span.end),
    line: lines[i] as number,
  }));
}

/** The comments of `file` (a path relative to the root), by its extension; none for other files. */
function commentsOf(file: string, text: string): Comment[] {
  const extension = extname(file);
  if (SCRIPT_EXTENSIONS.has(extension)) return scriptComments(text);
  if (extension === ".css") return matchedComments(text, text, /\/\*[\s\S]*?\*\//g);
  if (extension === ".html") return matchedComments(text, text, /<!--[\s\S]*?-->/g);
  if (extension === ".sql") {
    // Quoted text first, so that a `--` inside a string literal is no comment.
    const unquoted = text.replace(/'(?:[^']|'')*'/g, (quoted) => quoted.replace(/[^\n]/g, " "));
    return matchedComments(text, unquoted, /--[^\n]*|\/\*[\s\S]*?\*\//g);
  }
  return [];
}

/**
 * The paths of Markdown files a comment names, as `docs/log.md` or `README.md` are written, or
 * relative to the citing file with a leading `./` or `../` (an `#anchor` after one is not checked).
 * Words that are URLs are passed over: they name other sites' pages. A name right after a
 * backslash is part of an escape quoted from a string (`\n` before a file name), not a citation.
 */
function citedDocuments(comment: string): string[] {
  const cited: string[] = [];
  for (const word of comment.split(/\s+/)) {
    if (word.includes("://")) continue;
    for (const match of word.matchAll(
      /(?<![\w./\\-])((?:\.{1,2}\/)*[\w-][\w.-]*(?:\/[\w.-]+)*\.md)(?![\w-])/g,
    )) {
      cited.push(match[1] as string);
    }
  }
  return cited;
}

/**
 * Where a cited path points: `./` and `../` paths from the citing file's folder, every other path
 * from the repository's root (as `docs/log.md` is written wherever it is cited).
 */
function resolveCited(file: string, cited: string): string {
  return cited.startsWith("./") || cited.startsWith("../")
    ? resolve(ROOT, dirname(file), cited)
    : resolve(ROOT, cited);
}

/** Every reference to a document in the comments of `text`, the file at `file` (relative). */
function referencesIn(file: string, text: string): Reference[] {
  return commentsOf(file, text).flatMap((comment) =>
    comment.text.split("\n").flatMap((lineText, i) =>
      citedDocuments(lineText).map((cited) => {
        const target = resolveCited(file, cited);
        const inside = !relative(ROOT, target).startsWith(`..${sep}`);
        return { file, line: comment.line + i, cited, exists: inside && existsSync(target) };
      }),
    ),
  );
}

/** The files under the scanned folders, relative to the root, in a stable order. */
function scannedFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(path);
      } else if (entry.isFile()) files.push(path);
    }
  };
  for (const dir of SCANNED) if (existsSync(join(ROOT, dir))) walk(dir);
  return files.sort();
}

describe("the scanner", () => {
  it("finds documents cited in comments only, not in strings, templates or regular expressions", () => {
    const text = [
      "// The rules of docs/log.md and log.md.",
      'const demo = "notes.txt\\nplan.md"; // see README.md',
      `const template = \`read \${demo} and todo.md\`;`,
      "const pattern = /\\/\\/ notes\\.md/;",
      "/**",
      " * A block citing ../docs/storage.md#json-l and docs/readers.md, and",
      " * https://example.com/spec/quality.md (another site).",
      " */",
      "export const x = 1; /* trailing: docs-sync.md */",
      '// the demo printed ("notes.txt\\nplan.md"), an escape quoted from its string',
    ].join("\n");
    expect(
      referencesIn("src/sample.ts", text).map(({ line, cited }) => `${line}: ${cited}`),
    ).toEqual([
      "1: docs/log.md",
      "1: log.md",
      "2: README.md",
      "6: ../docs/storage.md",
      "6: docs/readers.md",
      "9: docs-sync.md",
    ]);
  });

  it("resolves ./ and ../ from the citing file, anything else from the root", () => {
    const found = referencesIn(
      "test/sample.ts",
      "// ../docs/log.md, ./log.md, docs/log.md, log.md, ../../outside.md",
    );
    expect(found.map(({ cited, exists }) => [cited, exists])).toEqual([
      ["../docs/log.md", true],
      ["./log.md", false],
      ["docs/log.md", true],
      ["log.md", false],
      ["../../outside.md", false],
    ]);
  });

  it("reads comments of CSS, HTML and SQL, and no quoted SQL text", () => {
    expect(commentsOf("a.css", "a { color: red; } /* docs/viewer.md */")).toHaveLength(1);
    expect(commentsOf("a.html", "<p>x.md</p><!-- docs/viewer.md -->")[0]?.text).toBe(
      "<!-- docs/viewer.md -->",
    );
    expect(
      commentsOf("a.sql", "SELECT '-- not.md' AS x; -- docs/storage.md").map((c) => c.text),
    ).toEqual(["-- docs/storage.md"]);
  });
});

describe("documents cited by comments", () => {
  // Before the design rules were written into docs/, comments cited the log, storage, readers,
  // replay, rpc and quality documents of a specification kept outside the repository, by bare file
  // name: this failed on 54 of them. Seen failing again by adding such a citation to
  // src/store/backend.ts.
  it("exist in the repository", () => {
    const files = scannedFiles();
    const references = files.flatMap((file) =>
      referencesIn(file, readFileSync(join(ROOT, file), "utf8")),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(references.length).toBeGreaterThan(20);
    const missing = references
      .filter((r) => !r.exists)
      .map((r) => `${r.file.split(sep).join("/")}:${r.line}: ${r.cited}`);
    expect(
      missing,
      `comments cite documents the repository does not hold (write them under docs/ and cite docs/NAME.md):\n${missing.join("\n")}`,
    ).toEqual([]);
  });
});
