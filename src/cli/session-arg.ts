// The session argument of CLI commands: a full id or a unique prefix of one (at least 4 characters), resolved by the store.
import { hasCode, StorageError } from "../errors.js";
import type { SessionStore } from "../store/session-store.js";

/**
 * The full id that `arg` names in `store` (see `SessionStore.resolveId`).
 * @throws StorageError SESSION_NOT_FOUND; AMBIGUOUS_ID whose message lists the candidates, one
 *   per line with its title, so that the user can pick one.
 */
export async function resolveSessionArg(store: SessionStore, arg: string): Promise<string> {
  try {
    return await store.resolveId(arg);
  } catch (error) {
    if (!hasCode(error, "AMBIGUOUS_ID")) throw error;
    const { candidates, count } = error.details;
    const lines = await Promise.all(
      candidates.map(async (id) => {
        const title = await store.title(id).catch(() => undefined);
        return `  ${id}${title === undefined ? "" : `  ${title}`}`;
      }),
    );
    const more = count > candidates.length ? [`  … and ${count - candidates.length} more`] : [];
    throw new StorageError(
      "AMBIGUOUS_ID",
      `expected an id or a prefix of one session's id, got ${JSON.stringify(arg)}, which starts ${count} ids:\n${[...lines, ...more].join("\n")}`,
      error.details,
      { cause: error },
    );
  }
}
