// The PostgreSQL backend's only way to SQL: the generated named queries, prepared per connection.
import { type ClientBase, escapeIdentifier, type QueryArrayConfig } from "pg";
import {
  POSTGRES_CHANNEL_PLACEHOLDER,
  POSTGRES_CHANNEL_QUERIES,
  POSTGRES_QUERIES,
  POSTGRES_QUERY_PARAMS,
  POSTGRES_SCHEMA_PLACEHOLDER,
  POSTGRES_SCHEMA_QUERIES,
  type PostgresParam,
  type PostgresQueryName,
  type PostgresQueryParams,
  type PostgresQueryRows,
} from "../../generated.js";
import { changeChannel } from "./connection.js";

export {
  POSTGRES_CATALOG_VERSION,
  POSTGRES_DDL,
  POSTGRES_LAYOUT_OBJECTS,
  POSTGRES_LAYOUT_VERSION,
  POSTGRES_TABLES,
  POSTGRES_TITLES_VERSION,
  POSTGRES_VERSION_TABLE,
} from "../../generated.js";
export type { PostgresQueryParams, PostgresQueryRows };
export { POSTGRES_QUERY_PARAMS };

/** A statement that returns rows. */
export type ReaderName = keyof PostgresQueryRows;
/** A statement that changes the database (or the transaction state) and returns no rows. */
export type WriterName = Exclude<PostgresQueryName, ReaderName>;

/**
 * The named queries of schema/storage/postgres-queries.sql for one schema and its change channel
 * ({@link changeChannel}). A statement with parameters, or one that returns rows, runs as a named
 * prepared statement (parsed once per connection); the others (BEGIN, COMMIT, CREATE SCHEMA,
 * LISTEN…) run as simple queries.
 */
export class Queries {
  readonly #texts: Readonly<Record<PostgresQueryName, string>>;
  /** The schema's LISTEN/NOTIFY channel, as notifyChange binds it. */
  readonly channel: string;

  constructor(schema: string) {
    this.channel = changeChannel(schema);
    const texts: Record<string, string> = { ...POSTGRES_QUERIES };
    for (const name of POSTGRES_CHANNEL_QUERIES) {
      texts[name] = POSTGRES_QUERIES[name].replaceAll(
        POSTGRES_CHANNEL_PLACEHOLDER,
        escapeIdentifier(this.channel),
      );
    }
    for (const name of POSTGRES_SCHEMA_QUERIES) {
      texts[name] = POSTGRES_QUERIES[name].replaceAll(
        POSTGRES_SCHEMA_PLACEHOLDER,
        escapeIdentifier(schema),
      );
    }
    this.#texts = texts as Record<PostgresQueryName, string>;
  }

  /** Every row of a reading statement. */
  async rows<Q extends ReaderName>(
    client: ClientBase,
    name: Q,
    params: PostgresQueryParams<Q>,
  ): Promise<PostgresQueryRows[Q][]> {
    const result = await client.query({
      name: `seedline_${name}`,
      text: this.#texts[name],
      values: valuesOf(name, params),
    });
    return result.rows as PostgresQueryRows[Q][];
  }

  /**
   * Every row of a reading statement as an array of values, with the names of its columns in
   * order (cheaper than row objects for many rows).
   */
  async valueRows<Q extends ReaderName>(
    client: ClientBase,
    name: Q,
    params: PostgresQueryParams<Q>,
  ): Promise<{ rows: unknown[][]; columns: string[] }> {
    const result = await client.query(this.#valueRowsConfig(name, params));
    return { rows: result.rows as unknown[][], columns: result.fields.map((field) => field.name) };
  }

  /** A reading statement whose rows come as arrays of values (see {@link valueRows}). */
  #valueRowsConfig<Q extends ReaderName>(
    name: Q,
    params: PostgresQueryParams<Q>,
  ): QueryArrayConfig<PostgresParam[]> {
    return {
      // A statement name of its own: the row mode is fixed when the statement is prepared.
      name: `seedline_${name}_values`,
      text: this.#texts[name],
      values: valuesOf(name, params),
      rowMode: "array",
    };
  }

  /** The first row of a reading statement, or undefined. */
  async first<Q extends ReaderName>(
    client: ClientBase,
    name: Q,
    params: PostgresQueryParams<Q>,
  ): Promise<PostgresQueryRows[Q] | undefined> {
    return (await this.rows(client, name, params))[0];
  }

  /** Runs a writing statement; returns how many rows it changed. */
  async run<Q extends WriterName>(
    client: ClientBase,
    name: Q,
    params: PostgresQueryParams<Q>,
  ): Promise<number> {
    const values = valuesOf(name, params);
    const text = this.#texts[name];
    const result =
      values.length === 0
        ? await client.query(text)
        : await client.query({ name: `seedline_${name}`, text, values });
    return result.rowCount ?? 0;
  }
}

/** The values of `params` in the order `$1…` binds them; absent members bind NULL. */
function valuesOf(name: PostgresQueryName, params: object): PostgresParam[] {
  const record = params as Record<string, PostgresParam | undefined>;
  return POSTGRES_QUERY_PARAMS[name].map((param) => record[param] ?? null);
}

/**
 * The parameters of statement `name` taken from the members of `source` of the same names
 * (absent members bind NULL), so that no caller restates a parameter list.
 */
export function paramsFrom<Q extends PostgresQueryName>(
  name: Q,
  source: object,
): PostgresQueryParams<Q> {
  const record = source as Record<string, PostgresParam | undefined>;
  const params: Record<string, PostgresParam> = {};
  for (const param of POSTGRES_QUERY_PARAMS[name]) params[param] = record[param] ?? null;
  return params as PostgresQueryParams<Q>;
}
