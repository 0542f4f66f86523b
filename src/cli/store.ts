// Which store a command works on (--store, SEEDLINE_STORE, the default) and opening it as a SessionStore.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { hasCode, StorageError, show } from "../errors.js";
import { DEFAULT_STORE_URL, openBackend, STORE_URL_FORMS } from "../store/open/open-backend.js";
import { SessionStore, type SessionStoreOptions } from "../store/session-store.js";
import { type OptionSpec, UsageError } from "./command.js";

/** The environment variable that names the store when `--store` is not given. */
export const STORE_ENV = "SEEDLINE_STORE";

/** The `--store` option, shared by every command that opens a store. */
export const STORE_OPTION: OptionSpec = {
  type: "string",
  arg: "URL",
  description: `the store: ${STORE_URL_FORMS.join(", ")} (default: $${STORE_ENV}, else ${DEFAULT_STORE_URL})`,
};

/** The store URL a command uses: `--store`, else `$SEEDLINE_STORE`, else the default. */
export function storeUrl(option: string | boolean | undefined, env: NodeJS.ProcessEnv): string {
  if (typeof option === "string") return option;
  const fromEnv = env[STORE_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : DEFAULT_STORE_URL;
}

/**
 * Whether the store a URL names is already there. Reading commands check this first, so that
 * `seedline ls` in a folder without a store does not create one.
 */
export function storeExists(url: string): boolean {
  const colon = url.indexOf(":");
  const scheme = url.slice(0, colon);
  const rest = url.slice(colon + 1);
  if ((scheme === "sqlite" || scheme === "jsonl") && rest !== "" && rest !== ":memory:") {
    return existsSync(resolve(rest));
  }
  return true;
}

/**
 * Opens the store a URL names.
 * @throws UsageError for a URL of no known form; the backend's errors (FORMAT_UNSUPPORTED for a
 *   SQLite file at another layout version).
 */
export async function openStore(
  url: string,
  options: Omit<SessionStoreOptions, "backend"> = {},
): Promise<SessionStore> {
  try {
    return new SessionStore({ ...options, backend: await openBackend(url) });
  } catch (error) {
    if (hasCode(error, "INVALID_PARAMS")) {
      throw new UsageError(
        `expected --store of the form ${STORE_URL_FORMS.join(", ")}, got ${JSON.stringify(url)}`,
      );
    }
    throw error;
  }
}

/** Runs `task` on the opened store and closes the store afterwards, whatever happens. */
export async function withStore<T>(
  url: string,
  task: (store: SessionStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(url);
  try {
    return await task(store);
  } finally {
    await store.close();
  }
}

/** SESSION_NOT_FOUND for a session asked of a store that is not there (which is not created). */
export function noStore(id: string, url: string): StorageError<"SESSION_NOT_FOUND"> {
  return new StorageError(
    "SESSION_NOT_FOUND",
    `expected a session ${show(id)}, found no store at ${url}`,
    {
      sessionId: id,
    },
  );
}
