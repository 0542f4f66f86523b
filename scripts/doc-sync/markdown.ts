// Reads the parts of a Markdown file that doc-sync checks: fenced code blocks and generated regions, with line numbers.
import type { Problem } from "./problem.js";

/** A fenced code block. */
export interface Fence {
  /** The first word of the info string (`ts`, `sql`, …), lower-cased. */
  readonly lang: string;
  /** The other words of the info string (`type-equiv`). */
  readonly attributes: readonly string[];
  /** The 1-based line of the opening fence; content line `n` is file line `openLine + n`. */
  readonly openLine: number;
  /** The lines inside the fence, without the fence's own indentation, each ending in `\n`. */
  readonly content: string;
}

/** The lines between `<!-- BEGIN GENERATED <name> -->` and `<!-- END GENERATED <name> -->`. */
export interface Region {
  readonly name: string;
  /** The 1-based line of the BEGIN marker. */
  readonly beginLine: number;
  /** The 1-based line of the END marker. */
  readonly endLine: number;
  /** The lines between the markers, each ending in `\n`. */
  readonly content: string;
}

/** A Markdown file as doc-sync sees it. */
export interface MarkdownDoc {
  /** The path in messages (relative to the checked folder, POSIX separators). */
  readonly file: string;
  readonly text: string;
  readonly fences: readonly Fence[];
  readonly regions: readonly Region[];
  /** Unbalanced or unclosed markers and fences. */
  readonly problems: readonly Problem[];
}

const BEGIN = /^\s*<!--\s*BEGIN GENERATED ([\w.-]+)\s*-->\s*$/;
const END = /^\s*<!--\s*END GENERATED ([\w.-]+)\s*-->\s*$/;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;

/** The lines of a text without their `\n` (a final newline ends the last line, it adds none). */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * Finds the fenced code blocks (``` or ~~~, closed by a fence of the same character at least as
 * long) and the generated regions of a Markdown text. Markers inside a fence are text, not markers.
 */
export function parseMarkdown(text: string, file: string): MarkdownDoc {
  const lines = splitLines(text);
  const fences: Fence[] = [];
  const regions: Region[] = [];
  const problems: Problem[] = [];
  let open: { name: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = FENCE_OPEN.exec(line);
    if (fence !== null) {
      const indent = (fence[1] as string).length;
      const marker = fence[2] as string;
      const [lang = "", ...attributes] = (fence[3] as string).trim().split(/\s+/).filter(Boolean);
      const body: string[] = [];
      let j = i + 1;
      const closing = new RegExp(`^\\s*${marker[0]}{${marker.length},}\\s*$`);
      for (; j < lines.length && !closing.test(lines[j] as string); j++) {
        body.push(stripIndent(lines[j] as string, indent));
      }
      if (j >= lines.length) {
        problems.push({
          rule: "markdown",
          file,
          line: i + 1,
          message: `the code fence opened here is never closed`,
          fix: "close the fence",
        });
      }
      fences.push({
        lang: lang.toLowerCase(),
        attributes,
        openLine: i + 1,
        content: body.map((b) => `${b}\n`).join(""),
      });
      i = j;
      continue;
    }
    const begin = BEGIN.exec(line);
    if (begin !== null) {
      if (open !== undefined) {
        problems.push(
          markerProblem(
            file,
            i + 1,
            `BEGIN GENERATED ${begin[1]} inside region ${open.name} (opened at line ${open.line})`,
          ),
        );
      }
      open = { name: begin[1] as string, line: i + 1 };
      continue;
    }
    const end = END.exec(line);
    if (end !== null) {
      if (open === undefined || open.name !== end[1]) {
        problems.push(
          markerProblem(
            file,
            i + 1,
            `END GENERATED ${end[1]} without a matching BEGIN GENERATED ${end[1]}`,
          ),
        );
        open = undefined;
        continue;
      }
      regions.push({
        name: open.name,
        beginLine: open.line,
        endLine: i + 1,
        content: lines
          .slice(open.line, i)
          .map((l) => `${l}\n`)
          .join(""),
      });
      open = undefined;
    }
  }
  if (open !== undefined) {
    problems.push(
      markerProblem(
        file,
        open.line,
        `BEGIN GENERATED ${open.name} is never closed by END GENERATED ${open.name}`,
      ),
    );
  }
  return { file, text, fences, regions, problems };
}

/**
 * The text with the content of each region named in `rendered` replaced by its rendered text;
 * regions of other names and everything outside regions are kept byte for byte.
 */
export function replaceRegions(
  doc: MarkdownDoc,
  rendered: Readonly<Record<string, string>>,
): string {
  const lines = splitLines(doc.text);
  const out: string[] = [];
  let next = 0;
  for (const region of doc.regions) {
    const text = rendered[region.name];
    if (text === undefined) continue;
    out.push(...lines.slice(next, region.beginLine));
    out.push(...splitLines(text));
    next = region.endLine - 1;
  }
  out.push(...lines.slice(next));
  return out.map((l) => `${l}\n`).join("");
}

function stripIndent(line: string, indent: number): string {
  let n = 0;
  while (n < indent && line[n] === " ") n++;
  return line.slice(n);
}

function markerProblem(file: string, line: number, message: string): Problem {
  return {
    rule: "markdown",
    file,
    line,
    message: `generated region markers: ${message}`,
    fix: "balance the BEGIN/END GENERATED markers, then run npm run doc-sync -- --write",
  };
}
