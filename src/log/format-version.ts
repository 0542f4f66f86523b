// The session format version check every read path runs first, on the raw header.

import { StorageError, show } from "../errors.js";
import { SESSION_FORMAT_VERSION } from "../generated.js";

/**
 * Refuses a header of another session format version before anything else is read from it.
 * @throws StorageError FORMAT_UNSUPPORTED with the direction in the message.
 */
export function checkFormatVersion(header: unknown, location: string): void {
  const found = (header as { version?: unknown } | null)?.version;
  if (found === SESSION_FORMAT_VERSION) return;
  const direction =
    typeof found === "number" && found > SESSION_FORMAT_VERSION
      ? "it is newer: upgrade seedline to read it"
      : "this build has no upgrade path for it";
  throw new StorageError(
    "FORMAT_UNSUPPORTED",
    `expected session format version ${SESSION_FORMAT_VERSION} in ${location}, got ${show(found)}: ${direction}`,
    {
      found: typeof found === "number" ? found : show(found),
      supported: SESSION_FORMAT_VERSION,
      location,
    },
  );
}
