// The PostgreSQL named queries: schema/storage/postgres-queries.sql, checked without a server → generated/postgres-queries.gen.ts.
import { show, stringList } from "./lib/codegen-text.js";
import { generatedHeader } from "./lib/header.js";
import {
  type NamedQuery,
  NamedQueryError,
  parseNamedQueries,
  queryDocLines,
  type ResultColumn,
  rowTypeLines,
} from "./lib/named-queries.js";
import { POSTGRES_VERSION_TABLE } from "./lib/postgres-layout.js";
import {
  CHANNEL_PLACEHOLDER,
  SCHEMA_PLACEHOLDER,
  type Token,
  tokenize,
} from "./lib/postgres-tokens.js";
import { SQLITE_LAYOUT_PATH, type SqliteLayout } from "./lib/sqlite-layout.js";

// render-postgres.ts assembles the PostgreSQL files, this one among them; the header names it.
const GENERATOR = "scripts/render-postgres.ts";

/** Where the PostgreSQL named queries live, relative to the schema folder (beside the layout). */
export const POSTGRES_QUERIES_PATH = "storage/postgres-queries.sql";

/** A named query that fails a check made without a server; `query` names it. */
export class PostgresQueryError extends NamedQueryError {
  readonly code = "INVALID_POSTGRES_QUERY" as const;

