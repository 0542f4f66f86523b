// The SQLite catalog (derived: summaries, search index) and titles table beside the canonical layout: made when missing, the catalog rebuilt from the logs.
import type Database from "better-sqlite3";
import {
  SQLITE_CATALOG_VERSION,
  SQLITE_CREATED_TABLES,
  SQLITE_TITLES_VERSION,
} from "../../generated.js";
import { titlesRefusal } from "../sql/layout-direction.js";
import { titleOfData } from "../sql/summary-rows.js";
import type { Statements } from "./statements.js";

/**
 * Whether a schema object (by the name of its table) lies outside the canonical layout: a table the
 * queries file's own statements create — the catalog's, the search index's (which the catalog
 * comprises), the titles table's — or a shadow table of one (FTS5 names them `<table>_…`). The
 * version policy judges the layout without them.
 */
export function isOutsideLayout(tableName: string): boolean {
  return SQLITE_CREATED_TABLES.some((t) => tableName === t || tableName.startsWith(`${t}_`));
}

/**
 * Refuses a titles table of another version, on the read-only look before anything is written
 * (reject, never migrate: the store is left untouched). None yet is fine: the open makes it.
 * @throws StorageError FORMAT_UNSUPPORTED naming the file, the version found and this build's.
 */
export function checkTitlesVersion(statements: Statements, path: string): void {
  if (statements.get("titlesExists", {}) === undefined) return;
  const versions = statements.all("titlesVersions", {}).map((r) => r.version);
  const refusal = titlesRefusal(versions, SQLITE_TITLES_VERSION, `at ${path}`, path);
  if (refusal !== undefined) throw refusal;
}

/** What {@link openCatalog} found and did, for diagnostics and the tests that prove a rebuild. */
export interface CatalogOpen {
  /** `kept`: current and fresh; `refreshed`: summaries made anew; `rebuilt`: made from the logs. */
  readonly catalog: "kept" | "refreshed" | "rebuilt";
  /** Sessions whose summary was made anew (every stored one on a rebuild). */
  readonly summaries: number;
}

/**
 * Makes the titles table when missing and brings the catalog up to date with the logs: rebuilt
 * (its tables and the search index dropped and made anew, every summary from its log) when it is
 * missing or of another version, and the summaries of sessions written by another build (missing,
 * or behind their log) made anew. Looks first without writing; only what needs it takes the write
 * lock (`BEGIN IMMEDIATE`), and looks again under it (another process may have done it since).
 * Nothing here refuses a store: the catalog is derived.
 */
export function openCatalog(db: Database.Database, statements: Statements): CatalogOpen {
  if (
    statements.get("titlesExists", {}) !== undefined &&
    catalogState(statements) === "current" &&
    statements.all("staleSummaries", {}).length === 0 &&
    Number(statements.get("orphanSummaries", {})?.count ?? 0) === 0
  ) {
    return { catalog: "kept", summaries: 0 };
  }
  statements.run("beginWrite", {});
  try {
    if (statements.get("titlesExists", {}) === undefined) {
      statements.run("createTitlesVersion", {});
      statements.run("createSessionTitles", {});
      statements.run("stampTitles", { version: SQLITE_TITLES_VERSION });
    }
    const done = catalogState(statements) === "current" ? refresh(statements) : rebuild(statements);
    statements.run("commit", {});
    return done;
  } catch (error) {
    if (db.inTransaction) statements.run("rollback", {});
    throw error;
  }
}

function catalogState(statements: Statements): "current" | "absent" | "other" {
  if (statements.get("catalogExists", {}) === undefined) return "absent";
  const versions = statements.all("catalogVersions", {}).map((r) => r.version);
  return versions.length === 1 && versions[0] === SQLITE_CATALOG_VERSION ? "current" : "other";
}

/** Drops whatever catalog is there (and the search index) and makes it anew from the logs. */
function rebuild(statements: Statements): CatalogOpen {
  for (const drop of [
    "dropSearchFts",
    "dropSearchTexts",
    "dropSearchPending",
    "dropCatalogSummaries",
    "dropCatalogVersion",
  ] as const) {
    statements.run(drop, {});
  }
  statements.run("createCatalogVersion", {});
  statements.run("createCatalogSummaries", {});
  statements.run("createCatalogByActivity", {});
  statements.run("stampCatalog", { version: SQLITE_CATALOG_VERSION });
  const summaries = statements.run("fillSummaries", {});
  for (const row of statements.all("firstUserMessages", {})) {
    const derivedTitle = titleOfData(row.data);
    statements.run("setDerivedTitle", { sessionId: row.sessionId, derivedTitle });
  }
  return { catalog: "rebuilt", summaries };
}

/** Makes anew the summaries that are missing or behind their log, and drops orphaned ones. */
function refresh(statements: Statements): CatalogOpen {
  const stale = statements.all("staleSummaries", {});
  for (const { sessionId } of stale) refreshSummary(statements, sessionId);
  statements.run("deleteOrphanSummaries", {});
  return { catalog: "refreshed", summaries: stale.length };
}

/**
 * Makes one session's summary anew from its log, inside the caller's write transaction: after a
 * fork's copy, a repair, or when the catalog found it stale.
 */
export function refreshSummary(statements: Statements, sessionId: string): void {
  const first = statements.get("firstUserMessage", { sessionId });
  const derivedTitle = first === undefined ? null : titleOfData(first.data);
  statements.run("refreshSummary", { sessionId, derivedTitle });
}
