// Finds logs the previous build named differently: a long id's old shortened name, which a short id's name can equal.
import { statSync } from "node:fs";
import { join } from "node:path";
import {
  isShortenedLogFileName,
  legacyLogFileName,
  logFileName,
  mayBeLegacyLogFileName,
} from "./layout.js";
import { readHeaderSync } from "./line-reader.js";

/** The first read of a header line. */
const HEADER_READ_BYTES = 4096;

/**
 * Where session `id`'s log is in `dir`, or undefined when it certainly has none there. For almost
 * every id this is the path of its name, without touching the file system. Two kinds of id cost
 * a `stat` and a header read, because the previous build shortened long ids' names to 150 bytes,
 * `~` and a hash — a name that a short id's plain encoding can equal (docs/storage.md, "JSONL"):
 * - a long id whose file is not under its name is looked up under its old name, and found there
 *   only when that file's header names it — otherwise the file is the short id's, and the long
 *   session does not exist;
 * - a short id whose name has that old shape has no log when the file under its name is the
 *   previous build's log of the long id the header names (not a damaged log of the short id).
 */
export function locateLog(dir: string, id: string): string | undefined {
  const name = logFileName(id);
  const path = join(dir, name);
  if (isShortenedLogFileName(name)) {
    if (statSync(path, { throwIfNoEntry: false }) !== undefined) return path;
    const legacyPath = join(dir, legacyLogFileName(id) as string);
    return headerIdAt(legacyPath) === id ? legacyPath : path;
  }
  if (mayBeLegacyLogFileName(name) && legacyOwnerAt(dir, name, id) !== undefined) return undefined;
  return path;
}

/**
 * The long id whose log, as the previous build named it, occupies the name `name` of session
 * `id` in `dir`; undefined when the file there is not such a log (or there is none).
 */
export function legacyOwnerOf(dir: string, id: string): string | undefined {
  const name = logFileName(id);
  return mayBeLegacyLogFileName(name) ? legacyOwnerAt(dir, name, id) : undefined;
}

function legacyOwnerAt(dir: string, name: string, id: string): string | undefined {
  const owner = headerIdAt(join(dir, name));
  return owner !== undefined && owner !== id && legacyLogFileName(owner) === name
    ? owner
    : undefined;
}

/**
 * The id the header line of the log at `path` names; undefined when there is no such file or its
 * first line is not a header this build reads.
 */
export function headerIdAt(path: string): string | undefined {
  return readHeaderSync(path, Buffer.allocUnsafe(HEADER_READ_BYTES))?.header.id;
}

/**
 * The path a long id's log has under the name the previous build gave it, when it is there and
 * not under its own name (so it is to be moved); undefined for any other id or state.
 */
export function legacyLogToMove(dir: string, id: string, name: string): string | undefined {
  if (!isShortenedLogFileName(name)) return undefined;
  if (statSync(join(dir, name), { throwIfNoEntry: false }) !== undefined) return undefined;
  const legacyPath = join(dir, legacyLogFileName(id) as string);
  return headerIdAt(legacyPath) === id ? legacyPath : undefined;
}
