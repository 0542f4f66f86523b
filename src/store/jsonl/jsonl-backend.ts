// The JSONL backend: one append-only log file per session in <root>/sessions, durable writes, per-session lock files.
import { type FileHandle, mkdir, open, stat, unlink } from "node:fs/promises";
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
 * What this instance knows of a log file, so that an append need not read it again. It holds
 * only while the file is the same file (device and inode) at the same size; anything else —
 * another writer, a repair, a delete and re-create — shows as a mismatch and the state is
 * recovered by reading the file.
 */
interface FileState {
  readonly key: string;
  readonly size: number;
  readonly length: number;
  readonly intactEnd: number;
  readonly lastTime: number | undefined;
}

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
  readonly #states = new Map<string, FileState>();
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
      const file = await this.#publish(header.id, async (write) => {
        let pending = formatHeaderLine(header);
        for (const event of events) {
          pending += formatEventLine(event);
          if (pending.length >= this.#chunkBytes) {
            await write(Buffer.from(pending, "utf8"));
            pending = "";
          }
        }
        if (pending !== "") await write(Buffer.from(pending, "utf8"));
      });
      this.#states.set(header.id, {
        key: file.key,
        size: file.size,
        length: events.length,
        intactEnd: file.size,
        lastTime: events.at(-1)?.time,
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
      const handle = await this.#openFile(id, "r+");
      if (handle === undefined) throw notFound(id);
      try {
        const state = await this.#stateOf(id, handle);
        if (state.length !== fromSeq) {
          throw new StorageError(
            "SEQ_CONFLICT",
            `expected the batch to start at seq ${state.length} of session ${show(id)}, got ${fromSeq}`,
            { expectedSeq: state.length },
          );
        }
        if (events.length === 0) return;
        this.#states.delete(id);
        if (state.size > state.intactEnd) await this.#files.cut(handle, state.intactEnd);
        const data = Buffer.from(events.map(formatEventLine).join(""), "utf8");
        await this.#files.writeAt(handle, data, state.intactEnd);
        const size = state.intactEnd + data.length;
        this.#states.set(id, {
          key: state.key,
          size,
          length: state.length + events.length,
          intactEnd: size,
          lastTime: events.at(-1)?.time ?? state.lastTime,
        });
      } finally {
        await handle.close();
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
      const key = await fileKey(handle);
      const events: unknown[] = [];
      const scan = await this.#scan(id, handle, (event) => {
        events.push(event);
        return undefined;
      });
      this.#remember(id, key, scan);
      return { header: scan.header, events, tornTail: scan.tornTail };
    } finally {
      await handle.close();
    }
  }

  async has(id: string): Promise<boolean> {
    this.#assertOpen();
    try {
      await stat(this.#path(id));
      return true;
    } catch (error) {
      if (isErrno(error, "ENOENT")) return false;
      throw error;
    }
  }

  /** Reads the log once, keeping only the count and the last turn marker at or before `boundary`. */
  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    this.#assertOpen();
    const handle = await this.#openFile(id, "r");
    if (handle === undefined) return undefined;
    try {
      const limit = boundary ?? Number.POSITIVE_INFINITY;
      let marker: TurnMarker | undefined;
      const scan = await this.#scan(id, handle, (event) => {
        const type = event.type;
        if ((type === "turn/start" || type === "turn/end") && (event.seq as number) <= limit) {
          const turn = (event.data as { turn?: unknown } | undefined)?.turn;
          marker = { seq: event.seq as number, type, turn: typeof turn === "number" ? turn : 0 };
        }
        return undefined;
      });
      return { header: scan.header, length: scan.length, marker };
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
      if (source === undefined) throw notFound(sourceId);
      try {
        const prefix = await this.#prefix(sourceId, source, boundary + 1);
        const file = await this.#publish(header.id, async (write) => {
          await write(Buffer.from(formatHeaderLine(header), "utf8"));
          await copyRange(source, prefix.headerEnd, prefix.end, write, this.#chunkBytes);
        });
        this.#states.set(header.id, {
          key: file.key,
          size: file.size,
          length: boundary + 1,
          intactEnd: file.size,
          lastTime: prefix.lastTime,
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
      const handle = await this.#openFile(id, "r+");
      if (handle === undefined) throw notFound(id);
      try {
        const state = await this.#stateOf(id, handle);
        const prefix =
          keep === state.length
            ? { end: state.intactEnd, lastTime: state.lastTime }
            : await this.#prefix(id, handle, keep);
        this.#states.delete(id);
        if (state.size > prefix.end) await this.#files.cut(handle, prefix.end);
        let size = prefix.end;
        if (closers.length > 0) {
          const data = Buffer.from(closers.map(formatEventLine).join(""), "utf8");
          await this.#files.writeAt(handle, data, prefix.end);
          size += data.length;
        }
        this.#states.set(id, {
          key: state.key,
          size,
          length: keep + closers.length,
          intactEnd: size,
          lastTime: closers.at(-1)?.time ?? prefix.lastTime,
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
      this.#states.delete(id);
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

  async lock(id: string): Promise<ReleaseLock> {
    this.#assertOpen();
    return this.#locks.acquire(encodeSessionId(id), id);
  }

  /** Releases every lock this instance holds; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#locks.releaseAllSync();
    this.#states.clear();
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
        throw new StorageError(
          "SESSION_ALREADY_EXISTS",
          `expected a new session id, got ${show(id)} which is taken`,
          { sessionId: id },
        );
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
    const key = await fileKey(handle);
    const known = this.#states.get(id);
    if (known !== undefined && known.key === key.key && known.size === key.size) return known;
    return this.#remember(id, key, await this.#scan(id, handle));
  }

  #remember(id: string, key: { key: string; size: number }, scan: LogScan): FileState {
    const state: FileState = {
      key: key.key,
      size: scan.end,
      length: scan.length,
      intactEnd: scan.intactEnd,
      lastTime: scan.lastTime,
    };
    // A size that moved while reading means another writer; the next write re-reads.
    if (key.size === scan.end) this.#states.set(id, state);
    return state;
  }

  /** Where the first `count` intact events end (the header's end for 0), reading no further. */
  async #prefix(
    id: string,
    handle: FileHandle,
    count: number,
  ): Promise<{ headerEnd: number; end: number; lastTime: number | undefined }> {
    const last: { end?: number; time?: number } = {};
    const scan = await this.#scan(id, handle, (event, line) => {
      if (count === 0) return "stop";
      if (event.seq !== count - 1) return undefined;
      last.end = line.end;
      if (typeof event.time === "number") last.time = event.time;
      return "stop";
    });
    const end = count === 0 ? scan.headerEnd : last.end;
    if (end === undefined) {
      throw new StorageError(
        "CORRUPT_LOG",
        `expected at least ${count} intact events in ${this.#path(id)}, got ${scan.length}`,
        { location: this.#path(id) },
      );
    }
    return { headerEnd: scan.headerEnd, end, lastTime: last.time };
  }
}

async function fileKey(handle: FileHandle): Promise<{ key: string; size: number }> {
  const info = await handle.stat({ bigint: true });
  return { key: `${info.dev}:${info.ino}`, size: Number(info.size) };
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

function notFound(id: string): StorageError<"SESSION_NOT_FOUND"> {
  return new StorageError(
    "SESSION_NOT_FOUND",
    `expected a stored session ${show(id)}, found none`,
    {
      sessionId: id,
    },
  );
}
