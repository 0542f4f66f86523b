// The storage layout document (schema/storage/sqlite-layout.json) both dialects render: its shape, validation and SQLite DDL.
import type { AnySchemaObject, ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import bundledLayoutSchema from "../../schema/storage/sqlite-layout.schema.json" with {
  type: "json",
};
import { camelCase, pathOf, show, stringList, valueAt } from "./codegen-text.js";
import { type SchemaSet, schemaFile } from "./schema-set.js";

// The shape that schema/storage/sqlite-layout.schema.json states; that schema is not one of the
// type-generated ones, so its (validated) shape is mirrored here for the renderers.
export type SqliteColumnType = "TEXT" | "INTEGER";
export type SqliteSynchronous = "normal" | "full" | "extra";

export interface SqliteLayout {
  readonly version: number;
  readonly description: string;
  readonly catalog: SqlitePart;
  readonly titles: SqlitePart;
  readonly pragmas: SqlitePragmas;
  readonly tables: readonly SqliteTable[];
}

/** A versioned part of the store outside the canonical layout (the catalog, the titles table). */
export interface SqlitePart {
  readonly version: number;
  readonly description: string;
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

/** A layout that a dialect refuses; `path` is a JSON pointer into the layout document. */
export abstract class LayoutError extends Error {
  abstract readonly code: string;
  readonly path: string;

  constructor(dialect: string, path: string, expected: string, found: string) {
    super(`invalid ${dialect} layout at ${path}: expected ${expected}, found ${found}`);
    this.path = path;
  }
}

/** A layout document that fails its schema or a semantic rule. */
export class SqliteLayoutError extends LayoutError {
  readonly code = "INVALID_SQLITE_LAYOUT" as const;

  constructor(path: string, expected: string, found: string) {
    super("SQLite", path, expected, found);
    this.name = "SqliteLayoutError";
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

/**
 * Validates the layout document of `set` against the layout schema in the same set.
 * @throws SqliteLayoutError when the document is invalid; Error when a file is missing.
 */
export function readSqliteLayout(set: SchemaSet): SqliteLayout {
  return validateSqliteLayout(
    schemaFile(set, SQLITE_LAYOUT_PATH),
    schemaFile(set, SQLITE_LAYOUT_SCHEMA_PATH),
  );
}

/** The member a column stores in the generated name tables: its `field`, else its camelCase name. */
export function columnKey(column: SqliteColumn): string {
  return column.field ?? camelCase(column.name);
}

/** The entries of a generated `…_TABLES` constant: per table its name, columns by key, key and JSON columns. */
export function tableNameMembers(layout: SqliteLayout): string[] {
  return layout.tables.flatMap((table) => [
    `  ${camelCase(table.name)}: {`,
    `    name: ${JSON.stringify(table.name)},`,
    "    columns: {",
    ...table.columns.map((column) => `      ${columnKey(column)}: ${JSON.stringify(column.name)},`),
    "    },",
    `    primaryKey: ${stringList(table.primaryKey)},`,
    `    jsonColumns: ${stringList(table.columns.filter((c) => c.encoding === "json").map((c) => c.name))},`,
    "  },",
  ]);
}

/** The DDL statements without the header: tables, indexes, then the user_version stamp. */
export function sqliteDdlBody(layout: SqliteLayout): string {
  const statements: string[] = [];
  for (const table of layout.tables) {
    const lines = table.columns.map((column) => `  ${columnDefinition(column, column.type)}`);
    lines.push(`  PRIMARY KEY (${table.primaryKey.join(", ")})`);
    statements.push(
      `CREATE TABLE ${table.name} (\n${lines.join(",\n")}\n)${table.strict ? " STRICT" : ""};`,
    );
  }
  const indexes = indexStatements(layout);
  if (indexes.length > 0) statements.push(indexes.join("\n"));
  statements.push(`PRAGMA user_version = ${layout.version};`);
  return `${statements.join("\n\n")}\n`;
}

/** The `CREATE INDEX` statements of the layout, table by table; both dialects write them alike. */
export function indexStatements(layout: SqliteLayout): string[] {
  return layout.tables.flatMap((table) =>
    table.indexes.map((index) => {
      const keys = index.columns.map((c) => `${c.name} ${c.order}`).join(", ");
      return `CREATE INDEX ${index.name} ON ${table.name} (${keys});`;
    }),
  );
}

/** A column of a `CREATE TABLE` statement, with the dialect's name for its type. */
export function columnDefinition(column: SqliteColumn, type: string): string {
  const parts = [column.name, type];
  if (column.notNull) parts.push("NOT NULL");
  const ref = column.references;
  if (ref !== undefined) {
    parts.push(`REFERENCES ${ref.table} (${ref.column})`);
    if (ref.onDelete !== undefined) parts.push(`ON DELETE ${ref.onDelete}`);
  }
  return parts.join(" ");
}
