// Loads replay scripts from recorded fixture files: a primary log, its children, an optional override.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { SessionScript } from "../generated.js";
import { parseReplayOverride, parseSessionFile, parseSessionHeader } from "./session-file.js";
import { orderScripts, sessionScript } from "./session-script.js";

/** The files of a recorded session tree. */
export interface SessionScriptFiles {
  /** The primary session's log (JSONL: header line, then events). */
  readonly file: string;
  /** Logs of its descendants, in any order. */
  readonly childFiles?: readonly string[];
  /** A JSON array of replay entries that replaces the primary's script. */
  readonly overrideFile?: string;
}

/** The names a fixture folder uses. */
export const FIXTURE_PRIMARY_FILE = "session.jsonl";
export const FIXTURE_OVERRIDE_FILE = "replay.override.json";
const FIXTURE_CHILD_FILE = /^session\.(\d+)\.jsonl$/;

/**
 * One script per file: the primary first, then the children by `createdAt` (ties by id). Every
 * script is derived from its own events after its own header's `seedLength` (a primary that is
 * itself a fork child is sliced too). With `overrideFile`, the primary's script is the override
 * and its events are not read past the header.
 * @throws StorageError CORRUPT_LOG (file and line) or FORMAT_UNSUPPORTED for a bad log;
 *   ReplayError INVALID_PARAMS for a bad override file, REPLAY_INCOMPLETE for a step with no
 *   faithful replay; the file system's error for a file that cannot be read.
 */
export async function loadSessionScripts(files: SessionScriptFiles): Promise<SessionScript[]> {
  const [primaryText, overrideText, ...childTexts] = await Promise.all([
    readFile(files.file, "utf8"),
    files.overrideFile === undefined ? undefined : readFile(files.overrideFile, "utf8"),
    ...(files.childFiles ?? []).map((f) => readFile(f, "utf8")),
  ]);
  const primary =
    overrideText === undefined || files.overrideFile === undefined
      ? sessionScript(parseSessionFile(primaryText as string, files.file), { primary: true })
      : sessionScript(
          { ...parseSessionHeader(primaryText as string, files.file), events: [] },
          { primary: true, override: parseReplayOverride(overrideText, files.overrideFile) },
        );
  const children = (files.childFiles ?? []).map((file, i) =>
    sessionScript(parseSessionFile(childTexts[i] as string, file), { primary: false }),
  );
  return orderScripts(primary, children);
}

/**
 * The scripts of a fixture folder: `session.jsonl` (the primary), `session.N.jsonl` (its
 * children) and, when present, `replay.override.json`; other files are ignored.
 * @throws as `loadSessionScripts`; the file system's error when the folder has no `session.jsonl`.
 */
export async function loadFixtureScripts(dir: string): Promise<SessionScript[]> {
  const names = await readdir(dir);
  const childFiles = names
    .filter((name) => FIXTURE_CHILD_FILE.test(name))
    .sort((a, b) => childNumber(a) - childNumber(b))
    .map((name) => join(dir, name));
  return loadSessionScripts({
    file: join(dir, FIXTURE_PRIMARY_FILE),
    childFiles,
    ...(names.includes(FIXTURE_OVERRIDE_FILE)
      ? { overrideFile: join(dir, FIXTURE_OVERRIDE_FILE) }
      : {}),
  });
}

function childNumber(name: string): number {
  return Number(FIXTURE_CHILD_FILE.exec(name)?.[1]);
}
