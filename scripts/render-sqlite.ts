// Renders the SQLite files of the storage layout: the DDL (.gen.sql), the layout module and the named-queries module.
import { jsDoc, pascalCase } from "./lib/codegen-text.js";
import { generatedHeader } from "./lib/header.js";
import type { SchemaSet } from "./lib/schema-set.js";
import {
  readSqliteLayout,
  SQLITE_LAYOUT_PATH,
  type SqliteLayout,
  sqliteDdlBody,
  tableNameMembers,
} from "./lib/sqlite-layout.js";
import { readSqliteQueries, renderSqliteQueries } from "./render-sqlite-queries.js";

const GENERATOR = "scripts/render-sqlite.ts";
const SOURCES = [`schema/${SQLITE_LAYOUT_PATH}`];

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
      "The catalog's version (the one row of `catalog_version`): derived data, rebuilt from the logs when the row holds another.",
      "",
    ),
    `export const SQLITE_CATALOG_VERSION = ${layout.catalog.version} as const;`,
    "",
    ...jsDoc(
      "The titles table's version (the one row of `titles_version`): explicit titles, another version refused untouched.",
      "",
    ),
    `export const SQLITE_TITLES_VERSION = ${layout.titles.version} as const;`,
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
    ...tableNameMembers(layout),
    "} as const;",
  );
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
  const layout = readSqliteLayout(set);
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
