// The named-query `.sql` files of both storage dialects: the parser and the pieces of their generated modules.
import { jsDoc, show } from "./codegen-text.js";
import type { SchemaSet } from "./schema-set.js";

/** One statement of a queries file, as parsed. */
export interface NamedQuery {
  /** The camelCase name after `-- name:`. */
  readonly name: string;
  /** The `--` lines between the name and the statement, joined. */
  readonly description: string;
  /** The statement as written (named parameters), trimmed, whole-line comments removed. */
  readonly sql: string;
  /** The 1-based line of its `-- name:` line. */
  readonly line: number;
}

/** A query of a dialect's file that is malformed or fails a check; `query` names it. */
export abstract class NamedQueryError extends Error {
  abstract readonly code: string;
  readonly query: string;
  readonly line: number;

  constructor(
    dialect: string,
    path: string,
    query: string,
    line: number,
    expected: string,
    found: string,
  ) {
    super(
      `invalid ${dialect} query ${query} (schema/${path} line ${line}): expected ${expected}, found ${found}`,
    );
    this.query = query;
    this.line = line;
  }
}

/** The error class a dialect reports its queries with. */
export type NamedQueryErrorClass = new (
  query: string,
  line: number,
  expected: string,
  found: string,
) => NamedQueryError;

/** The text of a queries file of a schema set, or undefined when the folder has none. */
export function readNamedQueries(set: SchemaSet, path: string): string | undefined {
  const text = set.files.get(path);
  return typeof text === "string" ? text : undefined;
}

const NAME_LINE = /^--\s*name:\s*(\S*)\s*$/;
const QUERY_NAME = /^[a-z][A-Za-z0-9]*$/;

/**
 * Splits a queries file into named statements. Text before the first `-- name:` line is the
 * file's own commentary; `--` lines before a statement document it, inside it they are dropped.
 * @throws `QueryError` (the dialect's class) for a bad or repeated name, or a name without a
 *   statement.
 */
export function parseNamedQueries(text: string, QueryError: NamedQueryErrorClass): NamedQuery[] {
  const queries: NamedQuery[] = [];
  let current: { name: string; line: number; doc: string[]; body: string[] } | undefined;
  const finish = (): void => {
    if (current === undefined) return;
    const sql = current.body.join("\n").trim();
    if (sql === "") throw new QueryError(current.name, current.line, "a statement", "none");
    queries.push({
      name: current.name,
      description: current.doc.join(" "),
      sql,
      line: current.line,
    });
  };
  text.split("\n").forEach((raw, index) => {
    const line = raw.trimEnd();
    const named = NAME_LINE.exec(line);
    if (named) {
      finish();
      const name = named[1] ?? "";
      if (!QUERY_NAME.test(name)) {
        throw new QueryError(name || "(unnamed)", index + 1, "a camelCase name", show(name));
      }
      if (queries.some((q) => q.name === name)) {
        throw new QueryError(name, index + 1, "a name used once", "a second use");
      }
      current = { name, line: index + 1, doc: [], body: [] };
      return;
    }
    if (current === undefined) return;
    if (/^\s*--/.test(line)) {
      if (current.body.every((l) => l.trim() === "")) {
        current.doc.push(line.replace(/^\s*--\s?/, ""));
      }
      return;
    }
    current.body.push(line);
  });
  finish();
  return queries;
}

/** The JSDoc lines of a query's member in a generated queries constant; none without a description. */
export function queryDocLines(query: NamedQuery): string[] {
  // A bare `@name` at the start of a wrapped line would read as a JSDoc tag.
  const doc = query.description.replace(/@(\w+)/g, "`@$1`");
  return doc === "" ? [] : jsDoc(doc, "  ");
}

/** A result column of a reading statement: its member name and TypeScript type. */
export interface ResultColumn {
  readonly name: string;
  readonly type: string;
}

/** The member of a generated `…QueryRows` interface for one reading statement, wrapped past 100 columns. */
export function rowTypeLines(query: string, columns: readonly ResultColumn[]): string[] {
  const members = columns.map((c) => `readonly ${c.name}: ${c.type}`).join("; ");
  const line = `  readonly ${query}: { ${members} };`;
  if (line.length <= 100) return [line];
  return [
    `  readonly ${query}: {`,
    ...columns.map((c) => `    readonly ${c.name}: ${c.type};`),
    "  };",
  ];
}
