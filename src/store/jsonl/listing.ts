// Lists JSONL sessions from each file's header line and, for a page's sessions, its last line.
import { existsSync } from "node:fs";
import { type FileHandle, open, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SessionHeader } from "../../generated.js";
import { isErrno } from "../../util/errno.js";
import type { ListedSession, ListPage, ListQuery } from "../backend.js";
import { compareNewestFirst, decodeCursor, encodeCursor, isAfter } from "../list-cursor.js";
import { LOG_SUFFIX, legacyLogFileName, logFileName } from "./layout.js";
import { readHeaderSync, walkLinesBackwards } from "./line-reader.js";

/** How many files are open at once while reading the page's last lines. */
const PARALLELISM = 32;

/**
 * How many header lines are read between two turns of the event loop. A header is one small read
 * of a file's first bytes: done synchronously, slice by slice, it costs a fraction of a round trip
 * through the thread pool per file, and other work still runs between slices.
 */
const HEADERS_PER_TURN = 256;

/** The first read of a header line (a longer line is read on in larger chunks). */
const HEADER_READ_BYTES = 4096;

/**
 * One page of the logs in `dir`, newest first. Every file's first line (the header) is read to
 * filter and order; then, for the page's sessions only, the last complete line, found by reading
 * backwards from the end: `eventCount` is its seq + 1 and `updatedAt` its time. A trailing line
 * that does not parse (a torn tail) is passed over for the one before it; the middle of a log is
 * never read. Files whose header is unreadable, of another format version, or names an id that
 * does not map to the file's name are not listed (`load` reports what is wrong with them); a long
 * id's log under the name the previous build gave it is listed.
 * @throws StorageError INVALID_PARAMS for a cursor this did not issue.
 */
export async function listLogs(dir: string, query: ListQuery): Promise<ListPage> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith(LOG_SUFFIX));
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
    names = [];
  }
  const found: { header: SessionHeader; path: string; headerEnd: number }[] = [];
  const buffer = Buffer.allocUnsafe(HEADER_READ_BYTES);
  for (let i = 0; i < names.length; i++) {
    if (i > 0 && i % HEADERS_PER_TURN === 0) await new Promise((next) => setImmediate(next));
    const name = names[i] as string;
    const path = join(dir, name);
    const head = readHeader(path, name, buffer);
    if (head === undefined) continue;
    const { header } = head;
    if (query.cwd !== undefined && header.cwd !== query.cwd) continue;
    if (query.parentSession !== undefined && header.parentSession !== query.parentSession) continue;
    if (after !== undefined && !isAfter(header, after)) continue;
    found.push({ header, path, headerEnd: head.end });
  }
  found.sort((a, b) => compareNewestFirst(a.header, b.header));
  const page = found.slice(0, query.limit);
  const sessions: ListedSession[] = new Array(page.length);
  await forEachLimited(
    page.map((entry, index) => ({ entry, index })),
    async ({ entry, index }) => {
      sessions[index] = { header: entry.header, ...(await lastEvent(entry.path, entry.headerEnd)) };
    },
  );
  const last = page.at(-1);
  return {
    sessions,
    ...(found.length > query.limit && last ? { nextCursor: encodeCursor(last.header) } : {}),
  };
}

/**
 * The header of a log file from its first line, or undefined when it cannot be listed (gone since
 * the folder was read, unreadable, or not where its id's log belongs). `buffer` is scratch space.
 */
function readHeader(
  path: string,
  name: string,
  buffer: Buffer,
): { header: SessionHeader; end: number } | undefined {
  const head = readHeaderSync(path, buffer);
  return head !== undefined && isNameOf(head.header.id, name, dirname(path)) ? head : undefined;
}

/**
 * Whether the log file `name` in `dir` is where session `id` is stored: its name, or the name the
 * previous build gave a long id when the log is not under its new name too (a crash between the
 * two steps of moving it).
 */
function isNameOf(id: string, name: string, dir: string): boolean {
  const current = logFileName(id);
  if (current === name) return true;
  return legacyLogFileName(id) === name && !existsSync(join(dir, current));
}

/** `eventCount` and `updatedAt` from the last complete line that parses as an event. */
async function lastEvent(
  path: string,
  headerEnd: number,
): Promise<{ eventCount: number; updatedAt?: number }> {
  let found: { eventCount: number; updatedAt?: number } = { eventCount: 0 };
  const handle = await openIfExists(path);
  if (handle === undefined) return found;
  try {
    const size = Number((await handle.stat({ bigint: true })).size);
    await walkLinesBackwards(handle, size, headerEnd, (text) => {
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch {
        return undefined;
      }
      const { seq, time } = (event ?? {}) as { seq?: unknown; time?: unknown };
      if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) return undefined;
      found = { eventCount: seq + 1, ...(typeof time === "number" ? { updatedAt: time } : {}) };
      return "stop";
    });
    return found;
  } finally {
    await handle.close();
  }
}

async function openIfExists(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (error) {
    // Deleted between the folder read and now: not listed.
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** Runs `task` over `items` with at most {@link PARALLELISM} running at once. */
async function forEachLimited<T>(
  items: readonly T[],
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLELISM, items.length) }, worker));
}
