// Validates the SQLite layout document and its named queries, and renders the DDL (.gen.sql) and TS modules.
import type { AnySchemaObject, ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import Database from "better-sqlite3";
import bundledLayoutSchema from "../schema/storage/sqlite-layout.schema.json" with { type: "json" };
import { generatedHeader } from "./lib/header.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";

// The shape that schema/storage/sqlite-layout.schema.json states; that schema is not one of the
// type-generated ones, so its (validated) shape is mirrored here for the renderers.
export type SqliteColumnType = "TEXT" | "INTEGER";
export type SqliteSynchronous = "normal" | "full" | "extra";

export interface SqliteLayout {
  readonly version: number;
  readonly description: string;
  readonly pragmas: SqlitePragmas;
  readonly tables: readonly SqliteTable[];
}

export interface SqlitePragmas {
  readonly foreignKeys: boolean;
  readonly journalMode: "wal" | "delete";
  readonly busyTimeoutMs: number;
  readonly synchronous: { readonly fsync: "full" | "extra"; readonly process: SqliteSynchronous };
}

export interface SqliteTable {
  readonly name: string;
  readonly strict: boolean;
  readonly description: string;
  readonly columns: readonly SqliteColumn[];
  readonly primaryKey: readonly string[];
  readonly indexes: readonly SqliteIndex[];
}

export interface SqliteColumn {
  readonly name: string;
  readonly type: SqliteColumnType;
  readonly notNull: boolean;
  readonly encoding?: "json";
  readonly field?: string;
  readonly references?: {
    readonly table: string;
    readonly column: string;
    readonly onDelete?: "CASCADE" | "RESTRICT";
  };
  readonly description: string;
}

export interface SqliteIndex {
  readonly name: string;
  readonly columns: readonly { readonly name: string; readonly order: "ASC" | "DESC" }[];
  readonly description: string;
}

/** Where the layout document and its schema live, relative to the schema folder. */
export const SQLITE_LAYOUT_PATH = "storage/sqlite-layout.json";
export const SQLITE_LAYOUT_SCHEMA_PATH = "storage/sqlite-layout.schema.json";

const GENERATOR = "scripts/render-sqlite.ts";
const SOURCES = [`schema/${SQLITE_LAYOUT_PATH}`];

/** A layout document that fails its schema or a semantic rule; `path` is a JSON pointer into it. */
export class SqliteLayoutError extends Error {
  readonly code = "INVALID_SQLITE_LAYOUT" as const;
  readonly path: string;

  constructor(path: string, expected: string, found: string) {
    super(`invalid SQLite layout at ${path}: expected ${expected}, found ${found}`);
    this.name = "SqliteLayoutError";
    this.path = path;
  }
}

// One compiled validator per schema object: Ajv refuses to add the same $id twice.
const validators = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: unknown): ValidateFunction {
  if (typeof schema !== "object" || schema === null) {
    throw new Error(`expected the SQLite layout schema to be an object, got ${show(schema)}`);
  }
  let validate = validators.get(schema);
  if (validate === undefined) {
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    validate = ajv.compile(schema as AnySchemaObject);
    validators.set(schema, validate);
  }
  return validate;
}

/**
 * Checks `doc` against the layout schema (`schema`, by default the bundled
 * schema/storage/sqlite-layout.schema.json) and then the rules a schema cannot state: unique
 * table, column and index names, key/index/reference columns that exist, NOT NULL key columns,
 * JSON only in TEXT columns, references to a single-column primary key of the same type.
 * @throws SqliteLayoutError (code INVALID_SQLITE_LAYOUT) naming the JSON path, what was
 *   expected and what was found.
 */
export function validateSqliteLayout(
  doc: unknown,
  schema: unknown = bundledLayoutSchema,
): SqliteLayout {
  const validate = validatorFor(schema);
  if (!validate(doc)) {
    const [error] = validate.errors ?? [];
    if (error === undefined) throw new SqliteLayoutError("/", "a valid layout", "an invalid one");
    throw schemaError(error, doc);
  }
  const layout = doc as SqliteLayout;
  checkSemantics(layout);
  return layout;
}