  constructor(query: string, line: number, expected: string, found: string) {
    super("PostgreSQL", POSTGRES_QUERIES_PATH, query, line, expected, found);
    this.name = "PostgresQueryError";
  }
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

/** What the offline checks learn about a statement. */
interface CheckedQuery {
  readonly query: NamedQuery;
  /** The named parameters, in order of first use: `$1` is the first. */
  readonly params: readonly string[];
  /** The statement with `@name` rewritten to `$n`. */
  readonly text: string;
  /** Whether the statement holds {@link SCHEMA_PLACEHOLDER}. */
  readonly usesSchema: boolean;
  /** Whether the statement holds {@link CHANNEL_PLACEHOLDER}. */
  readonly usesChannel: boolean;
  /** The result columns of a SELECT; undefined for a statement that returns no rows. */
  readonly columns: readonly ResultColumn[] | undefined;
}

/**
 * Checks one statement as far as can be done without a server — one statement, named parameters
 * only, tables of the layout (or of pg_catalog / information_schema), result columns with unique
 * names that PostgreSQL keeps as written — and rewrites its parameters to `$1…`.
 * @throws PostgresQueryError naming the query.
 */
export function checkPostgresQuery(
  layout: SqliteLayout,
  query: NamedQuery,
  created: ReadonlySet<string> = new Set(),
  createdColumns: readonly TypedColumn[] = [],
): CheckedQuery {
  const fail = (expected: string, found: string): never => {
    throw new PostgresQueryError(query.name, query.line, expected, found);
  };
  const tokens = tokenize(query.sql, (expected, at) =>
    fail(expected, show(query.sql.slice(at, at + 16))),
  );
  const semicolon = tokens.findIndex((t) => t.kind === "punct" && t.value === ";");
  if (semicolon !== -1 && semicolon !== tokens.length - 1) {
    fail("one statement", "text after its ';'");
  }
  if (tokens.length === 0 || (tokens.length === 1 && semicolon === 0)) fail("a statement", "none");
  const ctes = commonTableExpressions(tokens, fail);
  checkTables(layout, tokens, fail, new Set([...created, ...ctes.names]));

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

  const main = tokens[ctes.main] as Token | undefined;
  const reader = main?.kind === "word" && main.value === "select";
  // RETURNING feeds the statement's own SELECT from inside a WITH query; at the top it would
  // return rows the generator does not type.
  if (
    !reader &&
    tokens.some((t, k) => t.kind === "word" && t.value === "returning" && k >= ctes.main)
  ) {
    fail("RETURNING only in a SELECT (the generator types SELECT lists only)", "RETURNING");
  }
  return {
    query,
    params,
    text,
    usesSchema: tokens.some((t) => t.kind === "placeholder" && t.value === SCHEMA_PLACEHOLDER),
    usesChannel: tokens.some((t) => t.kind === "placeholder" && t.value === CHANNEL_PLACEHOLDER),
    columns: reader
      ? resultColumns(layout, query, tokens.slice(ctes.main), fail, createdColumns)
      : undefined,
  };
}

/** Words that may open the statement a WITH list leads to. */
const MAIN_STATEMENTS = new Set(["select", "insert", "update", "delete"]);

/**
 * The WITH list that may open a statement: the names of its queries (`name AS [NOT]
 * [MATERIALIZED] ( … )`, which the statement may read like tables) and the index of the token that
 * opens the statement they lead to (0 without WITH). Its result columns are those of that
 * statement.
 */
function commonTableExpressions(
  tokens: readonly Token[],
  fail: (expected: string, found: string) => never,
): { names: Set<string>; main: number } {
  const names = new Set<string>();
  const first = tokens[0];
  if (first?.kind !== "word" || first.value !== "with") return { names, main: 0 };
  let i = 1;
  for (;;) {
    const name = tokens[i];
    if (name?.kind !== "word" || tokens[i + 1]?.value !== "as") {
      fail("a WITH query: name AS ( … )", show(name?.value ?? "none"));
    }
    names.add((name as Token).value);
    i += 2;
    while (tokens[i]?.kind === "word" && ["not", "materialized"].includes(tokens[i]?.value ?? "")) {
      i++;
    }
    if (tokens[i]?.value !== "(")
      fail("( after AS in a WITH query", show(tokens[i]?.value ?? "none"));
    let depth = 0;
    for (; i < tokens.length; i++) {
      const token = tokens[i] as Token;
      if (token.kind === "punct" && token.value === "(") depth++;
      if (token.kind === "punct" && token.value === ")" && --depth === 0) break;
    }
    i++;
    const next = tokens[i];
    if (next?.kind === "punct" && next.value === ",") {
      i++;
      continue;
    }
    if (next?.kind === "word" && MAIN_STATEMENTS.has(next.value)) return { names, main: i };
    fail("SELECT, INSERT, UPDATE or DELETE after the WITH list", show(next?.value ?? "none"));
  }
}

/**
 * The tables the file's own statements create (`CREATE TABLE IF NOT EXISTS name`): derived tables
 * outside the versioned layout (the search index), which the other statements may use.
 */
export function createdTables(queries: readonly NamedQuery[]): Set<string> {
  const names = new Set<string>();
  for (const { sql } of queries) {
    const name = /^\s*create\s+table\s+if\s+not\s+exists\s+([a-z_][a-z0-9_]*)/i.exec(sql)?.[1];
    if (name !== undefined) names.add(name.toLowerCase());
  }
  return names;
}

/**
 * The relations the file's own statements create: each `CREATE TABLE IF NOT EXISTS` table with the
 * indexes of its named constraints and of its primary key, and each `CREATE INDEX IF NOT EXISTS`.
 */
export function createdRelations(queries: readonly NamedQuery[]): string[] {
  const names: string[] = [];
  for (const { sql } of queries) {
    const table = /^\s*create\s+table\s+if\s+not\s+exists\s+([a-z_][a-z0-9_]*)/i.exec(sql)?.[1];
    if (table !== undefined) {
      names.push(table.toLowerCase());
      for (const m of sql.matchAll(/\bconstraint\s+([a-z_][a-z0-9_]*)/gi)) {
        names.push((m[1] as string).toLowerCase());
      }
      // A primary key declared on its column gets PostgreSQL's default name.
      const key = `${table.toLowerCase()}_pkey`;
      if (/\bprimary\s+key\b/i.test(sql) && !names.includes(key)) names.push(key);
    }
    const index = /^\s*create\s+index\s+if\s+not\s+exists\s+([a-z_][a-z0-9_]*)/i.exec(sql)?.[1];
    if (index !== undefined) names.push(index.toLowerCase());
  }
  return names;
}

/** A result column's name, TypeScript type and whether it may be NULL. */
export interface TypedColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
}

