// Renders the PostgreSQL dialect of the storage layout (DDL, layout module) and the PostgreSQL named queries.
import { generatedHeader } from "./lib/header.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";
import {
  SQLITE_LAYOUT_PATH,
  SQLITE_LAYOUT_SCHEMA_PATH,
  type SqliteColumn,
  type SqliteLayout,
  type SqliteTable,
  validateSqliteLayout,
} from "./render-sqlite.js";

const GENERATOR = "scripts/render-postgres.ts";
const LAYOUT_SOURCES = [`schema/${SQLITE_LAYOUT_PATH}`];

/** Where the PostgreSQL named queries live, relative to the schema folder (beside the layout). */
export const POSTGRES_QUERIES_PATH = "storage/postgres-queries.sql";

/**
 * The table that records the layout version of a PostgreSQL schema (one row), in place of
 * SQLite's `PRAGMA user_version`. It is part of the generated layout, not of the layout document,
 * because SQLite does not have it.
 */
export const POSTGRES_VERSION_TABLE = "seedline_layout";

/** The placeholder a named query uses for the target schema (identifiers cannot be bound). */
export const SCHEMA_PLACEHOLDER = "{schema}";

/** PostgreSQL truncates longer identifiers silently; the generated names must stay below it. */
const MAX_IDENTIFIER = 63;

/** A layout that has no PostgreSQL rendering, or a named query that fails a check; `path` says where. */
export class PostgresRenderError extends Error {
  readonly code = "INVALID_POSTGRES_LAYOUT" as const;
  readonly path: string;

  constructor(path: string, expected: string, found: string) {
    super(`invalid PostgreSQL layout at ${path}: expected ${expected}, found ${found}`);
    this.name = "PostgresRenderError";
    this.path = path;
  }
}

/** The PostgreSQL type of a layout column: `text` (JSON columns too: `jsonb` reorders keys) or `bigint`. */
function columnType(column: SqliteColumn): string {
  // "C" compares bytes, as SQLite's BINARY does, so keys and list order match on both backends.
  return column.type === "TEXT" ? 'text COLLATE "C"' : "bigint";
}

/** The type `format_type()` reports for a column of this layout type. */
function reportedType(column: SqliteColumn): string {
  return column.type === "TEXT" ? "text" : "bigint";
}

function primaryKeyName(table: SqliteTable): string {
  return `${table.name}_pkey`;
}

/** The layout's names that PostgreSQL would see, checked for length and clashes with the version table. */
function checkPostgresNames(layout: SqliteLayout): void {
  layout.tables.forEach((table, t) => {
    if (table.name === POSTGRES_VERSION_TABLE) {
      throw new PostgresRenderError(
        `/tables/${t}/name`,
        `a name other than the version table ${JSON.stringify(POSTGRES_VERSION_TABLE)}`,
        JSON.stringify(table.name),
      );
    }
    const key = primaryKeyName(table);
    if (key.length > MAX_IDENTIFIER) {
      throw new PostgresRenderError(
        `/tables/${t}/name`,
        `a name whose key constraint ${JSON.stringify(key)} has at most ${MAX_IDENTIFIER} characters`,
        `${key.length}`,
      );
    }
    const names = new Set(layout.tables.flatMap((x) => [x.name, ...x.indexes.map((i) => i.name)]));
    if (names.has(key)) {
      throw new PostgresRenderError(
        `/tables/${t}/name`,
        `no relation named like its key index ${JSON.stringify(key)}`,
        "one",
      );
    }
  });
}

/**
 * The DDL statements without the header, for a connection whose `search_path` is the target
 * schema: the tables (keys and references as in the layout), the indexes, the version table, and
 * the row that records the layout version.
 * @throws PostgresRenderError when a generated name does not fit PostgreSQL.
 */
