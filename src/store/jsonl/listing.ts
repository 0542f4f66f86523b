// Lists JSONL sessions from the listing index and, for a page's sessions, each file's header and last line.
import { closeSync, fstatSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { SessionHeader } from "../../generated.js";
import { parseEventLine, parseHeaderLine } from "../../log/jsonl-codec.js";
import { isErrno } from "../../util/errno.js";
import type { ListedSession, ListPage, ListQuery } from "../backend.js";
import { decodeCursor, encodeCursor, keyOf, pageOf } from "../listing/list-cursor.js";
import { checkListLimit } from "../listing/list-limit.js";
import type { ActivityCache } from "./activity-cache.js";
import { openIfPresentSync, walkLinesBackwards } from "./line-reader.js";
import type { ListIndex } from "./list-index.js";
import type { HeaderEntry } from "./list-index-file.js";

/** How many files are open at once while reading the last lines that need more than one window. */
const PARALLELISM = 32;

/**
 * How many of the page's files are read between two turns of the event loop. Each costs an open,
 * a `stat`, two small reads and a close, done synchronously: together they take less than one
 * round trip through the thread pool would, and other work still runs between slices.
 */
const FILES_PER_TURN = 64;

/** The window read at the end of a file for its last line (a longer line is read on asynchronously). */
const WINDOW_BYTES = 4096;

/**
 * How many times a page is chosen again after some of its files turned out other than the index
 * said (rewritten in place, replaced or deleted since); past that, such files are left out.
 */
const MAX_ROUNDS = 8;

/**
 * One page of the logs in `dir`, newest first. The index (see {@link ListIndex}), checked against
 * the folder first, filters and orders, and the page's start is found from the cursor by binary
 * search; then only the page's files are read: each one's header line, to check it is still what
 * the index says (a file that changed is read into the index again and the page chosen again),
 * and its last complete line, found by reading backwards from the end: `eventCount` is its
 * seq + 1 and `updatedAt` its time. A trailing line that does not parse (a torn tail) is passed
 * over for the one before it; the middle of a log is never read. Files whose header is
 * unreadable, of another format version, or names an id that does not map to the file's name
 * are not listed (`load` reports what is wrong with them); a long id's log under the name the
 * previous build gave it is listed while its own name holds no file.
 * @throws StorageError INVALID_PARAMS for a cursor this did not issue or a limit out of range.
 */
export async function listLogs(
  dir: string,
  index: ListIndex,
  query: ListQuery,
  titleOf: (header: SessionHeader) => Promise<string | undefined>,
  activity: ActivityCache,
): Promise<ListPage> {
  const page = await selectLogs(dir, index, query, activity);
  const sessions = await Promise.all(
    page.sessions.map(async (session) => {
      const title = await titleOf(session.header);
      return title === undefined ? session : { ...session, title };
    }),
  );
  return { ...page, sessions };
}

/**
 * The page of {@link listLogs} without titles. In activity order every matching file's last event
 * is needed (the index orders by creation only): it comes from `activity` for a file unchanged
 * since it was read (one `stat`), else from the file; then the page is taken from them sorted.
 */
async function selectLogs(
  dir: string,
  index: ListIndex,
  query: ListQuery,
  activity: ActivityCache,
): Promise<ListPage> {
  checkListLimit(query.limit);
  const order = query.order ?? "created";
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, order);
  await index.refresh();
  const buffer = Buffer.allocUnsafe(WINDOW_BYTES);
  for (let round = 1; ; round++) {
    // One more than the page: whether a next page exists is told by a checked file too.
    const picked = index.select({
      cwd: query.cwd,
      parentSession: query.parentSession,
      after: order === "created" ? after : undefined,
      count: order === "created" ? query.limit + 1 : Number.POSITIVE_INFINITY,
    });
    const read: (ListedSession | undefined)[] = new Array(picked.length);
    const slow: number[] = [];
    for (let at = 0; at < picked.length; at++) {
      if (at > 0 && at % FILES_PER_TURN === 0) await new Promise((next) => setImmediate(next));
      const entry = picked[at] as HeaderEntry;
      const path = join(dir, entry.name);
      if (order === "activity") {
        const key = activity.stamp(path);
        const known = key === undefined ? undefined : activity.get(path, key);
        if (known !== undefined && known.header === entry.header) {
          read[at] = known;
          continue;
        }
        const got = key === undefined ? undefined : readListedSync(path, entry, true, buffer);
        if (got === "slow") slow.push(at);
        else {
          read[at] = got;
          if (got !== undefined && key !== undefined) activity.set(path, key, got);
        }
        continue;
      }
      const got = readListedSync(path, entry, at < query.limit, buffer);
      if (got === "slow") slow.push(at);
      else read[at] = got;
    }
    await forEachLimited(slow, async (at) => {
      const entry = picked[at] as HeaderEntry;
      read[at] = await readListed(join(dir, entry.name), entry, true);
    });
    const changed = picked.filter((_, at) => read[at] === undefined);
    if (changed.length > 0 && round < MAX_ROUNDS) {
      for (const entry of changed) index.reread(entry.name);
      continue;
    }
    const listed = read.filter((session) => session !== undefined);
    if (order === "activity") return pageOf(listed, query);
    const sessions = listed.slice(0, query.limit);
    const last = sessions.at(-1);
    return {
      sessions,
      ...(listed.length > query.limit && last
        ? { nextCursor: encodeCursor(keyOf(last, order), order) }
        : {}),
    };
  }
}

