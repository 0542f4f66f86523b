// The listing index file of a JSONL store (<root>/list-index.jsonl): what listing needs of each log, saved and read back.
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { join } from "node:path";
import {
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  validateSessionHeader,
} from "../../generated.js";
import { isErrno } from "../../util/errno.js";
import type { Durability } from "./durable-file.js";
import { LOG_SUFFIX } from "./layout.js";

/** The file name of the index, in the store's root (beside `sessions/`, so writing it never changes that folder). */
export const LIST_INDEX_FILE = "list-index.jsonl";

/** What the first line of the file says it is; anything else is not read. */
const INDEX_KIND = "seedline-list-index";

/** The layout of the file; a file of another layout is rebuilt from the logs. */
const INDEX_LAYOUT = 1;

/** The sessions folder as one `stat` of it showed it: the index is trusted while it still shows this. */
export interface FolderStamp {
  readonly ino: bigint;
  readonly mtimeNs: bigint;
}

/** A log whose header line this build lists from. */
export interface HeaderEntry {
  readonly name: string;
  readonly header: SessionHeader;
  /** The byte offset just past the header line. */
  readonly headerEnd: number;
  /**
   * Set when `name` is not the id's own log name but the previous build's name of a long id: the
   * id's own name, under which the log is listed instead when that file exists.
   */
  readonly ownName?: string;
}

/**
 * A log file this build does not list (a header it cannot read, of another format version, or
 * naming an id whose log belongs under another name), with the size and change time it had when
 * read: it is read again once either moves (a file still being copied in, say).
 */
export interface SkippedEntry {
  readonly name: string;
  readonly header?: undefined;
  readonly size: bigint;
  readonly mtimeNs: bigint;
}

/** One log file of the sessions folder, as the index knows it. */
export type IndexEntry = HeaderEntry | SkippedEntry;

/** What the file holds: the entries and the folder stamp they reflect. */
export interface IndexSnapshot {
  /**
   * The folder as it was just before the read of its names the entries reflect; undefined when
   * that read came too soon after the folder's last change to be trusted (see list-index.ts).
   */
  readonly stamp: FolderStamp | undefined;
  readonly entries: readonly IndexEntry[];
}

/**
 * Reads and writes the index file. The file is JSON lines: first `{"kind", "layout",
 * "formatVersion", "ino", "mtimeNs"}` (the stamp as decimal strings, or absent), then one line
 * per log file: `[name, header, headerEnd]`, `[name, header, headerEnd, ownName]` or
 * `[name, null, size, mtimeNs]`. It is a cache: a missing, unreadable, damaged or foreign file
 * reads as undefined (the logs are read instead) and a failed save is dropped.
 */
export class IndexFile {
  readonly path: string;
  readonly #root: string;
  readonly #durability: Durability;

  constructor(root: string, durability: Durability) {
    this.#root = root;
    this.path = join(root, LIST_INDEX_FILE);
    this.#durability = durability;
  }

  /** The snapshot in the file, or undefined when there is none this build can trust. */
  load(): IndexSnapshot | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return undefined;
    }
    try {
      return parseSnapshot(text);
    } catch {
      return undefined;
    }
  }

  /**
   * Replaces the file with `snapshot` atomically: a temp file in the same folder, flushed in
   * durability "fsync", renamed over it. Two processes saving at once leave one whole snapshot.
   * @throws the file system's error (the caller drops it: the index is a cache).
   */
  async save(snapshot: IndexSnapshot): Promise<void> {
    const temp = join(
      this.#root,
      `.${LIST_INDEX_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`,
    );
    const handle = await open(temp, "wx");
    try {
      for (const chunk of formatSnapshot(snapshot)) await handle.write(chunk);
      if (this.#durability === "fsync") await handle.sync();
      await handle.close();
      await rename(temp, this.path);
    } catch (error) {
      await handle.close().catch(() => undefined);
      rmSync(temp, { force: true });
      throw error;
    }
  }

  /** Removes the file; for tests and tools. */
  remove(): void {
    try {
      rmSync(this.path);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
    }
  }
}

/** The file's text in chunks of about 1 MiB. */
function* formatSnapshot(snapshot: IndexSnapshot): Generator<string> {
  const { stamp } = snapshot;
  let chunk = `${JSON.stringify({
    kind: INDEX_KIND,
    layout: INDEX_LAYOUT,
    formatVersion: SESSION_FORMAT_VERSION,
    ...(stamp === undefined ? {} : { ino: String(stamp.ino), mtimeNs: String(stamp.mtimeNs) }),
  })}\n`;
  for (const entry of snapshot.entries) {
    const line =
      entry.header === undefined
        ? [entry.name, null, String(entry.size), String(entry.mtimeNs)]
        : entry.ownName === undefined
          ? [entry.name, entry.header, entry.headerEnd]
          : [entry.name, entry.header, entry.headerEnd, entry.ownName];
    chunk += `${JSON.stringify(line)}\n`;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk !== "") yield chunk;
}

/** @throws Error when the text is not a whole snapshot of this layout. */
function parseSnapshot(text: string): IndexSnapshot {
  if (!text.endsWith("\n")) throw new Error("expected a whole index file, got a cut one");
  const lines = text.split("\n");
  lines.pop();
  const meta = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
  if (
    meta.kind !== INDEX_KIND ||
    meta.layout !== INDEX_LAYOUT ||
    meta.formatVersion !== SESSION_FORMAT_VERSION
  ) {
    throw new Error("expected an index of this layout, got another");
  }
  const stamp =
    typeof meta.ino === "string" && typeof meta.mtimeNs === "string"
      ? { ino: BigInt(meta.ino), mtimeNs: BigInt(meta.mtimeNs) }
      : undefined;
  const entries: IndexEntry[] = new Array(lines.length - 1);
  for (let i = 1; i < lines.length; i++) entries[i - 1] = parseEntry(lines[i] as string);
  return { stamp, entries };
}

function parseEntry(line: string): IndexEntry {
  const value: unknown = JSON.parse(line);
  if (!Array.isArray(value) || typeof value[0] !== "string" || !value[0].endsWith(LOG_SUFFIX)) {
    throw new Error(`expected an index entry, got ${line}`);
  }
  const [name, header, third, fourth] = value as [string, unknown, unknown, unknown];
  if (header === null) {
    if (typeof third !== "string" || typeof fourth !== "string") {
      throw new Error(`expected a skipped file's size and time, got ${line}`);
    }
    return { name, size: BigInt(third), mtimeNs: BigInt(fourth) };
  }
  if (
    !validateSessionHeader(header) ||
    !Number.isSafeInteger(third) ||
    (third as number) < 2 ||
    value.length > 4 ||
    (fourth !== undefined && (typeof fourth !== "string" || !fourth.endsWith(LOG_SUFFIX)))
  ) {
    throw new Error(`expected a listed file's header and header end, got ${line}`);
  }
  return {
    name,
    header,
    headerEnd: third as number,
    ...(fourth === undefined ? {} : { ownName: fourth as string }),
  };
}