function schemaError(error: ErrorObject, doc: unknown): SqliteLayoutError {
  const at = error.instancePath;
  const found = show(valueAt(doc, at));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return new SqliteLayoutError(`${at}/${String(params.missingProperty)}`, "a value", "none");
    case "additionalProperties":
      return new SqliteLayoutError(
        `${at}/${String(params.additionalProperty)}`,
        "no such property",
        "one",
      );
    case "enum":
      return new SqliteLayoutError(pathOf(at), `one of ${show(params.allowedValues)}`, found);
    case "const":
      return new SqliteLayoutError(pathOf(at), show(params.allowedValue), found);
    case "pattern":
      return new SqliteLayoutError(
        pathOf(at),
        `a string matching ${String(params.pattern)}`,
        found,
      );
    case "type":
      return new SqliteLayoutError(pathOf(at), `type ${String(params.type)}`, found);
    default:
      return new SqliteLayoutError(
        pathOf(at),
        `a value that ${error.message ?? "is valid"}`,
        found,
      );
  }
}

function checkSemantics(layout: SqliteLayout): void {
  const tables = new Map(layout.tables.map((table) => [table.name, table]));
  // Tables and indexes share one namespace in an SQLite schema.
  const schemaNames = new Set<string>();
  const claim = (name: string, path: string): void => {
    if (schemaNames.has(name)) throw new SqliteLayoutError(path, "a unique name", show(name));
    schemaNames.add(name);
  };
  const tableKeys = new Set<string>();
  layout.tables.forEach((table, t) => {
    claim(table.name, `/tables/${t}/name`);
    // The generated module names tables in camelCase and rows in PascalCase.
    const key = camelCase(table.name);
    if (tableKeys.has(key)) {
      throw new SqliteLayoutError(`/tables/${t}/name`, "a unique camelCase name", show(key));
    }
    tableKeys.add(key);
  });

  layout.tables.forEach((table, t) => {
    const at = `/tables/${t}`;
    const columns = new Map<string, SqliteColumn>();
    const keys = new Set<string>();
    table.columns.forEach((column, c) => {
      const path = `${at}/columns/${c}`;
      if (columns.has(column.name)) {
        throw new SqliteLayoutError(
          `${path}/name`,
          "a column name unique in its table",
          show(column.name),
        );
      }
      columns.set(column.name, column);
      const key = columnKey(column);
      if (keys.has(key)) {
        throw new SqliteLayoutError(`${path}/field`, "a field unique in its table", show(key));
      }
      keys.add(key);
      if (column.encoding === "json" && column.type !== "TEXT") {
        throw new SqliteLayoutError(`${path}/type`, '"TEXT" for a JSON column', show(column.type));
      }
      if (column.references !== undefined) checkReference(column, `${path}/references`, tables);
    });
    const columnOf = (name: string, path: string): SqliteColumn => {
      const column = columns.get(name);
      if (column === undefined) {
        throw new SqliteLayoutError(path, `a column of table ${show(table.name)}`, show(name));
      }
      return column;
    };
    table.primaryKey.forEach((name, k) => {
      // STRICT makes key columns NOT NULL anyway; the document must say what the database does.
      if (!columnOf(name, `${at}/primaryKey/${k}`).notNull) {
        throw new SqliteLayoutError(`${at}/primaryKey/${k}`, "a NOT NULL column", show(name));
      }
    });
    table.indexes.forEach((index, i) => {
      claim(index.name, `${at}/indexes/${i}/name`);
      const seen = new Set<string>();
      index.columns.forEach(({ name }, c) => {
        const path = `${at}/indexes/${i}/columns/${c}/name`;
        columnOf(name, path);
        if (seen.has(name))
          throw new SqliteLayoutError(path, "a column not yet in the index", show(name));
        seen.add(name);
      });
    });
  });
}