/**
 * The listed session of the file at `path` when its header line is still the entry's (else
 * undefined: the file changed or is gone), with its last event when `withLast`.
 */
async function readListed(
  path: string,
  entry: HeaderEntry,
  withLast: boolean,
): Promise<ListedSession | undefined> {
  const handle = await openIfExists(path);
  if (handle === undefined) return undefined;
  try {
    const head = Buffer.allocUnsafe(entry.headerEnd);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead !== head.length || head.indexOf(0x0a) !== head.length - 1) return undefined;
    if (!sameHeader(head.toString("utf8", 0, head.length - 1), entry.header, path)) {
      return undefined;
    }
    if (!withLast)
      return { header: entry.header, eventCount: 0, updatedAt: entry.header.createdAt };
    return { header: entry.header, ...(await lastEvent(handle, entry.headerEnd, entry.header)) };
  } finally {
    await handle.close();
  }
}

/**
 * {@link readListed} in one window of synchronous reads; "slow" when the last complete event line
 * does not lie whole in the last {@link WINDOW_BYTES} of the file.
 */
function readListedSync(
  path: string,
  entry: HeaderEntry,
  withLast: boolean,
  buffer: Buffer,
): ListedSession | undefined | "slow" {
  // Undefined when deleted since the index was checked.
  const fd = openIfPresentSync(path);
  if (fd === undefined) return undefined;
  try {
    const size = fstatSync(fd).size;
    const { headerEnd } = entry;
    if (size < headerEnd) return undefined;
    const head = headerEnd <= buffer.length ? buffer : Buffer.allocUnsafe(headerEnd);
    if (readSync(fd, head, 0, headerEnd, 0) !== headerEnd) return undefined;
    if (head.indexOf(0x0a) !== headerEnd - 1) return undefined;
    if (!sameHeader(head.toString("utf8", 0, headerEnd - 1), entry.header, path)) return undefined;
    if (!withLast)
      return { header: entry.header, eventCount: 0, updatedAt: entry.header.createdAt };
    const from = Math.max(headerEnd, size - buffer.length);
    const length = readSync(fd, buffer, 0, size - from, from);
    const window = buffer.subarray(0, length);
    // Lines whole in the window, last first; the trailing fragment after the last `\n` is skipped.
    for (let end = window.lastIndexOf(0x0a); end >= 0; ) {
      const start = end === 0 ? -1 : window.lastIndexOf(0x0a, end - 1);
      if (start < 0 && from > headerEnd) return "slow";
      const found = eventCountOf(window.toString("utf8", start + 1, end), entry.header);
      if (found !== undefined) return { header: entry.header, ...found };
      end = start;
    }
    return from > headerEnd
      ? "slow"
      : { header: entry.header, eventCount: 0, updatedAt: entry.header.createdAt };
  } finally {
    closeSync(fd);
  }
}

/** `eventCount` and `updatedAt` (else createdAt) from a line that parses as an event, else undefined. */
function eventCountOf(
  text: string,
  header: SessionHeader,
): { eventCount: number; updatedAt: number } | undefined {
  const { seq, time } = parseEventLine(text) ?? {};
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) return undefined;
  return { eventCount: seq + 1, updatedAt: typeof time === "number" ? time : header.createdAt };
}

/** Whether a header line says what `header` says. */
function sameHeader(text: string, header: SessionHeader, path: string): boolean {
  let now: SessionHeader;
  try {
    now = parseHeaderLine(text, path);
  } catch {
    return false;
  }
  return (
    now.id === header.id &&
    now.createdAt === header.createdAt &&
    now.version === header.version &&
    now.cwd === header.cwd &&
    now.parentSession === header.parentSession &&
    now.seedLength === header.seedLength
  );
}

/** `eventCount` and `updatedAt` from the last complete line that parses as an event. */
async function lastEvent(
  handle: FileHandle,
  headerEnd: number,
  header: SessionHeader,
): Promise<{ eventCount: number; updatedAt: number }> {
  let found: { eventCount: number; updatedAt: number } = {
    eventCount: 0,
    updatedAt: header.createdAt,
  };
  const size = Number((await handle.stat({ bigint: true })).size);
  await walkLinesBackwards(handle, size, headerEnd, (text) => {
    const event = eventCountOf(text, header);
    if (event === undefined) return undefined;
    found = event;
    return "stop";
  });
  return found;
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
