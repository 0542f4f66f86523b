// The JSONL backend: one append-only log file per session in <root>/sessions, durable writes, per-session lock files.
import { statSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import type { SessionHeader } from "../../generated.js";
import { formatHeaderLine } from "../../log/jsonl-codec.js";
import type { SerializedEvent } from "../../log/serialized-event.js";
import { isErrno } from "../../util/errno.js";
import type {
  ReleaseLock,
  SessionBackend,
  StoredForkPoint,
  StoredLog,
  StoredSettledPage,
  StoredSuffix,
  Unsubscribe,
} from "../backend.js";
import { seqConflict, sessionNotFound } from "../errors/storage-errors.js";
import { encodeSessionId } from "../ids/id-encoding.js";
import { LockFiles } from "../locks/lock-files.js";
import { checkPageBytes, checkPageLimit } from "../reads/page-limit.js";
import { ChangeHub } from "../watch/change-hub.js";
import { ActivityCache } from "./activity-cache.js";
import { ChangeWatch } from "./change-watch.js";
import { DerivedTitles } from "./derived-titles.js";
import { type Durability, DurableFiles, NODE_FILE_OPS } from "./durable-file.js";
import { LineEncoder } from "./event-lines.js";
import {
  collectMarker,
  fileKey,
  type IndexedMarker,
  keyOf,
  type LineCheck,
  lineCheck,
  stillHolds,
} from "./file-state.js";
import { JsonlCatalog } from "./jsonl-catalog.js";
import { locateLog } from "./legacy-names.js";
import { CHUNK_BYTES } from "./line-reader.js";
import { ListIndex } from "./list-index.js";
import { IndexFile } from "./list-index-file.js";
import { LogFolder, refused } from "./log-folder.js";
import { LogForks, prefixOf } from "./log-fork.js";
import { checkNamed, LogStates } from "./log-states.js";
import { LogTitles } from "./log-titles.js";
import { budgetShares, DEFAULT_CACHE_BYTES } from "./memory-budget.js";
import { type JsonlBackendOptions, POLL_INTERVAL_MS } from "./options.js";
import { scanSettled } from "./settled-scan.js";
import { RETAINED_STATES, StateCache } from "./state-cache.js";

export type { JsonlBackendOptions };

/** The read size of a fork's byte copy. */
const COPY_BYTES = 1 << 20;

/**
 * Sessions as JSONL files: `<root>/sessions/<encoded id>.jsonl`, a header line then one event per
 * line (docs/storage.md, "JSONL"); a long id's log the previous build named differently is
 * found there too, and moved to its own name on its first write. New files appear atomically (temp file, flush, `link`),
 * appends are flushed before they are acknowledged and cut back when they fail, and one writer
 * per session is kept across processes by lock files beside the logs (`<encoded id>.lck`, locks
 * the kernel releases when their holder dies: see {@link LockFiles}).
 * Every write — create, append, repair, delete — takes the session's writer lock for its
 * duration unless this instance already holds it (SESSION_BUSY when another process does); a
 * fork takes none of its child, which it publishes by a link that fails on a taken name; reads
 * never take it. Subscribers hear of this instance's writes once they are durable, and of other
 * processes' writes through one watch of the sessions folder (see {@link ChangeWatch}). What it
 * knows of a log's file goes when the store unloads a session it writes (the writer lock is
 * released); of logs it only reads it keeps what fits its memory budget ({@link StateCache}).
 * A full disk, a refused permission or a read-only file system fails any operation with
 * StorageRefusedError STORAGE_REFUSED (location: the log, lock file or folder concerned); a
 * write it failed is cut back, so the log is left as acknowledged and the same write can be
 * retried. POSIX file systems only.
 */
export class JsonlBackend implements SessionBackend {
  readonly kind = "jsonl";
  readonly root: string;
  /** The one folder holding every log, lock and temp file. */
  readonly sessionsDir: string;
  readonly #files: DurableFiles;
  readonly #lines = new LineEncoder();
  readonly #locks: LockFiles;
  readonly #chunkBytes: number;
  readonly #copyBytes: number;
  /** Fork points and forks of the logs. */
  readonly #forks: LogForks;
  /** What this instance knows of the log files, and the logs whose writer lock it holds. */
  readonly #logs: LogStates;
  readonly #folder: LogFolder;
  readonly #changes: ChangeHub;
  readonly #watch: ChangeWatch;
  /** What listing knows of every log; see {@link ListIndex}. */
  readonly #index: ListIndex;
  readonly #activity: ActivityCache;
  readonly #derived: DerivedTitles;
  /** The sessions' explicit titles in files beside their logs, and their derived titles. */
  readonly #titles: LogTitles;
  /** Listing, titles and id prefixes (see {@link JsonlCatalog}). */
  readonly catalog: JsonlCatalog;
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
    const shares = budgetShares(options.cacheBytes ?? DEFAULT_CACHE_BYTES);
    this.#activity = new ActivityCache(shares.activity);
    this.#derived = new DerivedTitles(shares.titles);
    this.#index = new ListIndex(this.sessionsDir, new IndexFile(root, this.#files.mode));
    this.#folder = new LogFolder(this.sessionsDir, this.#files, this.#locks, this.#index, () =>
      this.#assertOpen(),
    );
    this.#logs = new LogStates(
      new StateCache(options.retainedStates ?? RETAINED_STATES, shares.states),
      this.#folder,
      this.#locks,
      this.#chunkBytes,
    );
    this.#forks = new LogForks(this.#folder, this.#logs, this.#index, this.#copyBytes);
    this.#titles = new LogTitles(this.sessionsDir, this.#files, this.#folder, this.#derived);
    this.catalog = new JsonlCatalog({
      sessionsDir: this.sessionsDir,
      index: this.#index,
      activity: this.#activity,
      titles: this.#titles,
      folder: this.#folder,
      assertOpen: () => this.#assertOpen(),
      changed: (id) => this.#changes.notify(id),
    });
    this.#watch = new ChangeWatch(
      this.sessionsDir,
      {
        mode: options.watchMode ?? "auto",
        pollIntervalMs: options.pollIntervalMs ?? POLL_INTERVAL_MS,
        watchFolder: options.watchFolder,
      },
      (id) => this.#changes.notify(id),
    );
    // The folder is watched only while some session has subscribers.
    this.#changes = new ChangeHub({
      onFirst: (id) => this.#watch.add(id),
      onLast: (id) => this.#watch.remove(id),
    });
  }

  /** The durability mode this backend writes in. */
  get durability(): Durability {
    return this.#files.mode;
  }

  /**
   * @internal How many sessions this instance keeps anything of in memory: file states (at most
   * `retainedStates`) and the logs whose writer lock it holds.
   */
  get retainedSessions(): number {
    return new Set([...this.#logs.states.ids(), ...this.#logs.held.keys()]).size;
  }

  /** @internal The estimated heap of what the caches keep (see {@link JsonlBackendOptions.cacheBytes}). */
  get cachedBytes(): number {
    return this.#logs.states.bytes + this.#activity.bytes + this.#derived.bytes;
  }

  /**
   * Publishes a new log holding `header` and `events` atomically.
   * @throws StorageError SESSION_ALREADY_EXISTS when the file exists; SESSION_BUSY when another
   *   process holds the id's lock.
   */
  async create(header: SessionHeader, events: readonly SerializedEvent[]): Promise<void> {
    await this.#folder.exclusive(header.id, async () => {
      const headerLine = formatHeaderLine(header);
      const headerEnd = Buffer.byteLength(headerLine, "utf8");
      const markers: IndexedMarker[] = [];
      let last = { start: 0, line: headerLine };
      const file = await this.#folder.publish(header.id, async (write) => {
        let pending = headerLine;
        let end = headerEnd;
        for (const serialized of events) {
          const line = `${serialized.json}\n`;
          pending += line;
          last = { start: end, line };
          end += Buffer.byteLength(line, "utf8");
          if (serialized.type === "turn/start" || serialized.type === "turn/end") {
            const event = serialized.event;
            if (event.type === "turn/start" || event.type === "turn/end") {
              markers.push({ seq: event.seq, type: event.type, turn: event.data.turn, end });
            }
          }
          if (pending.length >= this.#chunkBytes) {
            await write(Buffer.from(pending, "utf8"));
            pending = "";
          }
        }
        if (pending !== "") await write(Buffer.from(pending, "utf8"));
      });
      this.#logs.record(header.id, {
        key: file.key,
        size: file.size,
        length: events.length,
        intactEnd: file.size,
        header,
        headerEnd,
        markers,
        last: lineCheck(last.start, last.line),
      });
      this.#index.noteCreated(header, headerEnd);
    });
    this.#changes.notify(header.id);
  }

  /**
   * Appends the batch's lines in one write at the end of the intact events, flushes, and only
   * then resolves. A torn tail left by a dead writer is cut first. A failed write or flush cuts
   * the file back to its size before the append.
   * @throws StorageError SEQ_CONFLICT (with expectedSeq), SESSION_NOT_FOUND, SESSION_BUSY.
   */
  async append(id: string, fromSeq: number, events: readonly SerializedEvent[]): Promise<void> {
    await this.#folder.exclusive(id, async () => {
      const held = this.#logs.held.get(id);
      const handle = held?.handle ?? (await this.#folder.openFile(id, "r+"));
      if (handle === undefined) throw sessionNotFound(id);
      if (held !== undefined) held.handle = handle;
      try {
        const state = held?.state ?? (await this.#logs.stateOf(id, handle));
        if (state.length !== fromSeq) {
          throw seqConflict(id, state.length, fromSeq);
        }
        if (events.length === 0) return;
        this.#logs.forgetState(id);
        if (state.size > state.intactEnd) await this.#files.cut(handle, state.intactEnd);
        const written = await this.#lines.write(events, state.length, state.intactEnd, (data) =>
          this.#files.writeAt(handle, data, state.intactEnd),
        );
        const size = state.intactEnd + written.bytes;
        state.markers.push(...written.markers);
        this.#logs.record(id, {
          ...state,
          size,
          length: state.length + events.length,
          intactEnd: size,
          markers: state.markers,
          last: written.last,
        });
      } finally {
        if (held === undefined) await handle.close();
      }
    });
    if (events.length > 0) this.#changes.notify(id);
  }

  /**
   * Streams the log: header, intact events, torn tail. Undefined when there is none — also for a
   * long id whose old name (previous build) holds another id's log, and for an id whose name is a
   * long id's old name holding that long id's log (see {@link locateLog}).
   * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG (location: the file; line; seq), also
   *   when the header of the file under the id's own name names another id.
   */
  async load(id: string): Promise<StoredLog | undefined> {
    this.#assertOpen();
    try {
      const handle = await this.#folder.openFile(id, "r");
      if (handle === undefined) return undefined;
      try {
        const key = fileKey(handle);
        const events: unknown[] = [];
        const markers: IndexedMarker[] = [];
        const scan = await this.#logs.scan(id, handle, (event, line) => {
          events.push(event);
          collectMarker(markers, event, line.end);
          return undefined;
        });
        this.#logs.remember(id, key, scan, markers);
        return { header: scan.header, events, tornTail: scan.tornTail };
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /**
   * Reads the log from `fromSeq` on, without the writer lock, reading only what is new. A `stat`
   * tells whether the file is the one this instance last read or wrote (device, inode) and how
   * its size moved: when that read or write left `fromSeq` intact events, nothing more is read
   * if the size is the same, and only the bytes after those events if it grew — once two small
   * reads show the header line and the last intact line still where they were (see
   * {@link LineCheck}). Otherwise the whole file is read: the events from `fromSeq` on when it
   * holds that many, else all of them with `from` 0. A partial last line (a writer in the middle
   * of a batch, or a dead one) is a torn tail.
   * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG (location: the file; line; seq).
   */
  async loadFrom(
    id: string,
    fromSeq: number,
    limit?: number,
    maxBytes?: number,
  ): Promise<StoredSuffix | undefined> {
    this.#assertOpen();
    checkPageLimit(limit);
    checkPageBytes(maxBytes);
    if (limit !== undefined || maxBytes !== undefined) {
      return this.#logs.page(id, fromSeq, limit ?? Number.POSITIVE_INFINITY, maxBytes);
    }
    try {
      // Never the state trusted under the writer lock without a stat: a reader always checks.
      const known = this.#logs.states.get(id);
      const unchanged = known !== undefined && known.length === fromSeq ? known : undefined;
      if (unchanged !== undefined) {
        const path = this.#folder.where(id);
        const info =
          path === undefined ? undefined : statSync(path, { bigint: true, throwIfNoEntry: false });
        if (info === undefined) return undefined;
        const now = keyOf(info);
        if (now.key === unchanged.key && now.size === unchanged.size) {
          const tornTail = unchanged.size > unchanged.intactEnd;
          return { header: unchanged.header, events: [], tornTail, from: fromSeq };
        }
      }
      const handle = await this.#folder.openFile(id, "r");
      if (handle === undefined) return undefined;
      try {
        // The identity of the file being read, which may have changed since the stat above.
        const now = fileKey(handle);
        if (
          known !== undefined &&
          known.key === now.key &&
          known.length === fromSeq &&
          now.size > known.size &&
          (await stillHolds(handle, known))
        ) {
          return await this.#logs.readAfter(id, handle, known, now.size);
        }
        return await this.#logs.readFrom(id, handle, now, fromSeq);
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /**
   * The message-producing events of a log's settled part, from one read that parses only them and
   * the turn markers (see {@link scanSettled} and {@link SessionBackend.loadSettled}). What this
   * read learnt of the file up to the last `turn/end` is remembered as a state of it at that size,
   * so that the writer's next reads parse only the lines after it.
   */
  async loadSettled(id: string): Promise<StoredSettledPage | undefined> {
    this.#assertOpen();
    try {
      const handle = await this.#folder.openFile(id, "r");
      if (handle === undefined) return undefined;
      try {
        const file = fileKey(handle);
        const location = this.#folder.path(id);
        const scan = await scanSettled(handle, location, this.#chunkBytes);
        checkNamed(scan.header, id, location);
        if (scan.last !== undefined && this.#logs.held.get(id)?.state === undefined) {
          this.#logs.states.set(id, {
            key: file.key,
            size: scan.settledEnd,
            length: scan.settled,
            intactEnd: scan.settledEnd,
            header: scan.header,
            headerEnd: scan.headerEnd,
            markers: scan.markers,
            last: scan.last,
          });
        }
        return { header: scan.header, settled: scan.settled, events: scan.events };
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /**
   * Calls `onChange` after this instance's own durable writes to session `id` and soon after other
   * processes' (through the folder watch, or polling); see {@link SessionBackend.subscribe}.
   */
  subscribe(id: string, onChange: () => void): Unsubscribe {
    this.#assertOpen();
    return this.#changes.subscribe(id, onChange);
  }

  async has(id: string): Promise<boolean> {
    this.#assertOpen();
    try {
      const path = this.#folder.where(id);
      if (path === undefined) return false;
      // Metadata calls like this one are done synchronously: they take microseconds, less than a
      // round trip through the thread pool.
      return statSync(path, { throwIfNoEntry: false }) !== undefined;
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /** Every listed id, from the listing index (brought up to date with the folder first). */
  async ids(): Promise<string[]> {
    this.#assertOpen();
    try {
      return await this.#index.ids();
    } catch (error) {
      throw refused(error, this.sessionsDir);
    }
  }

  /** The explicit title in the title file beside the log. */
  async readTitle(id: string): Promise<string | undefined> {
    this.#assertOpen();
    try {
      return this.#titles.explicit(id);
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /**
   * Sets or clears the explicit title in the title file beside the log, as the catalog's
   * `setTitle` does.
   * @throws StorageError SESSION_NOT_FOUND.
   */
  writeTitle(id: string, title: string | null): Promise<void> {
    return this.catalog.setTitle(id, title);
  }

  /**
   * The count and the last turn marker at or before `boundary`, from what this instance knows of
   * the file when it is unchanged, else from one read of it (which is then remembered).
   */
  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    this.#assertOpen();
    return this.#forks.forkPoint(id, boundary);
  }

  /**
   * Publishes the child: its own header line, then the source's event lines 0…`boundary`
   * copied byte for byte (never re-serialized).
   * @throws StorageError SESSION_NOT_FOUND (source), SESSION_ALREADY_EXISTS (child),
   *   CORRUPT_LOG when the source has fewer intact events than the boundary asks for.
   */
  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    // No writer lock of the child, and no lock file for it: the child is written whole under a
    // temp name and published by a link that fails when its name is taken, so no other writer
    // sees it half made and no two make it. Whoever writes it next takes its lock.
    await this.#folder.queued(header.id, () => this.#forks.fork(sourceId, boundary, header));
    this.#changes.notify(header.id);
  }

  /**
   * Cuts the file to the end of event `keep - 1` (header plus `keep` events) and flushes, then
   * appends `closers` and flushes.
   * @throws StorageError SESSION_NOT_FOUND; CORRUPT_LOG when fewer than `keep` events are intact.
   */
  async repair(id: string, keep: number, closers: readonly SerializedEvent[]): Promise<void> {
    await this.#folder.exclusive(id, async () => {
      this.#logs.dropHandle(id);
      const handle = await this.#folder.openFile(id, "r+");
      if (handle === undefined) throw sessionNotFound(id);
      try {
        const state = await this.#logs.stateOf(id, handle);
        const prefix = await prefixOf(this.#folder.path(id), handle, state, keep, this.#copyBytes);
        this.#logs.forgetState(id);
        if (state.size > prefix.end) await this.#files.cut(handle, prefix.end);
        const written =
          closers.length === 0
            ? undefined
            : await this.#lines.write(closers, keep, prefix.end, (data) =>
                this.#files.writeAt(handle, data, prefix.end),
              );
        const size = prefix.end + (written?.bytes ?? 0);
        const kept = state.markers.filter((m) => m.seq < keep);
        if (written !== undefined) kept.push(...written.markers);
        this.#logs.record(id, {
          ...state,
          size,
          length: keep + closers.length,
          intactEnd: size,
          markers: kept,
          // Without closers the last line is the old one only when nothing intact was cut.
          last: written?.last ?? (keep === state.length ? state.last : undefined),
        });
      } finally {
        await handle.close();
      }
    });
    this.#changes.notify(id);
  }

  /**
   * Removes the log under the session's writer lock and flushes the folder.
   * @throws StorageError SESSION_BUSY when another process holds the lock.
   */
  async delete(id: string): Promise<boolean> {
    const deleted = await this.#folder.exclusive(id, async () => {
      this.#logs.dropHandle(id);
      this.#logs.forgetState(id);
      const path = this.#folder.where(id);
      if (path === undefined) return false;
      try {
        await unlink(path);
      } catch (error) {
        if (isErrno(error, "ENOENT")) return false;
        throw error;
      }
      this.#index.noteRemoved(basename(path));
      await this.#titles.deleted(id);
      await this.#files.syncDir(this.sessionsDir);
      return true;
    });
    if (deleted) this.#changes.notify(id);
    return deleted;
  }

  /**
   * Takes the session's writer lock until the returned release is called. While it is held the
   * log's file stays open between appends and this instance's own record of it is trusted.
   */
  async lock(id: string): Promise<ReleaseLock> {
    this.#assertOpen();
    const name = encodeSessionId(id);
    const release = await this.#locks.acquire(name, id);
    if (!this.#logs.held.has(id)) this.#logs.held.set(id, { handle: undefined, state: undefined });
    return async () => {
      await release();
      if (this.#locks.holds(name)) return;
      // Closed only after the writes queued for this id, which may still be using the handle.
      // The session is unloaded: what this instance knows of its file goes with the handle.
      await this.#folder.run(id, async () => {
        if (this.#locks.holds(name)) return;
        const held = this.#logs.held.get(id);
        this.#logs.held.delete(id);
        this.#logs.states.delete(id);
        await held?.handle?.close();
      });
    };
  }

  /** Releases every lock this instance holds and closes the files it keeps open; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watch.close();
    this.#locks.releaseAllSync();
    await this.#index.settle();
    this.#logs.states.clear();
    const held = [...this.#logs.held.values()];
    this.#logs.held.clear();
    await Promise.all(held.map((log) => log.handle?.close()));
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error(`the JSONL backend at ${this.root} is closed`);
  }
}