function checkReference(
  column: SqliteColumn,
  path: string,
  tables: ReadonlyMap<string, SqliteTable>,
): void {
  const ref = column.references;
  if (ref === undefined) return;
  const target = tables.get(ref.table);
  if (target === undefined)
    throw new SqliteLayoutError(`${path}/table`, "a table of the layout", show(ref.table));
  // SQLite only reports a parent key that is not unique when a row is written; catch it here.
  if (target.primaryKey.length !== 1 || target.primaryKey[0] !== ref.column) {
    throw new SqliteLayoutError(
      `${path}/column`,
      `the single primary key column of ${show(target.name)} (${show(target.primaryKey)})`,
      show(ref.column),
    );
  }
  const targetColumn = target.columns.find((c) => c.name === ref.column);
  if (targetColumn !== undefined && targetColumn.type !== column.type) {
    throw new SqliteLayoutError(`${path}/column`, `a ${column.type} column`, targetColumn.type);
  }
}

/** The DDL statements without the header: tables, indexes, then the user_version stamp. */
export function sqliteDdlBody(layout: SqliteLayout): string {
  const statements: string[] = [];
  for (const table of layout.tables) {
    const lines = table.columns.map((column) => `  ${columnDefinition(column)}`);
    lines.push(`  PRIMARY KEY (${table.primaryKey.join(", ")})`);
    statements.push(
      `CREATE TABLE ${table.name} (\n${lines.join(",\n")}\n)${table.strict ? " STRICT" : ""};`,
    );
  }
  const indexes = layout.tables.flatMap((table) =>
    table.indexes.map((index) => {
      const keys = index.columns.map((c) => `${c.name} ${c.order}`).join(", ");
      return `CREATE INDEX ${index.name} ON ${table.name} (${keys});`;
    }),
  );
  if (indexes.length > 0) statements.push(indexes.join("\n"));
  statements.push(`PRAGMA user_version = ${layout.version};`);
  return `${statements.join("\n\n")}\n`;
}

function columnDefinition(column: SqliteColumn): string {
  const parts = [column.name, column.type];
  if (column.notNull) parts.push("NOT NULL");
  const ref = column.references;
  if (ref !== undefined) {
    parts.push(`REFERENCES ${ref.table} (${ref.column})`);
    if (ref.onDelete !== undefined) parts.push(`ON DELETE ${ref.onDelete}`);
  }
  return parts.join(" ");
}

/** The text of generated/sqlite-layout.gen.sql: header, then {@link sqliteDdlBody}. */
export function renderSqliteDdl(layout: SqliteLayout): string {
  return (
    generatedHeader({ generator: GENERATOR, sources: SOURCES, comment: "--" }) +
    sqliteDdlBody(layout)
  );
}

/**
 * The text of generated/sqlite-layout.gen.ts: the layout version, the DDL as a string, the
 * pragmas, table/column names keyed by field, and one readonly row interface per table.
 */
export function renderSqliteModule(layout: SqliteLayout): string {
  const { pragmas } = layout;
  const out: string[] = [];
  out.push(
    ...jsDoc(
      "The SQLite layout version; the last statement of {@link SQLITE_DDL} stamps it in `PRAGMA user_version`.",
      "",
    ),
    `export const SQLITE_LAYOUT_VERSION = ${layout.version} as const;`,
    "",
    "/**",
    " * Creates the tables and indexes of a fresh database and stamps `user_version`. Run it inside",
    " * one transaction so that a database either has the whole layout and its stamp or nothing.",
    " */",
    `export const SQLITE_DDL = ${JSON.stringify(sqliteDdlBody(layout))};`,
    "",
    ...jsDoc(
      "Connection pragmas, applied after the version check (journal_mode rewrites the file header).",
      "",
    ),
    "export const SQLITE_PRAGMAS = {",
    `  foreignKeys: ${pragmas.foreignKeys},`,
    `  journalMode: ${JSON.stringify(pragmas.journalMode)},`,
    `  busyTimeoutMs: ${pragmas.busyTimeoutMs},`,
    "  synchronous: {",
    `    fsync: ${JSON.stringify(pragmas.synchronous.fsync)},`,
    `    process: ${JSON.stringify(pragmas.synchronous.process)},`,
    "  },",
    "} as const;",
    "",
    "/** Table and column names, keyed by the member a column stores (else its camelCase name). */",
    "export const SQLITE_TABLES = {",
  );
  for (const table of layout.tables) {
    out.push(
      `  ${camelCase(table.name)}: {`,
      `    name: ${JSON.stringify(table.name)},`,
      "    columns: {",
      ...table.columns.map(
        (column) => `      ${columnKey(column)}: ${JSON.stringify(column.name)},`,
      ),
      "    },",
      `    primaryKey: ${stringList(table.primaryKey)},`,
      `    jsonColumns: ${stringList(table.columns.filter((c) => c.encoding === "json").map((c) => c.name))},`,
      "  },",
    );
  }
  out.push("} as const;");
  for (const table of layout.tables) {
    out.push("", ...jsDoc(`A row of table \`${table.name}\`. ${table.description}`, ""));
    out.push(`export interface ${pascalCase(table.name)}Row {`);
    for (const column of table.columns) {
      const type = column.type === "TEXT" ? "string" : "number";
      out.push(
        ...jsDoc(column.description, "  "),
        `  readonly ${column.name}: ${type}${column.notNull ? "" : " | null"};`,
      );
    }
    out.push("}");
  }
  const header = generatedHeader({ generator: GENERATOR, sources: SOURCES, comment: "//" });
  return `${header}${out.join("\n")}\n`;
}

