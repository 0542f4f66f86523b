// The JSONL backend: one append-only log file per session in <root>/sessions, durable writes, per-session lock files.
import { type BigIntStats, fstatSync, statSync } from "node:fs";
import { type FileHandle, mkdir, open, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { StorageError, show } from "../../errors.js";
import type { SessionEvent, SessionHeader } from "../../generated.js";
import type { TurnMarker } from "../../log/invariants.js";
import { KeyedQueue } from "../../util/keyed-queue.js";
import type {
  ListPage,
  ListQuery,
  ReleaseLock,
  SessionBackend,
  StoredForkPoint,
  StoredLog,
} from "../backend.js";
import { encodeSessionId } from "../id-encoding.js";
import { LockFiles } from "../lock-files.js";
import { seqConflict, sessionNotFound, sessionTaken } from "../storage-errors.js";
import {
  copyRange,
  type Durability,
  DurableFiles,
  type FileOps,
  NODE_FILE_OPS,
} from "./durable-file.js";
import { formatEventLine, formatHeaderLine, type LogScan } from "./format.js";
import { logFileName } from "./layout.js";
import { CHUNK_BYTES, scanLogFile } from "./line-reader.js";
import { listLogs } from "./listing.js";

/** How a JSONL backend writes. */
export interface JsonlBackendOptions {
  /**
   * "fsync" (the default): an acknowledged write survives a power cut — each batch, temp file
   * and folder change is flushed. "process": it survives a killed process only (no flushes).
   */
  readonly durability?: Durability;
  /** @internal Replaces file operations, so tests can make a real write or flush fail. */
  readonly fileOps?: Partial<FileOps>;
  /** @internal The read size of streamed reads, so tests can put lines across chunk boundaries. */
  readonly chunkBytes?: number;
}

/**
 * What this instance knows of a log file, so that an append or a fork need not read it again. It
 * holds only while the file is the same file (device and inode) at the same size; anything else —
 * another writer, a repair, a delete and re-create — shows as a mismatch and the state is
 * recovered by reading the file.
 */
interface FileState {
  readonly key: string;
  readonly size: number;
  readonly length: number;
  readonly intactEnd: number;
  readonly header: SessionHeader;
  readonly headerEnd: number;
  /**
   * Every `turn/start` and `turn/end` among the intact events, in seq order, with the byte offset
   * just past its line: a fork finds its boundary's marker and byte offset from these without
   * parsing the log. Shared by the states of one file as it grows (appends push to it).
   */
  readonly markers: IndexedMarker[];
}

/** A turn marker of a log and where its line ends. */
interface IndexedMarker extends TurnMarker {
  readonly end: number;
}

/**
 * A log whose writer lock this instance holds through {@link JsonlBackend.lock}: its file stays
 * open between appends, and while the lock is held no other writer can change the file, so the
 * state recorded by this instance's last write is trusted without a `stat`.
 */
interface HeldLog {
  handle: FileHandle | undefined;
  state: FileState | undefined;
}

/** The read size of a fork's byte copy. */
const COPY_BYTES = 1 << 20;

/**
 * Sessions as JSONL files: `<root>/sessions/<encoded id>.jsonl`, a header line then one event per
 * line (storage.md, "JSONL backend"). New files appear atomically (temp file, flush, `link`),
 * appends are flushed before they are acknowledged and cut back when they fail, and one writer
 * per session is kept across processes by lock files beside the logs (`<encoded id>.lock`).
 * Every write — create, append, fork, repair, delete — takes the session's writer lock for its
 * duration unless this instance already holds it (SESSION_BUSY when another process does).
 * POSIX file systems only.
 */
export class JsonlBackend implements SessionBackend {
  readonly kind = "jsonl";
  readonly root: string;
  /** The one folder holding every log, lock and temp file. */
  readonly sessionsDir: string;
  readonly #files: DurableFiles;
  readonly #locks: LockFiles;
  readonly #chunkBytes: number;
  readonly #copyBytes: number;
  readonly #states = new Map<string, FileState>();
  readonly #held = new Map<string, HeldLog>();
  readonly #queue = new KeyedQueue();
  #dirReady: Promise<void> | undefined;
  #closed = false;

  constructor(root: string, options: JsonlBackendOptions = {}) {
    this.root = root;
    this.sessionsDir = join(root, "sessions");
    this.#files = new DurableFiles(options.durability ?? "fsync", {
      ...NODE_FILE_OPS,
      ...options.fileOps,
    });
    this.#locks = new LockFiles(this.sessionsDir);
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    this.#copyBytes = options.chunkBytes ?? COPY_BYTES;
  }

  /** The durability mode this backend writes in. */
  get durability(): Durability {
    return this.#files.mode;
  }

  /**
   * Publishes a new log holding `header` and `events` atomically.
   * @throws StorageError SESSION_ALREADY_EXISTS when the file exists; SESSION_BUSY when another
   *   process holds the id's lock.
   */
  async create(header: SessionHeader, events: readonly SessionEvent[]): Promise<void> {
    await this.#exclusive(header.id, async () => {
      const headerLine = formatHeaderLine(header);
      const headerEnd = Buffer.byteLength(headerLine, "utf8");
      const markers: IndexedMarker[] = [];
      const file = await this.#publish(header.id, async (write) => {
        let pending = headerLine;
        let end = headerEnd;
        for (const event of events) {
          const line = formatEventLine(event);
          pending += line;
          end += Buffer.byteLength(line, "utf8");
          if (event.type === "turn/start" || event.type === "turn/end") {
            markers.push({ seq: event.seq, type: event.type, turn: event.data.turn, end });
          }
          if (pending.length >= this.#chunkBytes) {
            await write(Buffer.from(pending, "utf8"));
            pending = "";
          }
        }
        if (pending !== "") await write(Buffer.from(pending, "utf8"));
      });
      this.#record(header.id, {
        key: file.key,
        size: file.size,
        length: events.length,
        intactEnd: file.size,
        header,
        headerEnd,
        markers,
      });
    });
  }

  /**
   * Appends the batch's lines in one write at the end of the intact events, flushes, and only
   * then resolves. A torn tail left by a dead writer is cut first. A failed write or flush cuts
   * the file back to its size before the append.
   * @throws StorageError SEQ_CONFLICT (with expectedSeq), SESSION_NOT_FOUND, SESSION_BUSY.
   */
  async append(id: string, fromSeq: number, events: readonly SessionEvent[]): Promise<void> {
    await this.#exclusive(id, async () => {
      const held = this.#held.get(id);
      const handle = held?.handle ?? (await this.#openFile(id, "r+"));
      if (handle === undefined) throw sessionNotFound(id);
      if (held !== undefined) held.handle = handle;
      try {
        const state = held?.state ?? (await this.#stateOf(id, handle));
        if (state.length !== fromSeq) {
          throw seqConflict(id, state.length, fromSeq);
        }
        if (events.length === 0) return;
        this.#forgetState(id);
        if (state.size > state.intactEnd) await this.#files.cut(handle, state.intactEnd);
        const data = Buffer.from(events.map(formatEventLine).join(""), "utf8");
        await this.#files.writeAt(handle, data, state.intactEnd);
        const size = state.intactEnd + data.length;
        this.#record(id, {
          ...state,
          size,
          length: state.length + events.length,
          intactEnd: size,
          markers: indexMarkers(events, state.length, state.intactEnd, data, state.markers),
        });
      } finally {
        if (held === undefined) await handle.close();
      }
    });
  }

  /**
   * Streams the log: header, intact events, torn tail.
   * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG (location: the file; line; seq), also
   *   when the header names another id than the one asked for.
   */
  async load(id: string): Promise<StoredLog | undefined> {
    this.#assertOpen();
    const handle = await this.#openFile(id, "r");
    if (handle === undefined) return undefined;
    try {
      const key = fileKey(handle);
      const events: unknown[] = [];
      const markers: IndexedMarker[] = [];
      const scan = await this.#scan(id, handle, (event, line) => {
        events.push(event);
        collectMarker(markers, event, line.end);
        return undefined;
      });
      this.#remember(id, key, scan, markers);
      return { header: scan.header, events, tornTail: scan.tornTail };
    } finally {
      await handle.close();
    }
  }

  async has(id: string): Promise<boolean> {
    this.#assertOpen();
    try {
      // Metadata calls like this one are done synchronously: they take microseconds, less than a
      // round trip through the thread pool.
      statSync(this.#path(id));
      return true;
    } catch (error) {
      if (isErrno(error, "ENOENT")) return false;
      throw error;
    }
  }

  /**
   * The count and the last turn marker at or before `boundary`, from what this instance knows of
   * the file when it is unchanged, else from one read of it (which is then remembered).
   */
  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    this.#assertOpen();
    const state = this.#knownState(id) ?? (await this.#readState(id));
    if (state === undefined) return undefined;
    const found = markerAt(state.markers, boundary ?? Number.POSITIVE_INFINITY);
    const marker =
      found === undefined ? undefined : { seq: found.seq, type: found.type, turn: found.turn };
    return { header: state.header, length: state.length, marker };
  }

  /** The remembered state of the file now at the log's path, when it is still the same file. */
  #knownState(id: string): FileState | undefined {
    const known = this.#held.get(id)?.state ?? this.#states.get(id);
    if (known === undefined) return undefined;
    try {
      const now = keyOf(statSync(this.#path(id), { bigint: true }));
      return now.key === known.key && now.size === known.size ? known : undefined;
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  /** The state of the log read from its file, or undefined when there is none. */
  async #readState(id: string): Promise<FileState | undefined> {
    const handle = await this.#openFile(id, "r");
    if (handle === undefined) return undefined;
    try {
      return await this.#stateOf(id, handle);
    } finally {
      await handle.close();
    }
  }

  /**
   * Publishes the child: its own header line, then the source's event lines 0…`boundary`
   * copied byte for byte (never re-serialized).
   * @throws StorageError SESSION_NOT_FOUND (source), SESSION_ALREADY_EXISTS (child),
   *   CORRUPT_LOG when the source has fewer intact events than the boundary asks for.
   */
  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    await this.#exclusive(header.id, async () => {
      const source = await this.#openFile(sourceId, "r");
      if (source === undefined) throw sessionNotFound(sourceId);
      try {
        const state = await this.#stateOf(sourceId, source);
        const prefix = await this.#prefixOf(sourceId, source, state, boundary + 1);
        const headerLine = Buffer.from(formatHeaderLine(header), "utf8");
        const file = await this.#publish(header.id, async (write) => {
          await write(headerLine);
          await copyRange(source, state.headerEnd, prefix.end, write, this.#copyBytes);
        });
        const shift = headerLine.length - state.headerEnd;
        this.#record(header.id, {
          key: file.key,
          size: file.size,
          length: boundary + 1,
          intactEnd: file.size,
          header,
          headerEnd: headerLine.length,
          markers: state.markers
            .filter((m) => m.seq <= boundary)
            .map((m) => ({ ...m, end: m.end + shift })),
        });
      } finally {
        await source.close();
      }
    });
  }

  /**
   * Cuts the file to the end of event `keep - 1` (header plus `keep` events) and flushes, then
   * appends `closers` and flushes.
   * @throws StorageError SESSION_NOT_FOUND; CORRUPT_LOG when fewer than `keep` events are intact.
   */
  async repair(id: string, keep: number, closers: readonly SessionEvent[]): Promise<void> {
    await this.#exclusive(id, async () => {
      this.#dropHandle(id);
      const handle = await this.#openFile(id, "r+");
      if (handle === undefined) throw sessionNotFound(id);
      try {
        const state = await this.#stateOf(id, handle);
        const prefix = await this.#prefixOf(id, handle, state, keep);
        this.#forgetState(id);
        if (state.size > prefix.end) await this.#files.cut(handle, prefix.end);
        let size = prefix.end;
        let data: Buffer | undefined;
        if (closers.length > 0) {
          data = Buffer.from(closers.map(formatEventLine).join(""), "utf8");
          await this.#files.writeAt(handle, data, prefix.end);
          size += data.length;
        }
        const kept = state.markers.filter((m) => m.seq < keep);
        this.#record(id, {
          ...state,
          size,
          length: keep + closers.length,
          intactEnd: size,
          markers: data === undefined ? kept : indexMarkers(closers, keep, prefix.end, data, kept),
        });
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * One page, newest first, from each file's first line and, for the listed sessions only, its
   * last complete line; see {@link listLogs}.
   */
  async list(query: ListQuery): Promise<ListPage> {
    this.#assertOpen();
    return listLogs(this.sessionsDir, query);
  }

  /**
   * Removes the log under the session's writer lock and flushes the folder.
   * @throws StorageError SESSION_BUSY when another live process holds the lock.
   */
  async delete(id: string): Promise<boolean> {
    return this.#exclusive(id, async () => {
      this.#dropHandle(id);
      this.#forgetState(id);
      try {
        await unlink(this.#path(id));
      } catch (error) {
        if (isErrno(error, "ENOENT")) return false;
        throw error;
      }
      await this.#files.syncDir(this.sessionsDir);
      return true;
    });
  }

  /**
   * Takes the session's writer lock until the returned release is called. While it is held the
   * log's file stays open between appends and this instance's own record of it is trusted.
   */
  async lock(id: string): Promise<ReleaseLock> {
    this.#assertOpen();
    const name = encodeSessionId(id);
    const release = await this.#locks.acquire(name, id);
    if (!this.#held.has(id)) this.#held.set(id, { handle: undefined, state: undefined });
    return async () => {
      await release();
      if (this.#locks.holds(name)) return;
      // Closed only after the writes queued for this id, which may still be using the handle.
      await this.#queue.run(id, async () => {
        if (this.#locks.holds(name)) return;
        const held = this.#held.get(id);
        this.#held.delete(id);
        await held?.handle?.close();
      });
    };
  }

  /** Releases every lock this instance holds and closes the files it keeps open; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#locks.releaseAllSync();
    this.#states.clear();
    const held = [...this.#held.values()];
    this.#held.clear();
    await Promise.all(held.map((log) => log.handle?.close()));
  }

  #path(id: string): string {
    return join(this.sessionsDir, logFileName(id));
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error(`the JSONL backend at ${this.root} is closed`);
  }

  /** Runs a write after the earlier ones of the same id, holding the id's writer lock throughout. */
  #exclusive<T>(id: string, task: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    return this.#queue.run(id, async () => {
      const name = encodeSessionId(id);
      if (this.#locks.holds(name)) return task();
      const release = await this.#locks.acquire(name, id);
      try {
        return await task();
      } finally {
        await release();
      }
    });
  }

  async #ensureDir(): Promise<void> {
    this.#dirReady ??= (async () => {
      const created = await mkdir(this.sessionsDir, { recursive: true });
      if (created === undefined) return;
      // A new folder is durable once its parent's entry is: flush the parent of each new level.
      for (let dir = this.sessionsDir; dir !== dirname(dir); dir = dirname(dir)) {
        await this.#files.syncDir(dirname(dir));
        if (dir === created) break;
      }
    })().catch((error: unknown) => {
      this.#dirReady = undefined;
      throw error;
    });
    return this.#dirReady;
  }

  async #publish(
    id: string,
    fill: (write: (bytes: Uint8Array) => Promise<void>) => Promise<void>,
  ): Promise<{ key: string; size: number }> {
    await this.#ensureDir();
    try {
      return await this.#files.publish(this.sessionsDir, logFileName(id), fill);
    } catch (error) {
      if (isErrno(error, "EEXIST")) {
        throw sessionTaken(id);
      }
      throw error;
    }
  }

  async #openFile(id: string, flags: "r" | "r+"): Promise<FileHandle | undefined> {
    try {
      return await open(this.#path(id), flags);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  /** Streams a log through the read rules and checks that its header names `id`. */
  async #scan(
    id: string,
    handle: FileHandle,
    visit?: Parameters<typeof scanLogFile>[2],
  ): Promise<LogScan> {
    const location = this.#path(id);
    const scan = await scanLogFile(handle, location, visit, this.#chunkBytes);
    if (scan.header.id !== id) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected the header of ${location} to name session ${show(id)}, got ${show(scan.header.id)}`,
        { location, line: 1 },
      );
    }
    return scan;
  }

  /** The state of an open log: remembered when the file is unchanged, else recovered by reading it. */
  async #stateOf(id: string, handle: FileHandle): Promise<FileState> {
    const trusted = this.#held.get(id)?.state;
    if (trusted !== undefined) return trusted;
    const key = fileKey(handle);
    const known = this.#states.get(id);
    if (known !== undefined && known.key === key.key && known.size === key.size) return known;
    const markers: IndexedMarker[] = [];
    const scan = await this.#scan(id, handle, (event, line) => {
      collectMarker(markers, event, line.end);
      return undefined;
    });
    return this.#remember(id, key, scan, markers);
  }

  #remember(
    id: string,
    key: { key: string; size: number },
    scan: LogScan,
    markers: IndexedMarker[],
  ): FileState {
    const state: FileState = {
      key: key.key,
      size: scan.end,
      length: scan.length,
      intactEnd: scan.intactEnd,
      header: scan.header,
      headerEnd: scan.headerEnd,
      markers,
    };
    // A size that moved while reading means another writer; the next write re-reads.
    if (key.size === scan.end) this.#states.set(id, state);
    return state;
  }

  /** Records the state this instance's own write left; trusted while the writer lock is held. */
  #record(id: string, state: FileState): void {
    this.#states.set(id, state);
    const held = this.#held.get(id);
    if (held !== undefined && this.#locks.holds(encodeSessionId(id))) held.state = state;
  }

  /** Forgets the state of a file about to change, so that a failure leaves it to be re-read. */
  #forgetState(id: string): void {
    this.#states.delete(id);
    const held = this.#held.get(id);
    if (held !== undefined) held.state = undefined;
  }

  /** Closes the kept-open file of a held log (before a repair, a delete). */
  #dropHandle(id: string): void {
    const held = this.#held.get(id);
    if (held?.handle === undefined) return;
    const { handle } = held;
    held.handle = undefined;
    held.state = undefined;
    void handle.close().catch(() => undefined);
  }

  /**
   * Where the first `count` intact events end: found from the turn marker at or before the last
   * of them and the newlines after that marker, without parsing any line.
   * @throws StorageError CORRUPT_LOG when fewer than `count` events are intact.
   */
  async #prefixOf(
    id: string,
    handle: FileHandle,
    state: FileState,
    count: number,
  ): Promise<{ end: number }> {
    if (count > state.length) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected at least ${count} intact events in ${this.#path(id)}, got ${state.length}`,
        { location: this.#path(id) },
      );
    }
    if (count === state.length) return { end: state.intactEnd };
    if (count === 0) return { end: state.headerEnd };
    const marker = markerAt(state.markers, count - 1);
    const from = marker?.end ?? state.headerEnd;
    const lines = count - 1 - (marker?.seq ?? -1);
    const end = lines === 0 ? from : await endOfLines(handle, from, lines, this.#copyBytes);
    return { end };
  }
}

function fileKey(handle: FileHandle): { key: string; size: number } {
  return keyOf(fstatSync(handle.fd, { bigint: true }));
}

function keyOf(info: BigIntStats): { key: string; size: number } {
  return { key: `${info.dev}:${info.ino}`, size: Number(info.size) };
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/** Adds `event` to `markers` when it is a turn marker whose line ends at `end`. */
function collectMarker(
  markers: IndexedMarker[],
  event: Record<string, unknown>,
  end: number,
): void {
  const type = event.type;
  if (type !== "turn/start" && type !== "turn/end") return;
  const turn = (event.data as { turn?: unknown } | undefined)?.turn;
  markers.push({ seq: event.seq as number, type, turn: typeof turn === "number" ? turn : 0, end });
}

/**
 * Pushes the turn markers of `events` (seqs from `firstSeq`) to `markers` and returns it. `data`
 * is the bytes of their lines, one per event, written at byte `start`.
 */
function indexMarkers(
  events: readonly SessionEvent[],
  firstSeq: number,
  start: number,
  data: Buffer,
  markers: IndexedMarker[],
): IndexedMarker[] {
  let at = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as SessionEvent;
    at = data.indexOf(10, at) + 1;
    if (event.type === "turn/start" || event.type === "turn/end") {
      markers.push({ seq: firstSeq + i, type: event.type, turn: event.data.turn, end: start + at });
    }
  }
  return markers;
}

/** The last marker with a seq at or before `seq` (binary search over seq order). */
function markerAt(markers: readonly IndexedMarker[], seq: number): IndexedMarker | undefined {
  let low = 0;
  let high = markers.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((markers[mid] as IndexedMarker).seq <= seq) low = mid + 1;
    else high = mid;
  }
  return markers[low - 1];
}

/** The byte offset just past the `lines`-th `\n` at or after `from`. */
async function endOfLines(
  handle: FileHandle,
  from: number,
  lines: number,
  chunkBytes: number,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.max(1, chunkBytes));
  let left = lines;
  for (let position = from; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) {
      throw new Error(`expected ${lines} more lines after byte ${from} of a log, got its end`);
    }
    for (let at = 0; ; ) {
      const newline = buffer.indexOf(10, at);
      if (newline === -1 || newline >= bytesRead) break;
      if (--left === 0) return position + newline + 1;
      at = newline + 1;
    }
    position += bytesRead;
  }
}
