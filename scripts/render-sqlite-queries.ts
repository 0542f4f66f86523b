// The SQLite named queries: schema/storage/sqlite-queries.sql, each prepared on the layout → generated/sqlite-queries.gen.ts.
import Database from "better-sqlite3";
import { show, stringList } from "./lib/codegen-text.js";
import { generatedHeader } from "./lib/header.js";
import {
  type NamedQuery,
  NamedQueryError,
  parseNamedQueries,
  queryDocLines,
  type ResultColumn,
  readNamedQueries,
  rowTypeLines,
} from "./lib/named-queries.js";
import type { SchemaSet } from "./lib/schema-set.js";
import { SQLITE_LAYOUT_PATH, type SqliteLayout, sqliteDdlBody } from "./lib/sqlite-layout.js";

// render-sqlite.ts assembles the SQLite files, this one among them; the header names it.
const GENERATOR = "scripts/render-sqlite.ts";

/** Where the named queries live, relative to the schema folder (beside the layout). */
export const SQLITE_QUERIES_PATH = "storage/sqlite-queries.sql";

/** A query that is malformed or does not prepare on the layout; `query` names it. */
export class SqliteQueryError extends NamedQueryError {
  readonly code = "INVALID_SQLITE_QUERY" as const;

  constructor(query: string, line: number, expected: string, found: string) {
    super("SQLite", SQLITE_QUERIES_PATH, query, line, expected, found);
    this.name = "SqliteQueryError";
  }
}

/** The queries file of a schema set (its text), or undefined when the folder has none. */
export function readSqliteQueries(set: SchemaSet): string | undefined {
  return readNamedQueries(set, SQLITE_QUERIES_PATH);
}

/**
 * The named parameters of a statement (without `@`), in order of first use, skipping string
 * literals, quoted identifiers and comments.
 * @throws SqliteQueryError for a positional (`?`) or `:`/`$` parameter: the backend binds by name.
 */
export function queryParameters(query: NamedQuery): string[] {
  const { sql } = query;
  const names: string[] = [];
  const closers: Record<string, string> = { "'": "'", '"': '"', "`": "`", "[": "]" };
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i] as string;
    const closer = closers[ch];
    if (closer !== undefined) {
      const end = sql.indexOf(closer, i + 1);
      i = end === -1 ? sql.length : end;
      continue;
    }
    if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
      continue;
    }
    if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 1;
      continue;
    }
    if (ch === "?" || ch === ":" || ch === "$") {
      throw new SqliteQueryError(
        query.name,
        query.line,
        "named parameters (@name) only",
        show(sql.slice(i, i + 12)),
      );
    }
    if (ch === "@") {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0];
      if (name === undefined) {
        throw new SqliteQueryError(query.name, query.line, "a parameter name after @", "none");
      }
      if (!names.includes(name)) names.push(name);
      i += name.length;
    }
  }
  return names;
}

/** What preparing a statement on the layout tells: whether it returns rows, and their columns. */
interface PreparedQuery {
  readonly query: NamedQuery;
  readonly params: readonly string[];
  readonly columns: readonly ResultColumn[] | undefined;
}

/**
 * Prepares every query on an in-memory database made from the layout's DDL and derives the
 * TypeScript type of each result column: a plain table column gets its layout type (nullable
 * when the column is, or when an outer join may leave it NULL); an expression gets `SqliteScalar`.
 * @throws SqliteQueryError naming the first query that does not prepare, binds other than by
 *   name, or returns two columns of one name.
 */
export function checkSqliteQueries(
  layout: SqliteLayout,
  queries: readonly NamedQuery[],
): PreparedQuery[] {
  const db = new Database(":memory:");
  try {
    db.exec(sqliteDdlBody(layout));
    // The tables the file's own statements create (the catalog, the titles table, the search
    // index) exist before any statement is prepared, wherever in the file their CREATE stands.
    for (const query of queries) {
      if (!/^\s*CREATE\b/i.test(query.sql)) continue;
      try {
        db.prepare(query.sql).run();
      } catch (error) {
        throw new SqliteQueryError(
          query.name,
          query.line,
          `a CREATE statement that runs on layout ${layout.version}`,
          show((error as Error).message),
        );
      }
    }
    return queries.map((query) => {
      const params = queryParameters(query);
      let statement: Database.Statement;
      try {
        statement = db.prepare(query.sql);
      } catch (error) {
        throw new SqliteQueryError(
          query.name,
          query.line,
          `one statement that prepares on layout ${layout.version}`,
          show((error as Error).message),
        );
      }
      if (!statement.reader) return { query, params, columns: undefined };
      // A column of a table on the right of a LEFT JOIN may be NULL; any RIGHT or FULL join makes
      // every column so.
      const outerJoin = /\b(RIGHT|FULL)\b(\s+OUTER)?\s+JOIN\b/i.test(query.sql);
      const leftJoined = new Set(
        [...query.sql.matchAll(/\bLEFT\s+(?:OUTER\s+)?JOIN\s+([A-Za-z_][A-Za-z0-9_]*)/gi)].map(
          (m) => m[1],
        ),
      );
      const seen = new Set<string>();
      const columns = statement.columns().map((column) => {
        if (seen.has(column.name) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(column.name)) {
          throw new SqliteQueryError(
            query.name,
            query.line,
            "result columns with unique identifier names (alias expressions)",
            show(column.name),
          );
        }
        seen.add(column.name);
        const source =
          layout.tables
            .find((t) => t.name === column.table)
            ?.columns.find((c) => c.name === column.column) ??
          createdColumn(db, column.table, column.column);
        if (source === undefined) return { name: column.name, type: "SqliteScalar" };
        const base = source.type === "TEXT" ? "string" : "number";
        return {
          name: column.name,
          type:
            source.notNull && !outerJoin && !leftJoined.has(column.table ?? "")
              ? base
              : `${base} | null`,
        };
      });
      return { query, params, columns };
    });
  } finally {
    db.close();
  }
}