/**
 * Validates the layout document of `set` against the schema in the same set and renders its
 * files, with paths relative to generated/: the DDL, the layout module and, when the schema
 * folder has `storage/sqlite-queries.sql`, the queries module.
 * @throws SqliteLayoutError when the document is invalid; SqliteQueryError when a query is;
 *   Error when a file is missing.
 */
export function renderSqliteFiles(set: SchemaSet): { path: string; content: string }[] {
  const layout = validateSqliteLayout(
    schemaFile(set, SQLITE_LAYOUT_PATH),
    schemaFile(set, SQLITE_LAYOUT_SCHEMA_PATH),
  );
  const files = [
    { path: "sqlite-layout.gen.sql", content: renderSqliteDdl(layout) },
    { path: "sqlite-layout.gen.ts", content: renderSqliteModule(layout) },
  ];
  const queries = readSqliteQueries(set);
  if (queries !== undefined) {
    files.push({ path: "sqlite-queries.gen.ts", content: renderSqliteQueries(layout, queries) });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Named queries: schema/storage/sqlite-queries.sql → generated/sqlite-queries.gen.ts

/** Where the named queries live, relative to the schema folder (beside the layout). */
export const SQLITE_QUERIES_PATH = "storage/sqlite-queries.sql";

/** One statement of the queries file, as parsed. */
export interface SqliteQuery {
  /** The camelCase name after `-- name:`. */
  readonly name: string;
  /** The `--` lines between the name and the statement, joined. */
  readonly description: string;
  /** The statement, trimmed, comment lines removed. */
  readonly sql: string;
  /** The 1-based line of its `-- name:` line. */
  readonly line: number;
}

/** A query that is malformed or does not prepare on the layout; `query` names it. */
export class SqliteQueryError extends Error {
  readonly code = "INVALID_SQLITE_QUERY" as const;
  readonly query: string;
  readonly line: number;

  constructor(query: string, line: number, expected: string, found: string) {
    super(
      `invalid SQLite query ${query} (schema/${SQLITE_QUERIES_PATH} line ${line}): expected ${expected}, found ${found}`,
    );
    this.name = "SqliteQueryError";
    this.query = query;
    this.line = line;
  }
}

/** The queries file of a schema set (its text), or undefined when the folder has none. */
export function readSqliteQueries(set: SchemaSet): string | undefined {
  const text = set.files.get(SQLITE_QUERIES_PATH);
  return typeof text === "string" ? text : undefined;
}

const NAME_LINE = /^--\s*name:\s*(\S*)\s*$/;
const QUERY_NAME = /^[a-z][A-Za-z0-9]*$/;

/**
 * Splits the queries file into named statements. Text before the first `-- name:` line is the
 * file's own commentary.
 * @throws SqliteQueryError for a bad or repeated name, or a name without a statement.
 */
export function parseSqliteQueries(text: string): SqliteQuery[] {
  const queries: SqliteQuery[] = [];
  let current: { name: string; line: number; doc: string[]; body: string[] } | undefined;
  const finish = (): void => {
    if (current === undefined) return;
    const sql = current.body.join("\n").trim();
    if (sql === "") throw new SqliteQueryError(current.name, current.line, "a statement", "none");
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
        throw new SqliteQueryError(name || "(unnamed)", index + 1, "a camelCase name", show(name));
      }
      if (queries.some((q) => q.name === name)) {
        throw new SqliteQueryError(name, index + 1, "a name used once", "a second use");
      }
      current = { name, line: index + 1, doc: [], body: [] };
      return;
    }
    if (current === undefined) return;
    if (/^\s*--/.test(line)) {
      // Comment lines before the statement document it; inside it they are dropped.
      if (current.body.every((l) => l.trim() === ""))
        current.doc.push(line.replace(/^\s*--\s?/, ""));
      return;
    }
    current.body.push(line);
  });
  finish();
  return queries;
}

