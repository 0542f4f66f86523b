// The catalog of a JSONL store: listing from the listing index and the logs' first and last lines, titles in files beside the logs, id prefixes.
import type { IdMatches, ListPage, ListQuery, SessionCatalog, StoredTitles } from "../backend.js";
import { matchIds } from "../ids/id-prefix.js";
import type { ActivityCache } from "./activity-cache.js";
import type { ListIndex } from "./list-index.js";
import { listLogs } from "./listing.js";
import { type LogFolder, refused } from "./log-folder.js";
import type { LogTitles } from "./log-titles.js";

/** What the catalog needs of its backend. */
export interface JsonlAccess {
  readonly sessionsDir: string;
  readonly index: ListIndex;
  readonly activity: ActivityCache;
  readonly titles: LogTitles;
  readonly folder: LogFolder;
  /** Throws when the backend is closed. */
  assertOpen(): void;
  /** Tells the session's subscribers it changed. */
  changed(id: string): void;
}

/**
 * The catalog of a JSONL store. Its derived part is the listing index (`<root>/list-index.jsonl`,
 * rebuilt from the logs when missing, damaged or of another version) with the activity and
 * derived-title caches; explicit titles are `<id>.title.json` files beside the logs. It keeps no
 * search index: the store reads the logs.
 */
export class JsonlCatalog implements SessionCatalog {
  readonly #access: JsonlAccess;

  constructor(access: JsonlAccess) {
    this.#access = access;
  }

  /**
   * One page, newest first, from the listing index (checked against the sessions folder with one
   * `stat`) and, for the listed sessions only, their header and last complete lines; see
   * {@link listLogs}.
   * @throws StorageError INVALID_PARAMS for a limit above MAX_LIST_LIMIT or a foreign cursor.
   */
  async list(query: ListQuery): Promise<ListPage> {
    const { sessionsDir, index, titles, activity } = this.#access;
    this.#access.assertOpen();
    try {
      return await listLogs(
        sessionsDir,
        index,
        query,
        (header) => titles.titleOf(header),
        activity,
      );
    } catch (error) {
      throw refused(error, sessionsDir);
    }
  }

  /**
   * Sets or clears the explicit title in the title file beside the log (the log is not rewritten),
   * after the earlier writes of the session.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  async setTitle(id: string, title: string | null): Promise<void> {
    this.#access.assertOpen();
    await this.#access.folder.run(id, () => this.#access.titles.set(id, title));
    this.#access.changed(id);
  }

  async titles(id: string): Promise<StoredTitles | undefined> {
    this.#access.assertOpen();
    return this.#access.titles.titles(id);
  }

  /** Every listed id, from the listing index, matched by a scan. */
  async idsWithPrefix(prefix: string, limit: number): Promise<IdMatches> {
    this.#access.assertOpen();
    return matchIds(await this.#access.index.ids(), prefix, limit);
  }
}
