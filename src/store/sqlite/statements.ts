// The SQLite backend's only way to SQL: the generated named queries, prepared once per connection.
import type Database from "better-sqlite3";
import {
  SQLITE_QUERIES,
  SQLITE_QUERY_PARAMS,
  type SqliteQueryName,
  type SqliteQueryParams,
  type SqliteQueryRows,
  type SqliteScalar,
} from "../../generated.js";

/** A statement that returns rows. */
export type ReaderName = keyof SqliteQueryRows;
/** A statement that changes the database (or the transaction state) and returns no rows. */
export type WriterName = Exclude<SqliteQueryName, ReaderName>;

export type { SqliteQueryParams, SqliteQueryRows, SqliteScalar };

/**
 * The named queries of schema/storage/sqlite-queries.sql prepared on one connection. Preparing
 * happens lazily, once per statement: a read-only connection only prepares what it reads.
 */
export class Statements {
  readonly #db: Database.Database;
  readonly #prepared = new Map<SqliteQueryName, Database.Statement>();
  readonly #raw = new Map<SqliteQueryName, Database.Statement>();
  readonly #repeated = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /** The first row of a reading statement, or undefined. */
  get<Q extends ReaderName>(name: Q, params: SqliteQueryParams<Q>): SqliteQueryRows[Q] | undefined {
    return this.#statement(name).get(params) as SqliteQueryRows[Q] | undefined;
  }

  /** Every row of a reading statement. */
  all<Q extends ReaderName>(name: Q, params: SqliteQueryParams<Q>): SqliteQueryRows[Q][] {
    return this.#statement(name).all(params) as SqliteQueryRows[Q][];
  }

  /**
   * The rows of a reading statement one at a time (the connection is busy until the iteration
   * ends: run nothing else meanwhile).
   */
  iterate<Q extends ReaderName>(
    name: Q,
    params: SqliteQueryParams<Q>,
  ): IterableIterator<SqliteQueryRows[Q]> {
    return this.#statement(name).iterate(params) as IterableIterator<SqliteQueryRows[Q]>;
  }

  /**
   * The rows of a reading statement one at a time as arrays of values, in the order of
   * {@link columnsOf} (cheaper than objects for many rows; the connection is busy until the
   * iteration ends).
   */
  iterateValues<Q extends ReaderName>(
    name: Q,
    params: SqliteQueryParams<Q>,
  ): IterableIterator<unknown[]> {
    let statement = this.#raw.get(name);
    if (statement === undefined) {
      // A statement of its own: raw mode is a property of the prepared statement.
      statement = this.#db.prepare(SQLITE_QUERIES[name]).raw(true);
      this.#raw.set(name, statement);
    }
    return statement.iterate(params) as IterableIterator<unknown[]>;
  }

  /** The names of the columns a reading statement returns, in order. */
  columnsOf(name: ReaderName): string[] {
    return this.#statement(name)
      .columns()
      .map((column) => column.name);
  }

  /** Runs a writing statement; returns how many rows it changed. */
  run<Q extends WriterName>(name: Q, params: SqliteQueryParams<Q>): number {
    return this.#statement(name).run(params).changes;
  }

  /**
   * Runs an insert of one VALUES row with that row repeated `rows` times (see
   * {@link repeatedRowsSql}), its parameters bound by position: the first row's in
   * {@link rowParams} order, then the next row's. One call into SQLite for many rows costs less
   * than one per row. Like any statement, it changes nothing when it fails.
   * @returns how many rows it changed.
   */
  runRepeated(name: RowInsertName, rows: number, values: readonly SqliteScalar[]): number {
    const key = `${name}*${rows}`;
    let statement = this.#repeated.get(key);
    if (statement === undefined) {
      statement = this.#db.prepare(repeatedRowsSql(SQLITE_QUERIES[name], rows));
      this.#repeated.set(key, statement);
    }
    return statement.run(values).changes;
  }

  #statement(name: SqliteQueryName): Database.Statement {
    let statement = this.#prepared.get(name);
    if (statement === undefined) {
      statement = this.#db.prepare(SQLITE_QUERIES[name]);
      this.#prepared.set(name, statement);
    }
    return statement;
  }
}

/**
 * The parameters of statement `name` taken from the members of `source` of the same names
 * (absent members bind NULL), so that no caller restates a parameter list.
 */
export function paramsFrom<Q extends SqliteQueryName>(
  name: Q,
  source: object,
): SqliteQueryParams<Q> {
  const record = source as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  for (const param of SQLITE_QUERY_PARAMS[name]) params[param] = record[param] ?? null;
  return params as SqliteQueryParams<Q>;
}

/** The inserts of one VALUES row that {@link Statements.runRepeated} repeats. */
export type RowInsertName = Extract<WriterName, "insertEvent">;

/** `INSERT … VALUES (…)` as the generated SQL gives it: the statement up to VALUES, and its row. */
const ROW_INSERT = /^(INSERT\b[\s\S]*\bVALUES\s*)(\([^()]*\))\s*;?\s*$/;

/**
 * The named parameters of an `INSERT … VALUES (…)` statement in the order its row names them:
 * the order {@link Statements.runRepeated} binds them in.
 * @throws Error when the statement is not such an insert.
 */
export function rowParams(sql: string): string[] {
  return [...rowInsert(sql).row.matchAll(/@(\w+)/g)].map((match) => match[1] as string);
}

/**
 * An `INSERT … VALUES (…)` statement with its row repeated `rows` times, each named parameter a
 * `?` bound by position (see {@link rowParams}).
 * @throws Error when the statement is not such an insert, or `rows` is not a positive integer.
 */
export function repeatedRowsSql(sql: string, rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 1) {
    throw new Error(`expected a positive whole number of rows, got ${rows}`);
  }
  const { head, row } = rowInsert(sql);
  const positional = row.replace(/@\w+/g, "?");
  return `${head}${Array.from({ length: rows }, () => positional).join(", ")};`;
}

function rowInsert(sql: string): { head: string; row: string } {
  const match = ROW_INSERT.exec(sql.trim());
  if (match === null) {
    throw new Error(`expected an INSERT of one VALUES row, got ${JSON.stringify(sql)}`);
  }
  return { head: match[1] as string, row: match[2] as string };
}

/** The named parameters of statement `name`. */
export function paramsOf(name: SqliteQueryName): readonly string[] {
  return SQLITE_QUERY_PARAMS[name];
}
