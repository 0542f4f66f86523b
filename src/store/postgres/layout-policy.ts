// The layout version policy of PostgreSQL schemas: layout 4 or nothing, reject never migrate — decided before anything is written.
import type { ClientBase, Pool, PoolClient } from "pg";
import { StorageError, show } from "../../errors.js";
import { layoutDirection } from "../sql/layout-direction.js";
import { checkTitlesVersion, isOutsideLayout, openCatalog } from "./catalog.js";
import { advisoryKey, type PostgresTarget } from "./connection.js";
import { connectionLost, isConnectionLoss, refusedByServer, unreachable } from "./pg-errors.js";
import { ensureSearchIndex } from "./search-index.js";
import {
  POSTGRES_DDL,
  POSTGRES_LAYOUT_OBJECTS,
  POSTGRES_LAYOUT_VERSION,
  POSTGRES_VERSION_TABLE,
  type PostgresQueryRows,
  type Queries,
} from "./statements.js";

/** What a look at the target schema found: nothing of anyone's yet, or layout 4. */
export type SchemaState = "new" | "current";

type SchemaObject = PostgresQueryRows["layoutObjects"];

/** The columns of the version table in every layout, past and future: how a store of ours is told. */
const VERSION_TABLE = POSTGRES_LAYOUT_OBJECTS.find((o) => o.name === POSTGRES_VERSION_TABLE);

/**
 * Looks at the target schema with catalog reads only and decides whether this build may use it.
 * No schema, or an empty one, is new; a schema whose version record holds the current layout
 * version and whose relations are exactly the generated layout's is current.
 * @throws StorageError FORMAT_UNSUPPORTED (another layout version, or relations without a version
 *   record: not a seedline store), CORRUPT_LOG (not exactly one version record, or the current
 *   version with other relations).
 */
export async function inspectSchema(
  client: ClientBase,
  queries: Queries,
  target: PostgresTarget,
): Promise<SchemaState> {
  // The catalog and the titles table lie outside the layout (catalog.ts).
  const objects = (await queries.rows(client, "layoutObjects", { schema: target.schema })).filter(
    (o) => !isOutsideLayout(String(o.name)),
  );
  if (objects.length === 0) return "new";
  const record = objects.find((o) => o.kind === "r" && o.name === POSTGRES_VERSION_TABLE);
  if (record === undefined || record.columns !== VERSION_TABLE?.columns) {
    const names = objects.map((o) => o.name);
    throw new StorageError(
      "FORMAT_UNSUPPORTED",
      `expected an empty schema or seedline layout ${POSTGRES_LAYOUT_VERSION} in ${target.location}, found relations that are not seedline's (${show(names)}) and no layout record in table ${POSTGRES_VERSION_TABLE}; it is not a seedline store`,
      { found: 0, supported: POSTGRES_LAYOUT_VERSION, location: target.location },
    );
  }
  const versions = await queries.rows(client, "layoutVersions", {});
  const [only, ...more] = versions;
  if (only === undefined || more.length > 0) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected one layout record in table ${POSTGRES_VERSION_TABLE} of ${target.location}, found ${show(versions.map((v) => v.version))}`,
      { location: target.location },
    );
  }
  if (only.version !== POSTGRES_LAYOUT_VERSION) throw unsupportedLayout(target, only.version);
  if (!sameObjects(objects, POSTGRES_LAYOUT_OBJECTS)) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected the tables and indexes of layout ${POSTGRES_LAYOUT_VERSION} (${show(POSTGRES_LAYOUT_OBJECTS.map((o) => o.name))}) in ${target.location}, found ${show(objects.map((o) => o.name))}`,
      { location: target.location },
    );
  }
  await checkTitlesVersion(client, queries, target);
  return "current";
}

/**
 * Creates the schema (when missing) and the layout with its version record in one transaction,
 * after taking a transaction-scoped advisory lock on the schema and looking again: another process
 * may have created it meanwhile, which is fine when it created the current layout.
 * @throws StorageError as {@link inspectSchema}.
 */
export async function createLayout(
  client: ClientBase,
  queries: Queries,
  target: PostgresTarget,
): Promise<void> {
  await queries.run(client, "beginWrite", {});
  try {
    await queries.rows(client, "lockLayoutCreation", {
      key: advisoryKey("seedline-layout", target.schema),
    });
    const state = await inspectSchema(client, queries, target);
    if (state === "new") {
      await queries.run(client, "createSchema", {});
      await client.query(POSTGRES_DDL);
    }
    await queries.run(client, "commit", {});
  } catch (error) {
    await queries.run(client, "rollback", {}).catch(() => {
      // The connection is gone; the server rolled back. The error above is what callers hear.
    });
    throw error;
  }
}

function unsupportedLayout(target: PostgresTarget, version: number): StorageError {
  const direction = layoutDirection(version, POSTGRES_LAYOUT_VERSION);
  return new StorageError(
    "FORMAT_UNSUPPORTED",
    `expected PostgreSQL layout version ${POSTGRES_LAYOUT_VERSION} in ${target.location}, found ${version}: ${direction}`,
    { found: version, supported: POSTGRES_LAYOUT_VERSION, location: target.location },
  );
}

function sameObjects(
  found: readonly SchemaObject[],
  expected: readonly { kind: string; name: string; columns: string }[],
): boolean {
  const key = (o: { kind: string | null; name: string | null; columns: string | null }) =>
    `${o.kind}\0${o.name}\0${o.columns}`;
  const a = found.map(key).sort();
  const b = expected.map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/**
 * Runs the version policy on the first connection of a new pool, with catalog reads only: a
 * missing or empty schema gets the generated layout and its version record (in one transaction,
 * creators serialized by an advisory lock); any other layout version is refused and nothing is
 * written (reject, never migrate). Then the search index's relations, and a check that the
 * connections run with the schema as their search_path. On any failure the pool is ended.
 * @throws StorageError INVALID_PARAMS (the search_path did not hold), FORMAT_UNSUPPORTED,
 *   CORRUPT_LOG; StorageUnavailableError when the server cannot be reached.
 */
export async function prepareStore(
  pool: Pool,
  queries: Queries,
  target: PostgresTarget,
): Promise<void> {
  let client: PoolClient | undefined;
  try {
    try {
      client = await pool.connect();
    } catch (error) {
      throw unreachable(error, target.location);
    }
    const state = await inspectSchema(client, queries, target);
    if (state !== "current") await createLayout(client, queries, target);
    await openCatalog(client, queries, target);
    await ensureSearchIndex(client, queries, target.schema);
    const settings = await queries.first(client, "connectionSettings", {});
    if (settings?.currentSchema !== target.schema) {
      throw new StorageError(
        "INVALID_PARAMS",
        `expected the connections to ${target.location} to run with search_path ${target.schema} (a startup option), got ${show(settings?.currentSchema)}: connect directly or through a pooler that passes startup options`,
        { errors: [{ instancePath: "/store", message: "expected startup options to hold" }] },
      );
    }
    client.release();
  } catch (error) {
    client?.release(true);
    await pool.end();
    if (isConnectionLoss(error)) throw connectionLost(error, target.location, "open it", false);
    throw refusedByServer(error, target.location);
  }
}