/**
 * The text of generated/sqlite-queries.gen.ts: every statement by name, the named parameters of
 * each, and the row type of each reading statement. Every statement is prepared on the layout
 * first (see {@link checkSqliteQueries}).
 * @throws SqliteQueryError naming the query that fails.
 */
export function renderSqliteQueries(layout: SqliteLayout, text: string): string {
  const prepared = checkSqliteQueries(layout, parseNamedQueries(text, SqliteQueryError));
  const out: string[] = [
    "/** A value bound to or read from an expression column (STRICT tables store no BLOBs). */",
    "export type SqliteScalar = string | number | null;",
    "",
    "/**",
    ` * Every SQL statement of the SQLite backend, by name (schema/${SQLITE_QUERIES_PATH}). Each`,
    ` * one prepared successfully on layout ${layout.version} when this file was generated.`,
    " */",
    "export const SQLITE_QUERIES = {",
  ];
  for (const { query } of prepared) {
    out.push(...queryDocLines(query), `  ${query.name}: ${JSON.stringify(query.sql)},`);
  }
  out.push(
    "} as const;",
    "",
    "/** The name of one statement of {@link SQLITE_QUERIES}. */",
    "export type SqliteQueryName = keyof typeof SQLITE_QUERIES;",
    "",
    "/**",
    " * The tables the file's own statements create (`CREATE [VIRTUAL] TABLE IF NOT EXISTS`): the",
    " * catalog, the titles table and the search index, outside the versioned layout. A virtual",
    " * table's shadow tables are named after it (`<name>_…`).",
    " */",
    `export const SQLITE_CREATED_TABLES = ${stringList(createdTableNames(prepared.map((p) => p.query.sql)))} as const;`,
    "",
    "/** The named parameters of each statement (without `@`), in order of first use. */",
    "export const SQLITE_QUERY_PARAMS = {",
    ...prepared.map(({ query, params }) => `  ${query.name}: ${stringList(params)},`),
    "} as const satisfies Record<SqliteQueryName, readonly string[]>;",
    "",
    "/** What a statement binds: every named parameter (better-sqlite3 refuses a missing one). */",
    "export type SqliteQueryParams<Q extends SqliteQueryName> = {",
    "  readonly [P in (typeof SQLITE_QUERY_PARAMS)[Q][number]]: SqliteScalar;",
    "};",
    "",
    "/** The row each reading statement returns, one member per result column. */",
    "export interface SqliteQueryRows {",
  );
  for (const { query, columns } of prepared) {
    if (columns !== undefined) out.push(...rowTypeLines(query.name, columns));
  }
  out.push("}");
  const header = generatedHeader({
    generator: GENERATOR,
    sources: [`schema/${SQLITE_QUERIES_PATH}`, `schema/${SQLITE_LAYOUT_PATH}`],
    comment: "//",
  });
  return `${header}${out.join("\n")}\n`;
}

/**
 * A column of a table the file's own statements created (the catalog, the titles table, the
 * search index) as the check database reports it, typed like a layout column; undefined for an
 * expression or a type other than TEXT and INTEGER.
 */
function createdColumn(
  db: Database.Database,
  table: string | null,
  name: string | null,
): { type: "TEXT" | "INTEGER"; notNull: boolean } | undefined {
  if (table === null || name === null) return undefined;
  const info = db.pragma(`table_info(${JSON.stringify(table)})`) as {
    name: string;
    type: string;
    notnull: number;
    pk: number;
  }[];
  const found = info.find((c) => c.name === name);
  if (found === undefined || (found.type !== "TEXT" && found.type !== "INTEGER")) return undefined;
  return { type: found.type, notNull: found.notnull === 1 || found.pk > 0 };
}

/** The names of the tables that `CREATE [VIRTUAL] TABLE IF NOT EXISTS` statements make, in file order. */
function createdTableNames(statements: readonly string[]): string[] {
  const names: string[] = [];
  for (const sql of statements) {
    const name = /^\s*CREATE\s+(?:VIRTUAL\s+)?TABLE\s+IF\s+NOT\s+EXISTS\s+([a-z_][a-z0-9_]*)/i.exec(
      sql,
    )?.[1];
    if (name !== undefined) names.push(name.toLowerCase());
  }
  return names;
}