export function postgresDdlBody(layout: SqliteLayout): string {
  checkPostgresNames(layout);
  const statements: string[] = [];
  for (const table of layout.tables) {
    const lines = table.columns.map((column) => `  ${columnDefinition(column)}`);
    lines.push(
      `  CONSTRAINT ${primaryKeyName(table)} PRIMARY KEY (${table.primaryKey.join(", ")})`,
    );
    statements.push(`CREATE TABLE ${table.name} (\n${lines.join(",\n")}\n);`);
  }
  const indexes = layout.tables.flatMap((table) =>
    table.indexes.map((index) => {
      const keys = index.columns.map((c) => `${c.name} ${c.order}`).join(", ");
      return `CREATE INDEX ${index.name} ON ${table.name} (${keys});`;
    }),
  );
  if (indexes.length > 0) statements.push(indexes.join("\n"));
  statements.push(
    `CREATE TABLE ${POSTGRES_VERSION_TABLE} (\n  version integer NOT NULL,\n  CONSTRAINT ${POSTGRES_VERSION_TABLE}_pkey PRIMARY KEY (version)\n);`,
    `INSERT INTO ${POSTGRES_VERSION_TABLE} (version) VALUES (${layout.version});`,
  );
  return `${statements.join("\n\n")}\n`;
}

function columnDefinition(column: SqliteColumn): string {
  const parts = [column.name, columnType(column)];
  if (column.notNull) parts.push("NOT NULL");
  const ref = column.references;
  if (ref !== undefined) {
    parts.push(`REFERENCES ${ref.table} (${ref.column})`);
    if (ref.onDelete !== undefined) parts.push(`ON DELETE ${ref.onDelete}`);
  }
  return parts.join(" ");
}

/** One relation of a schema as the backend's `layoutObjects` query reports it. */
export interface PostgresObject {
  /** `r` for a table, `i` for an index (pg_class.relkind). */
  readonly kind: string;
  readonly name: string;
  /** A table's columns as `name type[ NOT NULL]`, joined by ", "; empty for an index. */
  readonly columns: string;
}

