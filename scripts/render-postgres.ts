// Renders the PostgreSQL files of the storage layout: the DDL (.gen.sql), the layout module and the named-queries module.
import { jsDoc } from "./lib/codegen-text.js";
import { generatedHeader } from "./lib/header.js";
import { readNamedQueries } from "./lib/named-queries.js";
import {
  POSTGRES_VERSION_TABLE,
  postgresDdlBody,
  postgresLayoutObjects,
} from "./lib/postgres-layout.js";
import type { SchemaSet } from "./lib/schema-set.js";
import {
  readSqliteLayout,
  SQLITE_LAYOUT_PATH,
  type SqliteLayout,
  tableNameMembers,
} from "./lib/sqlite-layout.js";
import { POSTGRES_QUERIES_PATH, renderPostgresQueries } from "./render-postgres-queries.js";

const GENERATOR = "scripts/render-postgres.ts";
const LAYOUT_SOURCES = [`schema/${SQLITE_LAYOUT_PATH}`];

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
    `/** The catalog's version (the one row of \`catalog_version\`): derived data, rebuilt from the logs when the row holds another. */`,
    `export const POSTGRES_CATALOG_VERSION = ${layout.catalog.version} as const;`,
    "",
    `/** The titles table's version (the one row of \`titles_version\`): explicit titles, another version refused untouched. */`,
    `export const POSTGRES_TITLES_VERSION = ${layout.titles.version} as const;`,
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
    ...tableNameMembers(layout),
    "} as const;",
  ];
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
  const layout = readSqliteLayout(set);
  const files = [
    { path: "postgres-layout.gen.sql", content: renderPostgresDdl(layout) },
    { path: "postgres-layout.gen.ts", content: renderPostgresModule(layout) },
  ];
  const text = readNamedQueries(set, POSTGRES_QUERIES_PATH);
  if (text !== undefined) {
    files.push({ path: "postgres-queries.gen.ts", content: renderPostgresQueries(layout, text) });
  }
  return files;
}
