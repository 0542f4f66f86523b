// The PostgreSQL rendering of the storage layout: its DDL, the version table, and the relations a current schema holds.
import {
  columnDefinition,
  indexStatements,
  LayoutError,
  type SqliteColumn,
  type SqliteLayout,
  type SqliteTable,
} from "./sqlite-layout.js";

/**
 * The table that records the layout version of a PostgreSQL schema (one row), in place of
 * SQLite's `PRAGMA user_version`. It is part of the generated layout, not of the layout document,
 * because SQLite does not have it.
 */
export const POSTGRES_VERSION_TABLE = "seedline_layout";

/** PostgreSQL truncates longer identifiers silently; the generated names must stay below it. */
const MAX_IDENTIFIER = 63;

/** A valid layout document that has no PostgreSQL rendering. */
export class PostgresRenderError extends LayoutError {
  readonly code = "INVALID_POSTGRES_LAYOUT" as const;

  constructor(path: string, expected: string, found: string) {
    super("PostgreSQL", path, expected, found);
    this.name = "PostgresRenderError";
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
    const lines = table.columns.map(
      (column) => `  ${columnDefinition(column, columnType(column))}`,
    );
    lines.push(
      `  CONSTRAINT ${primaryKeyName(table)} PRIMARY KEY (${table.primaryKey.join(", ")})`,
    );
    statements.push(`CREATE TABLE ${table.name} (\n${lines.join(",\n")}\n);`);
  }
  const indexes = indexStatements(layout);
  if (indexes.length > 0) statements.push(indexes.join("\n"));
  statements.push(
    `CREATE TABLE ${POSTGRES_VERSION_TABLE} (\n  version integer NOT NULL,\n  CONSTRAINT ${POSTGRES_VERSION_TABLE}_pkey PRIMARY KEY (version)\n);`,
    `INSERT INTO ${POSTGRES_VERSION_TABLE} (version) VALUES (${layout.version});`,
  );
  return `${statements.join("\n\n")}\n`;
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