/**
 * The named parameters of a statement (without `@`), in order of first use, skipping string
 * literals, quoted identifiers and comments.
 * @throws SqliteQueryError for a positional (`?`) or `:`/`$` parameter: the backend binds by name.
 */
export function queryParameters(query: SqliteQuery): string[] {
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
  readonly query: SqliteQuery;
  readonly params: readonly string[];
  readonly columns: readonly { readonly name: string; readonly type: string }[] | undefined;
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
  queries: readonly SqliteQuery[],
): PreparedQuery[] {
  const db = new Database(":memory:");
  try {
    db.exec(sqliteDdlBody(layout));
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
      const outerJoin = /\b(LEFT|RIGHT|FULL)\b(\s+OUTER)?\s+JOIN\b/i.test(query.sql);
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
        const source = layout.tables
          .find((t) => t.name === column.table)
          ?.columns.find((c) => c.name === column.column);
        if (source === undefined) return { name: column.name, type: "SqliteScalar" };
        const base = source.type === "TEXT" ? "string" : "number";
        return {
          name: column.name,
          type: source.notNull && !outerJoin ? base : `${base} | null`,
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
  const prepared = checkSqliteQueries(layout, parseSqliteQueries(text));
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
    // A bare `@name` at the start of a wrapped line would read as a JSDoc tag.
    const doc = query.description.replace(/@(\w+)/g, "`@$1`");
    if (doc !== "") out.push(...jsDoc(doc, "  "));
    out.push(`  ${query.name}: ${JSON.stringify(query.sql)},`);
  }
  out.push(
    "} as const;",
    "",
    "/** The name of one statement of {@link SQLITE_QUERIES}. */",
    "export type SqliteQueryName = keyof typeof SQLITE_QUERIES;",
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
    if (columns === undefined) continue;
    const members = columns.map((c) => `readonly ${c.name}: ${c.type}`).join("; ");
    const line = `  readonly ${query.name}: { ${members} };`;
    if (line.length <= 100) out.push(line);
    else {
      out.push(`  readonly ${query.name}: {`);
      for (const c of columns) out.push(`    readonly ${c.name}: ${c.type};`);
      out.push("  };");
    }
  }
  out.push("}");
  const header = generatedHeader({
    generator: GENERATOR,
    sources: [`schema/${SQLITE_QUERIES_PATH}`, ...SOURCES],
    comment: "//",
  });
  return `${header}${out.join("\n")}\n`;
}

function columnKey(column: SqliteColumn): string {
  return column.field ?? camelCase(column.name);
}

function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

function stringList(items: readonly string[]): string {
  return `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;
}

/** A JSDoc comment for `text`, on one line when it fits in 100 columns, else wrapped by words. */
function jsDoc(text: string, indent: string): string[] {
  // A description must not end the comment it is written into.
  const safe = text.replaceAll("*/", "*\\/");
  const oneLine = `${indent}/** ${safe} */`;
  if (oneLine.length <= 100) return [oneLine];
  const lines: string[] = [];
  let line = `${indent} *`;
  for (const word of safe.split(/\s+/)) {
    if (line.length + 1 + word.length > 100 && line !== `${indent} *`) {
      lines.push(line);
      line = `${indent} *`;
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return [`${indent}/**`, ...lines, `${indent} */`];
}

function pathOf(pointer: string): string {
  return pointer === "" ? "/" : pointer;
}

function valueAt(doc: unknown, pointer: string): unknown {
  let value = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
