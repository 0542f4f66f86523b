// What a store of another layout (or titles table) version tells its user: both SQL dialects' refusals say it alike.
import { StorageError, show } from "../../errors.js";

/**
 * What to do with a store (SQLite database, PostgreSQL schema) of layout `version` when this
 * build's is `current`: layout 5 (summaries kept in the layout by the seedline builds before
 * layout 4 was restored) is moved with the build that wrote it; a newer one needs a newer
 * seedline; an older one has no way here (reject, never migrate).
 */
export function layoutDirection(version: number, current: number): string {
  if (version === 5) {
    return "layout 5 was written by a seedline build that kept summaries in the layout; with that build, `seedline export --store OLD ID > DIR/ID.jsonl` each session (`seedline ls --store OLD` lists them), then `seedline import --store NEW DIR` with this one (CHANGELOG.md: layout 4 restored)";
  }
  if (version > current) {
    return "it was written by a newer seedline: upgrade seedline to open it";
  }
  if (version === 3) {
    return "layout 3 is ambiguous (two sibling layouts shipped under it) and no layout is migrated";
  }
  return "it is an older layout, and no layout is migrated (reject, never migrate)";
}

/**
 * The refusal of a titles table whose version rows are not exactly `[supported]`, or undefined
 * when they are. `where` names the store with its preposition ("at PATH", "in LOCATION");
 * `location` is the store as `details` gives it.
 */
export function titlesRefusal(
  versions: readonly number[],
  supported: number,
  where: string,
  location: string,
): StorageError<"FORMAT_UNSUPPORTED"> | undefined {
  if (versions.length === 1 && versions[0] === supported) return undefined;
  const found = versions.length === 1 ? (versions[0] as number) : undefined;
  const direction =
    found !== undefined && found > supported
      ? "it was written by a newer seedline: upgrade seedline to open it"
      : "this build reads only its own version";
  return new StorageError(
    "FORMAT_UNSUPPORTED",
    `expected the titles table of version ${supported} (one row in titles_version) ${where}, found ${found ?? show(versions)}: ${direction}`,
    { found: found ?? 0, supported, location },
  );
}