/** The relations a schema made by {@link postgresDdlBody} holds, sorted by name. */
export function postgresLayoutObjects(layout: SqliteLayout): PostgresObject[] {
  const objects: PostgresObject[] = [];
  for (const table of layout.tables) {
    const columns = table.columns.map((c) => {
      // A primary key column is NOT NULL whatever the document says; the layout requires it anyway.
      const notNull = c.notNull || table.primaryKey.includes(c.name);
      return `${c.name} ${reportedType(c)}${notNull ? " NOT NULL" : ""}`;
    });
    objects.push({ kind: "r", name: table.name, columns: columns.join(", ") });
    objects.push({ kind: "i", name: primaryKeyName(table), columns: "" });
    for (const index of table.indexes) objects.push({ kind: "i", name: index.name, columns: "" });
  }
  objects.push(
    { kind: "r", name: POSTGRES_VERSION_TABLE, columns: "version integer NOT NULL" },
    { kind: "i", name: `${POSTGRES_VERSION_TABLE}_pkey`, columns: "" },
  );
  return objects.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The text of generated/postgres-layout.gen.sql: header, a note on the schema, then the DDL. */
export function renderPostgresDdl(layout: SqliteLayout): string {
  return (
    generatedHeader({ generator: GENERATOR, sources: LAYOUT_SOURCES, comment: "--" }) +
    "-- Run in one transaction with search_path set to the target schema (default: seedline).\n\n" +
    postgresDdlBody(layout)
  );
}

/**
 * The text of generated/postgres-layout.gen.ts: the layout version, the DDL, the name of the
 * version table, the relations a current schema holds, and table/column names keyed by field.
 */
export function renderPostgresModule(layout: SqliteLayout): string {
  const out: string[] = [
    ...jsDoc(
      `The PostgreSQL layout version: the layout document's version, recorded as the one row of table \`${POSTGRES_VERSION_TABLE}\`.`,
      "",
    ),
    `export const POSTGRES_LAYOUT_VERSION = ${layout.version} as const;`,
    "",
    "/** The table that records the layout version of a schema (one row). */",
    `export const POSTGRES_VERSION_TABLE = ${JSON.stringify(POSTGRES_VERSION_TABLE)} as const;`,
    "",
    "/**",
    " * Creates the tables, indexes and version record of a fresh schema, on a connection whose",
    " * search_path is that schema. Run it inside one transaction: a schema has the whole layout and",
    " * its record, or nothing. JSON columns are `text`, which keeps the bytes (`jsonb` reorders keys).",
    " */",
    `export const POSTGRES_DDL = ${JSON.stringify(postgresDdlBody(layout))};`,
    "",
    "/**",
    " * The relations of a schema made by {@link POSTGRES_DDL}, sorted by name: kind (`r` table, `i`",
    " * index), name, and a table's columns as `format_type` reports them.",
    " */",
    "export const POSTGRES_LAYOUT_OBJECTS = [",
    ...postgresLayoutObjects(layout).map(
      (o) =>
        `  { kind: ${JSON.stringify(o.kind)}, name: ${JSON.stringify(o.name)}, columns: ${JSON.stringify(o.columns)} },`,
    ),
    "] as const;",
    "",
    "/** Table and column names of the PostgreSQL layout, keyed by the member a column stores. */",
    "export const POSTGRES_TABLES = {",
  ];
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
  const header = generatedHeader({ generator: GENERATOR, sources: LAYOUT_SOURCES, comment: "//" });
  return `${header}${out.join("\n")}\n`;
}

/**
 * Validates the layout document of `set` and renders the PostgreSQL files, with paths relative
 * to generated/: the DDL, the layout module and, when the schema folder has
 * `storage/postgres-queries.sql`, the queries module.
 * @throws SqliteLayoutError for an invalid layout document; PostgresRenderError for a layout
 *   PostgreSQL cannot take; PostgresQueryError for a query that fails a check.
 */
export function renderPostgresFiles(set: SchemaSet): { path: string; content: string }[] {
  const layout = validateSqliteLayout(
    schemaFile(set, SQLITE_LAYOUT_PATH),
    schemaFile(set, SQLITE_LAYOUT_SCHEMA_PATH),
  );
  const files = [
    { path: "postgres-layout.gen.sql", content: renderPostgresDdl(layout) },
    { path: "postgres-layout.gen.ts", content: renderPostgresModule(layout) },
  ];
  const text = set.files.get(POSTGRES_QUERIES_PATH);
  if (typeof text === "string") {
    files.push({ path: "postgres-queries.gen.ts", content: renderPostgresQueries(layout, text) });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Named queries: schema/storage/postgres-queries.sql → generated/postgres-queries.gen.ts

/** One statement of the queries file, as parsed. */
export interface PostgresQuery {
  /** The camelCase name after `-- name:`. */
  readonly name: string;
  /** The `--` lines between the name and the statement, joined. */
  readonly description: string;
  /** The statement as written (named parameters), trimmed, whole-line comments removed. */
  readonly sql: string;
  /** The 1-based line of its `-- name:` line. */
  readonly line: number;
}

/** A named query that fails a check made without a server; `query` names it. */
export class PostgresQueryError extends Error {
  readonly code = "INVALID_POSTGRES_QUERY" as const;
  readonly query: string;
  readonly line: number;

  constructor(query: string, line: number, expected: string, found: string) {
    super(
      `invalid PostgreSQL query ${query} (schema/${POSTGRES_QUERIES_PATH} line ${line}): expected ${expected}, found ${found}`,
    );
    this.name = "PostgresQueryError";
    this.query = query;
    this.line = line;
  }
}

const NAME_LINE = /^--\s*name:\s*(\S*)\s*$/;
const QUERY_NAME = /^[a-z][A-Za-z0-9]*$/;

/**
 * Splits the queries file into named statements. Text before the first `-- name:` line is the
 * file's own commentary; `--` lines before a statement document it, inside it they are dropped.
 * @throws PostgresQueryError for a bad or repeated name, or a name without a statement.
 */
export function parsePostgresQueries(text: string): PostgresQuery[] {
  const queries: PostgresQuery[] = [];
  let current: { name: string; line: number; doc: string[]; body: string[] } | undefined;
  const finish = (): void => {
    if (current === undefined) return;
    const sql = current.body.join("\n").trim();
    if (sql === "") throw new PostgresQueryError(current.name, current.line, "a statement", "none");
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
        throw new PostgresQueryError(
          name || "(unnamed)",
          index + 1,
          "a camelCase name",
          show(name),
        );
      }
      if (queries.some((q) => q.name === name)) {
        throw new PostgresQueryError(name, index + 1, "a name used once", "a second use");
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

type TokenKind = "word" | "quoted" | "string" | "param" | "placeholder" | "punct" | "other";

interface Token {
  readonly kind: TokenKind;
  /** For words: lower-cased; for quoted identifiers: the name inside the quotes; else the text. */
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

/**
 * Splits a statement into tokens: words, quoted identifiers, string literals (`'…'`, `E'…'`),
 * `@name` parameters, the `{schema}` placeholder and punctuation. Comments are skipped.
 * @throws PostgresQueryError for `$` (positional parameters and dollar quoting are refused so
 *   that rewriting `@name` to `$n` is unambiguous), a bad `@` or `{`, or an unterminated literal.
 */
function tokenize(query: PostgresQuery): Token[] {
  const { sql } = query;
  const fail = (expected: string, at: number): never => {
    throw new PostgresQueryError(query.name, query.line, expected, show(sql.slice(at, at + 16)));
  };
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const start = i;
    if (/\s/.test(ch)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (sql.startsWith("/*", i)) {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        if (sql.startsWith("/*", i) || sql.startsWith("*/", i)) {
          depth += sql[i] === "/" ? 1 : -1;
          i += 2;
        } else i++;
      }
      if (depth > 0) fail("a closed comment", start);
    } else if (ch === "'" || ((ch === "E" || ch === "e") && sql[i + 1] === "'")) {
      const escapes = ch !== "'";
      i += escapes ? 2 : 1;
      for (;;) {
        if (i >= sql.length) fail("a closed string literal", start);
        if (escapes && sql[i] === "\\") i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
      tokens.push({ kind: "string", value: sql.slice(start, i), start, end: i });
    } else if (ch === '"') {
      let name = "";
      i++;
      for (;;) {
        if (i >= sql.length) fail("a closed quoted identifier", start);
        if (sql[i] === '"' && sql[i + 1] === '"') {
          name += '"';
          i += 2;
        } else if (sql[i] === '"') break;
        else name += sql[i++];
      }
      i++;
      tokens.push({ kind: "quoted", value: name, start, end: i });
    } else if (ch === "$") {
      fail("named parameters (@name) and no dollar quoting", i);
    } else if (ch === "@") {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0];
      if (name === undefined) fail("a parameter name after @", i);
      i += 1 + (name as string).length;
      tokens.push({ kind: "param", value: name as string, start, end: i });
    } else if (ch === "{") {
      if (!sql.startsWith(SCHEMA_PLACEHOLDER, i)) fail(`${SCHEMA_PLACEHOLDER} as the only {…}`, i);
      i += SCHEMA_PLACEHOLDER.length;
      tokens.push({ kind: "placeholder", value: SCHEMA_PLACEHOLDER, start, end: i });
    } else if (/[A-Za-z_]/.test(ch)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i))?.[0] as string;
      i += word.length;
      tokens.push({ kind: "word", value: word.toLowerCase(), start, end: i });
    } else if ("(),;.".includes(ch)) {
      i++;
      tokens.push({ kind: "punct", value: ch, start, end: i });
    } else if (ch === ":" && sql[i + 1] === ":") {
      i += 2;
      tokens.push({ kind: "punct", value: "::", start, end: i });
    } else {
      i++;
      tokens.push({ kind: "other", value: ch, start, end: i });
    }
  }
  return tokens;
}

/** Catalog schemas a query may name explicitly; every other table must be one of the layout's. */
const CATALOG_SCHEMAS = new Set(["pg_catalog", "information_schema"]);
/** Words after which FROM/UPDATE do not introduce a table (IS DISTINCT FROM, FOR NO KEY UPDATE, …). */
const NOT_A_TABLE_CONTEXT = new Set(["distinct", "key", "for", "do"]);
/** Where a select list ends. */
const SELECT_LIST_END = new Set([
  "from",
  "into",
  "where",
  "group",
  "having",
  "window",
  "order",
  "limit",
  "offset",
  "for",
  "union",
  "intersect",
  "except",
]);

/** A result column: its member name and TypeScript type. */
interface ResultColumn {
  readonly name: string;
  readonly type: string;
}

/** What the offline checks learn about a statement. */
interface CheckedQuery {
  readonly query: PostgresQuery;
  /** The named parameters, in order of first use: `$1` is the first. */
  readonly params: readonly string[];
  /** The statement with `@name` rewritten to `$n`. */
  readonly text: string;
  /** Whether the statement holds {@link SCHEMA_PLACEHOLDER}. */
  readonly usesSchema: boolean;
  /** The result columns of a SELECT; undefined for a statement that returns no rows. */
  readonly columns: readonly ResultColumn[] | undefined;
}

/**
 * Checks one statement as far as can be done without a server — one statement, named parameters
 * only, tables of the layout (or of pg_catalog / information_schema), result columns with unique
 * names that PostgreSQL keeps as written — and rewrites its parameters to `$1…`.
 * @throws PostgresQueryError naming the query.
 */
export function checkPostgresQuery(layout: SqliteLayout, query: PostgresQuery): CheckedQuery {
  const fail = (expected: string, found: string): never => {
    throw new PostgresQueryError(query.name, query.line, expected, found);
  };
  const tokens = tokenize(query);
  const semicolon = tokens.findIndex((t) => t.kind === "punct" && t.value === ";");
  if (semicolon !== -1 && semicolon !== tokens.length - 1) {
    fail("one statement", "text after its ';'");
  }
  if (tokens.length === 0 || (tokens.length === 1 && semicolon === 0)) fail("a statement", "none");
  checkTables(layout, tokens, fail);

  const params: string[] = [];
  let text = "";
  let last = 0;
  for (const token of tokens) {
    if (token.kind !== "param") continue;
    if (!params.includes(token.value)) params.push(token.value);
    text += `${query.sql.slice(last, token.start)}$${params.indexOf(token.value) + 1}`;
    last = token.end;
  }
  text += query.sql.slice(last);

  const first = tokens[0] as Token;
  if (first.kind === "word" && first.value === "with") {
    fail("a statement without WITH (the generator types plain SELECT lists)", "WITH");
  }
  const reader = first.kind === "word" && first.value === "select";
  if (!reader && tokens.some((t) => t.kind === "word" && t.value === "returning")) {
    fail("RETURNING only in a SELECT (the generator types SELECT lists only)", "RETURNING");
  }
  return {
    query,
    params,
    text,
    usesSchema: tokens.some((t) => t.kind === "placeholder"),
    columns: reader ? resultColumns(layout, query, tokens, fail) : undefined,
  };
}

/** Refuses a FROM / JOIN / INTO / UPDATE target that is neither a layout table nor a catalog's. */
function checkTables(
  layout: SqliteLayout,
  tokens: readonly Token[],
  fail: (expected: string, found: string) => never,
): void {
  const tables = new Set([...layout.tables.map((t) => t.name), POSTGRES_VERSION_TABLE]);
  // Each open parenthesis: whether it holds a subquery (FROM inside a function call is not a table).
  const parens: boolean[] = [];
  tokens.forEach((token, i) => {
    if (token.kind === "punct" && token.value === "(") {
      const next = tokens[i + 1];
      parens.push(next?.kind === "word" && (next.value === "select" || next.value === "with"));
      return;
    }
    if (token.kind === "punct" && token.value === ")") {
      parens.pop();
      return;
    }
    if (token.kind !== "word" || !["from", "join", "into", "update"].includes(token.value)) return;
    if (parens.length > 0 && parens.at(-1) === false) return;
    const before = tokens[i - 1];
    if (before?.kind === "word" && NOT_A_TABLE_CONTEXT.has(before.value)) return;
    let j = i + 1;
    if (tokens[j]?.kind === "word" && tokens[j]?.value === "only") j++;
    const target = tokens[j];
    const after = tokens[j + 1];
    if (target === undefined) fail("a table after FROM/JOIN/INTO/UPDATE", "none");
    const name = target as Token;
    if (name.kind === "punct" && name.value === "(") return;
    const callStart = after?.kind === "punct" && after.value === "(" && after.start === name.end;
    if (name.kind === "word" && callStart) return;
    if (after?.kind === "punct" && after.value === ".") {
      if (name.kind === "word" && CATALOG_SCHEMAS.has(name.value)) return;
      fail("a layout table (only pg_catalog and information_schema may be named)", name.value);
    }
    if (name.kind !== "word" || !tables.has(name.value)) {
      fail(`a table of the layout (${[...tables].sort().join(", ")})`, show(name.value));
    }
  });
}

/**
 * The result columns of a SELECT: each item is a plain column (named and typed after the layout
 * column of that name) or carries `AS alias`; an unquoted alias must be lower case, since
 * PostgreSQL folds it (`AS "createdAt"` keeps the case). An item that ends in a cast to a known
 * type is typed by the cast (nullable); any other expression is a `PostgresScalar`.
 */
function resultColumns(
  layout: SqliteLayout,
  query: PostgresQuery,
  tokens: readonly Token[],
  fail: (expected: string, found: string) => never,
): ResultColumn[] {
  const start = tokens.findIndex((t) => t.kind === "word" && t.value === "select");
  let i = start + 1;
  if (
    tokens[i]?.kind === "word" &&
    (tokens[i]?.value === "distinct" || tokens[i]?.value === "all")
  ) {
    i++;
  }
  const items: Token[][] = [[]];
  let depth = 0;
  for (; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.kind === "punct" && token.value === "(") depth++;
    if (token.kind === "punct" && token.value === ")") depth--;
    if (depth === 0) {
      if (token.kind === "word" && SELECT_LIST_END.has(token.value)) break;
      if (token.kind === "punct" && token.value === ";") break;
      if (token.kind === "punct" && token.value === ",") {
        items.push([]);
        continue;
      }
    }
    items.at(-1)?.push(token);
  }
  const outerJoin = tokens.some(
    (t, k) =>
      t.kind === "word" &&
      ["left", "right", "full"].includes(t.value) &&
      tokens.slice(k + 1, k + 3).some((n) => n.kind === "word" && n.value === "join"),
  );
  const layoutColumns = [
    ...layout.tables.flatMap((t) =>
      t.columns.map((c) => ({
        name: c.name,
        type: c.type === "TEXT" ? "string" : "number",
        notNull: c.notNull,
      })),
    ),
    { name: "version", type: "number", notNull: true },
  ];
  const seen = new Set<string>();
  return items.map((item) => {
    if (item.length === 0) fail("a result column", "an empty select item");
    const sql = query.sql.slice((item[0] as Token).start, (item.at(-1) as Token).end);
    const aliasAt = item.length >= 3 ? item.length - 2 : -1;
    const asWord = item[aliasAt];
    let name: string;
    let body: Token[];
    if (asWord?.kind === "word" && asWord.value === "as") {
      const alias = item.at(-1) as Token;
      if (alias.kind === "word") {
        const written = query.sql.slice(alias.start, alias.end);
        if (written !== alias.value) {
          fail(
            `a quoted alias ("${written}"): PostgreSQL folds unquoted names to lower case`,
            written,
          );
        }
      } else if (alias.kind !== "quoted") {
        fail("an identifier after AS", show(sql));
      }
      name = alias.value;
      body = item.slice(0, aliasAt);
    } else {
      const plain =
        (item.length === 1 && item[0]?.kind === "word") ||
        (item.length === 3 && item[1]?.value === "." && item[2]?.kind === "word");
      if (!plain) fail("a plain column or an expression with AS alias", show(sql));
      name = (item.at(-1) as Token).value;
      body = item;
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || seen.has(name)) {
      fail("result columns with unique identifier names", show(name));
    }
    seen.add(name);
    return { name, type: columnTsType(body, layoutColumns, outerJoin) };
  });
}

const CAST_TYPES: Readonly<Record<string, string>> = {
  text: "string",
  varchar: "string",
  bigint: "number",
  int8: "number",
  integer: "number",
  int: "number",
  int4: "number",
  smallint: "number",
  boolean: "boolean",
  bool: "boolean",
};

function columnTsType(
  body: readonly Token[],
  layoutColumns: readonly { name: string; type: string; notNull: boolean }[],
  outerJoin: boolean,
): string {
  const plain =
    (body.length === 1 && body[0]?.kind === "word") ||
    (body.length === 3 && body[1]?.value === "." && body[2]?.kind === "word");
  if (plain) {
    const name = (body.at(-1) as Token).value;
    const matches = layoutColumns.filter((c) => c.name === name);
    const first = matches[0];
    if (first !== undefined && matches.every((c) => c.type === first.type)) {
      const notNull = matches.every((c) => c.notNull) && !outerJoin;
      return notNull ? first.type : `${first.type} | null`;
    }
  }
  const cast = body.at(-2);
  const type = body.at(-1);
  if (cast?.kind === "punct" && cast.value === "::" && type?.kind === "word") {
    const ts = CAST_TYPES[type.value];
    if (ts !== undefined) return `${ts} | null`;
  }
  return "PostgresScalar";
}

/**
 * The text of generated/postgres-queries.gen.ts: every statement by name (parameters rewritten to
 * `$1…`), the named parameters of each in that order, which statements hold the schema
 * placeholder, and the row type of each SELECT. Each statement passes {@link checkPostgresQuery};
 * the tests prepare every one on a real server.
 * @throws PostgresQueryError naming the query that fails.
 */
export function renderPostgresQueries(layout: SqliteLayout, text: string): string {
  const checked = parsePostgresQueries(text).map((query) => checkPostgresQuery(layout, query));
  const out: string[] = [
    "/** A value read from a result column (bigint arrives as a number: the backend parses int8). */",
    "export type PostgresScalar = string | number | boolean | null;",
    "",
    "/** A value bound to a parameter: arrays bind to `type[]` parameters. */",
    "export type PostgresParam = PostgresScalar | readonly PostgresScalar[];",
    "",
    "/**",
    ` * Every SQL statement of the PostgreSQL backend, by name (schema/${POSTGRES_QUERIES_PATH}),`,
    " * with its named parameters rewritten to `$1…` in the order of {@link POSTGRES_QUERY_PARAMS}.",
    " */",
    "export const POSTGRES_QUERIES = {",
  ];
  for (const { query, text: sql } of checked) {
    const doc = query.description.replace(/@(\w+)/g, "`@$1`");
    if (doc !== "") out.push(...jsDoc(doc, "  "));
    out.push(`  ${query.name}: ${JSON.stringify(sql)},`);
  }
  out.push(
    "} as const;",
    "",
    "/** The name of one statement of {@link POSTGRES_QUERIES}. */",
    "export type PostgresQueryName = keyof typeof POSTGRES_QUERIES;",
    "",
    "/** The named parameters of each statement (without `@`): the first binds `$1`. */",
    "export const POSTGRES_QUERY_PARAMS = {",
    ...checked.map(({ query, params }) => `  ${query.name}: ${stringList(params)},`),
    "} as const satisfies Record<PostgresQueryName, readonly string[]>;",
    "",
    "/** What a statement binds: every named parameter (null for SQL NULL). */",
    "export type PostgresQueryParams<Q extends PostgresQueryName> = {",
    "  readonly [P in (typeof POSTGRES_QUERY_PARAMS)[Q][number]]: PostgresParam;",
    "};",
    "",
    "/**",
    ` * The placeholder for the target schema in a statement (identifiers cannot be bound): the`,
    " * backend substitutes the quoted schema name in the statements listed here.",
    " */",
    `export const POSTGRES_SCHEMA_PLACEHOLDER = ${JSON.stringify(SCHEMA_PLACEHOLDER)};`,
    `export const POSTGRES_SCHEMA_QUERIES = ${stringList(
      checked.filter((c) => c.usesSchema).map((c) => c.query.name),
    )} as const satisfies readonly PostgresQueryName[];`,
    "",
    "/**",
    " * The result columns of each SELECT with the TypeScript type the generator derived for it",
    " * without a server; the tests compare them with what the server reports.",
    " */",
    "export const POSTGRES_QUERY_COLUMNS = {",
    ...checked.flatMap(({ query, columns }) =>
      columns === undefined
        ? []
        : [
            `  ${query.name}: [`,
            ...columns.map(
              (c) => `    { name: ${JSON.stringify(c.name)}, type: ${JSON.stringify(c.type)} },`,
            ),
            "  ],",
          ],
    ),
    "} as const;",
    "",
    "/** The row each SELECT returns, one member per result column. */",
    "export interface PostgresQueryRows {",
  );
  for (const { query, columns } of checked) {
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
    sources: [`schema/${POSTGRES_QUERIES_PATH}`, ...LAYOUT_SOURCES],
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

function stringList(items: readonly string[]): string {
  return `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;
}

/** A JSDoc comment for `text`, on one line when it fits in 100 columns, else wrapped by words. */
function jsDoc(text: string, indent: string): string[] {
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

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
