// The PostgreSQL catalog (derived: summaries, search index) and titles table beside the canonical layout: made when missing, the catalog rebuilt from the logs.
import type { ClientBase } from "pg";
import { POSTGRES_CREATED_RELATIONS } from "../../generated.js";
import { titlesRefusal } from "../sql/layout-direction.js";
import { titleOfData } from "../sql/summary-rows.js";
import { advisoryKey, type PostgresTarget } from "./connection.js";
import { POSTGRES_CATALOG_VERSION, POSTGRES_TITLES_VERSION, type Queries } from "./statements.js";

/** The relations outside the canonical layout: what the queries file's own statements create. */
const OUTSIDE_LAYOUT: ReadonlySet<string> = new Set(POSTGRES_CREATED_RELATIONS);

/**
 * Whether a relation lies outside the canonical layout: the catalog's, the search index's (which
 * the catalog comprises), the titles table's. The layout policy judges the layout without them.
 */
export function isOutsideLayout(name: string): boolean {
  return OUTSIDE_LAYOUT.has(name);
}

/**
 * Refuses a titles table of another version, with reads only (reject, never migrate: nothing is
 * written). None yet is fine: {@link openCatalog} makes it.
 * @throws StorageError FORMAT_UNSUPPORTED naming the schema, the version found and this build's.
 */
export async function checkTitlesVersion(
  client: ClientBase,
  queries: Queries,
  target: PostgresTarget,
): Promise<void> {
  if ((await queries.first(client, "titlesExists", {})) === undefined) return;
  const versions = (await queries.rows(client, "titlesVersions", {})).map((r) => Number(r.version));
  const where = `in ${target.location}`;
  const refusal = titlesRefusal(versions, POSTGRES_TITLES_VERSION, where, target.location);
  if (refusal !== undefined) throw refusal;
}

/** What {@link openCatalog} found and did. */
export type CatalogOpen = "kept" | "refreshed" | "rebuilt";

/**
 * Makes the titles table when missing and brings the catalog up to date with the logs: rebuilt
 * (its tables and the search index dropped and made anew, every summary from its log) when it is
 * missing or of another version, and the summaries of sessions another build wrote (missing, or
 * behind their log) made anew. Looks first with reads only; what needs writing runs in one
 * transaction under the schema's creation lock, looking again under it. The search index is made
 * after, by the caller (ensureSearchIndex). Nothing here refuses a store: the catalog is derived.
 */
export async function openCatalog(
  client: ClientBase,
  queries: Queries,
  target: PostgresTarget,
): Promise<CatalogOpen> {
  if (
    (await queries.first(client, "titlesExists", {})) !== undefined &&
    (await catalogState(client, queries)) === "current" &&
    (await queries.rows(client, "staleSummaries", {})).length === 0
  ) {
    return "kept";
  }
  await queries.run(client, "beginWrite", {});
  try {
    await queries.rows(client, "lockLayoutCreation", {
      key: advisoryKey("seedline-layout", target.schema),
    });
    if ((await queries.first(client, "titlesExists", {})) === undefined) {
      await queries.run(client, "createTitlesVersion", {});
      await queries.run(client, "createSessionTitles", {});
      await queries.run(client, "stampTitles", { version: POSTGRES_TITLES_VERSION });
    }
    let done: CatalogOpen;
    if ((await catalogState(client, queries)) === "current") {
      for (const { sessionId } of await queries.rows(client, "staleSummaries", {})) {
        await refreshSummary(client, queries, String(sessionId));
      }
      done = "refreshed";
    } else {
      await queries.run(client, "dropCatalog", {});
      await queries.run(client, "createCatalogVersion", {});
      await queries.run(client, "createCatalogSummaries", {});
      await queries.run(client, "createCatalogByActivity", {});
      await queries.run(client, "stampCatalog", { version: POSTGRES_CATALOG_VERSION });
      await queries.run(client, "fillSummaries", {});
      for (const row of await queries.rows(client, "firstUserMessages", {})) {
        const derivedTitle = titleOfData(row.data);
        await queries.run(client, "setDerivedTitle", { sessionId: row.sessionId, derivedTitle });
      }
      done = "rebuilt";
    }
    await queries.run(client, "commit", {});
    return done;
  } catch (error) {
    await queries.run(client, "rollback", {}).catch(() => {
      // The connection is gone; the server rolled back. The error above is what callers hear.
    });
    throw error;
  }
}

async function catalogState(
  client: ClientBase,
  queries: Queries,
): Promise<"current" | "absent" | "other"> {
  if ((await queries.first(client, "catalogExists", {})) === undefined) return "absent";
  const versions = (await queries.rows(client, "catalogVersions", {})).map((r) =>
    Number(r.version),
  );
  return versions.length === 1 && versions[0] === POSTGRES_CATALOG_VERSION ? "current" : "other";
}

/**
 * Makes one session's summary anew from its log, inside the caller's transaction: after a fork's
 * copy, a repair, or when the catalog found it stale.
 */
export async function refreshSummary(
  client: ClientBase,
  queries: Queries,
  sessionId: string,
): Promise<void> {
  const first = await queries.first(client, "firstUserMessage", { sessionId });
  const derivedTitle = first === undefined ? null : titleOfData(String(first.data));
  await queries.run(client, "refreshSummary", { sessionId, derivedTitle });
}
