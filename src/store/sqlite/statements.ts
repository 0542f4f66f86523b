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

/** The named parameters of statement `name`. */
export function paramsOf(name: SqliteQueryName): readonly string[] {
  return SQLITE_QUERY_PARAMS[name];
}