/** The PostgreSQL types of created tables' columns, as TypeScript types. */
const CREATED_TYPES: Readonly<Record<string, string>> = {
  text: "string",
  bigint: "number",
  integer: "number",
};

/**
 * The columns of the tables the file's own statements create (`CREATE TABLE IF NOT EXISTS`), typed
 * like layout columns: a plain result column of one of them is typed after it. A column is NOT NULL
 * when declared so or when it is the table's primary key.
 */
export function tableColumns(queries: readonly NamedQuery[]): TypedColumn[] {
  const columns: TypedColumn[] = [];
  for (const { sql } of queries) {
    if (!/^\s*create\s+table\s+if\s+not\s+exists\b/i.test(sql)) continue;
    const body = sql.slice(sql.indexOf("(") + 1, sql.lastIndexOf(")"));
    const keys = /\bprimary\s+key\s*\(([^)]*)\)/i
      .exec(body)?.[1]
      ?.split(",")
      .map((k) => k.trim());
    for (const line of body.split(/,\s*\n/)) {
      const [name, type] = line.trim().split(/\s+/);
      const ts = CREATED_TYPES[type?.toLowerCase() ?? ""];
      if (name === undefined || ts === undefined || /^(constraint|primary|unique)$/i.test(name))
        continue;
      const notNull = /\bnot\s+null\b|\bprimary\s+key\b/i.test(line) || (keys ?? []).includes(name);
      columns.push({ name: name.toLowerCase(), type: ts, notNull });
    }
  }
  return columns;
}

/** Refuses a FROM / JOIN / INTO / UPDATE target that is neither a layout table nor a catalog's. */
function checkTables(
  layout: SqliteLayout,
  tokens: readonly Token[],
  fail: (expected: string, found: string) => never,
  created: ReadonlySet<string>,
): void {
  const tables = new Set([...layout.tables.map((t) => t.name), POSTGRES_VERSION_TABLE, ...created]);
  // Each open parenthesis: whether it holds a subquery (FROM inside a function call is not a table).
  const parens: boolean[] = [];
  tokens.forEach((token, i) => {
    if (token.kind === "punct" && token.value === "(") {
      const next = tokens[i + 1];
      parens.push(
        next?.kind === "word" && (next.value === "with" || MAIN_STATEMENTS.has(next.value)),
      );
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
  query: NamedQuery,
  tokens: readonly Token[],
  fail: (expected: string, found: string) => never,
  createdColumns: readonly TypedColumn[],
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
    ...createdColumns,
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
  const queries = parseNamedQueries(text, PostgresQueryError);
  const created = createdTables(queries);
  const columns = tableColumns(queries);
  const checked = queries.map((query) => checkPostgresQuery(layout, query, created, columns));
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
    out.push(...queryDocLines(query), `  ${query.name}: ${JSON.stringify(sql)},`);
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
    " * The placeholder for the schema's change channel (LISTEN takes an identifier, not a",
    " * parameter): the backend substitutes the quoted channel name in the statements listed here.",
    " */",
    `export const POSTGRES_CHANNEL_PLACEHOLDER = ${JSON.stringify(CHANNEL_PLACEHOLDER)};`,
    "/**",
    " * The relations the file's own statements create — tables (`CREATE TABLE IF NOT EXISTS`),",
    " * their named constraints' indexes and `CREATE INDEX IF NOT EXISTS` indexes: the catalog,",
    " * the titles table and the search index, outside the versioned layout.",
    " */",
    `export const POSTGRES_CREATED_RELATIONS = ${stringList(createdRelations(queries))} as const;`,
    "",
    `export const POSTGRES_CHANNEL_QUERIES = ${stringList(
      checked.filter((c) => c.usesChannel).map((c) => c.query.name),
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
    if (columns !== undefined) out.push(...rowTypeLines(query.name, columns));
  }
  out.push("}");
  const header = generatedHeader({
    generator: GENERATOR,
    sources: [`schema/${POSTGRES_QUERIES_PATH}`, `schema/${SQLITE_LAYOUT_PATH}`],
    comment: "//",
  });
  return `${header}${out.join("\n")}\n`;
}
