// What a JSONL backend knows of its log files and how it reads them: each file's state (length, turn markers, where its intact lines end) remembered and brought up to date by reading only what grew, the logs whose writer lock it holds, and pages of events read from the nearest known offset.
import { statSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { StorageError, show } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { formatHeaderLine, type LogLine } from "../../log/jsonl-codec.js";
import { isErrno } from "../../util/errno.js";
import type { StoredSuffix } from "../backend.js";
import { encodeSessionId } from "../ids/id-encoding.js";
import type { LockFiles } from "../locks/lock-files.js";
import { PageBytes } from "../reads/page-limit.js";
import {
  collectMarker,
  type FileState,
  fileKey,
  type IndexedMarker,
  keyOf,
  type LineCheck,
  lineCheck,
  markerAt,
  stillHolds,
} from "./file-state.js";
import { scanLogFile } from "./line-reader.js";
import { type LogFolder, refused } from "./log-folder.js";
import type { LogScan, ResumePoint } from "./log-reader.js";
import type { StateCache } from "./state-cache.js";

/** The smallest read of `loadFrom`'s incremental reads (which size their buffer to the new bytes). */
export const MIN_READ_BYTES = 4096;

/**
 * A log whose writer lock this instance holds through `JsonlBackend.lock`: its file stays
 * open between appends, and while the lock is held no other writer can change the file, so the
 * state recorded by this instance's last write is trusted without a `stat`.
 */
export interface HeldLog {
  handle: FileHandle | undefined;
  state: FileState | undefined;
}

/**
 * Refuses a log under the id's own name whose header names another id: damage or a misplaced
 * copy, not an absent session (answering "absent" would hide it, and a create would then fail on
 * the taken name).
 * @throws StorageError CORRUPT_LOG (location, line 1).
 */
export function checkNamed(header: SessionHeader, id: string, location: string): void {
  if (header.id === id) return;
  throw new StorageError(
    "CORRUPT_LOG",
    `expected the header of ${location} to name session ${show(id)}, got ${show(header.id)}`,
    { location, line: 1 },
  );
}

/** The seq of the line after a page and where that line starts. */
interface PageEnd {
  readonly seq: number;
  readonly end: number;
}

/**
 * Where to start reading a log to reach `seq`: just past the last turn marker or page end before
 * it (the line after holds a known seq at a known offset), else just past the header.
 */
function seekPoint(state: FileState, seq: number, pageEnd: PageEnd | undefined): ResumePoint {
  const marker = seq === 0 ? undefined : markerAt(state.markers, seq - 1);
  let length = marker === undefined ? 0 : marker.seq + 1;
  let intactEnd = marker === undefined ? state.headerEnd : marker.end;
  if (pageEnd !== undefined && pageEnd.seq <= seq && pageEnd.seq > length) {
    length = pageEnd.seq;
    intactEnd = pageEnd.end;
  }
  return { header: state.header, headerEnd: state.headerEnd, length, intactEnd };
}

/**
 * The states of a JSONL store's log files as one backend instance knows them: remembered (a
 * bounded number, {@link StateCache}) and trusted without a `stat` for the logs whose writer lock
 * it holds ({@link HeldLog}), each brought up to date by reading only what grew.
 */
export class LogStates {
  /** What reads and writes left known of logs, a bounded number of them (readers never say they are done). */
  readonly states: StateCache;
  /** The logs whose writer lock this instance holds, by id. */
  readonly held = new Map<string, HeldLog>();
  readonly #folder: LogFolder;
  readonly #locks: LockFiles;
  readonly #chunkBytes: number;
  /**
   * Where the last page read of each log ended (keyed by its remembered header, which a log read
   * anew replaces), so that reading page after page costs each page only.
   */
  readonly #pageEnds = new WeakMap<SessionHeader, PageEnd>();

  constructor(states: StateCache, folder: LogFolder, locks: LockFiles, chunkBytes: number) {
    this.states = states;
    this.#folder = folder;
    this.#locks = locks;
    this.#chunkBytes = chunkBytes;
  }

  /** The remembered state of the file now at the log's path, when it is still the same file. */
  knownState(id: string): FileState | undefined {
    const known = this.held.get(id)?.state ?? this.states.get(id);
    if (known === undefined) return undefined;
    const path = this.#folder.where(id);
    if (path === undefined) return undefined;
    try {
      const now = keyOf(statSync(path, { bigint: true }));
      return now.key === known.key && now.size === known.size ? known : undefined;
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  /** The state of the log read from its file, or undefined when there is none. */
  async readState(id: string): Promise<FileState | undefined> {
    const handle = await this.#folder.openFile(id, "r");
    if (handle === undefined) return undefined;
    try {
      return await this.stateOf(id, handle);
    } finally {
      await handle.close();
    }
  }

  /**
   * Streams a log through the read rules and checks that its header names `id`; also tells the
   * check of its last intact line (of the header's canonical form when it has no events).
   */
  async scan(
    id: string,
    handle: FileHandle,
    visit?: Parameters<typeof scanLogFile>[2],
  ): Promise<LogScan & { readonly last: LineCheck }> {
    const location = this.#folder.path(id);
    let lastLine: LogLine | undefined;
    const scan = await scanLogFile(
      handle,
      location,
      (event, line) => {
        lastLine = line;
        return visit?.(event, line);
      },
      this.#chunkBytes,
    );
    // Only the previous build's names of long ids may hold another id's log; those are told
    // apart before the file is opened.
    checkNamed(scan.header, id, location);
    // A header line not in canonical form fails its check: `loadFrom` then reads the whole file.
    const last =
      lastLine === undefined
        ? lineCheck(0, formatHeaderLine(scan.header))
        : lineCheck(lastLine.start, lastLine.text);
    return { ...scan, last };
  }

  /**
   * The events after the intact ones of `known`, a state of the open file that is still a prefix
   * of it: only the bytes past `known.intactEnd` are read. The new state is remembered unless a
   * write of this instance recorded a newer one meanwhile.
   */
  async readAfter(
    id: string,
    handle: FileHandle,
    known: FileState,
    size: number,
  ): Promise<StoredSuffix> {
    const events: unknown[] = [];
    const { tornTail } = await this.extend(id, handle, known, size, events);
    return { header: known.header, events, tornTail, from: known.length };
  }

  /**
   * Reads the lines after the intact ones `known` remembers (the file grew to `size`), keeping
   * their events in `keep` when given, and remembers the grown state when `known` is still the
   * remembered one.
   */
  async extend(
    id: string,
    handle: FileHandle,
    known: FileState,
    size: number,
    keep?: unknown[],
  ): Promise<{ state: FileState; tornTail: boolean }> {
    const markers: IndexedMarker[] = [];
    let lastLine: LogLine | undefined;
    // A buffer sized to the new bytes: a few appended lines should not cost a megabyte's allocation.
    const readBytes = Math.min(this.#chunkBytes, Math.max(MIN_READ_BYTES, size - known.intactEnd));
    const visit = (event: Record<string, unknown>, line: LogLine) => {
      keep?.push(event);
      collectMarker(markers, event, line.end);
      lastLine = line;
      return undefined;
    };
    const scan = await scanLogFile(handle, this.#folder.path(id), visit, readBytes, known);
    const state: FileState = {
      ...known,
      size: scan.end,
      length: scan.length,
      intactEnd: scan.intactEnd,
      // A copy, not a push: the old array may be shared with a held state.
      markers: markers.length === 0 ? known.markers : known.markers.concat(markers),
      last: lastLine === undefined ? known.last : lineCheck(lastLine.start, lastLine.text),
    };
    if (this.states.get(id) === known) this.states.set(id, state);
    return { state, tornTail: scan.tornTail };
  }

  /**
   * Reads the whole open file, keeping the events from `fromSeq` on (all of them, from 0, when
   * it holds fewer than `fromSeq`), and remembers its state for the next `loadFrom`.
   */
  async readFrom(
    id: string,
    handle: FileHandle,
    key: { key: string; size: number },
    fromSeq: number,
  ): Promise<StoredSuffix> {
    const events: unknown[] = [];
    const markers: IndexedMarker[] = [];
    // Events before `fromSeq` are dropped as they are read: memory holds only what is returned.
    const scan = await this.scan(id, handle, (event, line) => {
      if ((event.seq as number) >= fromSeq) events.push(event);
      collectMarker(markers, event, line.end);
      return undefined;
    });
    this.remember(id, key, scan, markers);
    if (scan.length >= fromSeq) {
      return { header: scan.header, events, tornTail: scan.tornTail, from: fromSeq };
    }
    // Fewer events than the caller knows (deleted and created again): it needs the whole log,
    // which the read above did not keep. Rare enough to read twice.
    const all: unknown[] = [];
    const whole = await this.scan(id, handle, (event) => {
      all.push(event);
      return undefined;
    });
    return { header: whole.header, events: all, tornTail: whole.tornTail, from: 0 };
  }

  /**
   * One page of `limit` events from `fromSeq` (from 0 when the log is shorter): the file's state
   * is brought up to date (reading only what grew), then reading starts at the turn marker or the
   * end of the previous page closest before `fromSeq` and stops after the page's last event —
   * with `maxBytes`, before the first event whose line would take the page past it.
   */
  async page(
    id: string,
    fromSeq: number,
    limit: number,
    maxBytes?: number,
  ): Promise<StoredSuffix | undefined> {
    try {
      const handle = await this.#folder.openFile(id, "r");
      if (handle === undefined) return undefined;
      try {
        const state = await this.grownState(id, handle);
        const from = fromSeq <= state.length ? fromSeq : 0;
        // Only what the state judged intact: lines appended since are read by the next page.
        const end = Math.min(state.length, from + limit);
        const events: unknown[] = [];
        const budget = new PageBytes(maxBytes);
        if (from < end) {
          const start = seekPoint(state, from, this.#pageEnds.get(state.header));
          // A buffer sized to what is left to read: a page of a few new lines (a watcher's read)
          // should not cost a megabyte's allocation.
          const readBytes = Math.min(
            this.#chunkBytes,
            Math.max(MIN_READ_BYTES, state.intactEnd - start.intactEnd),
          );
          await scanLogFile(
            handle,
            this.#folder.path(id),
            (event, line) => {
              const seq = event.seq as number;
              if (seq >= from) {
                if (!budget.takes(line.end - line.start)) {
                  // The next page starts at this line.
                  this.#pageEnds.set(state.header, { seq, end: line.start });
                  return "stop";
                }
                events.push(event);
              }
              if (seq + 1 < end) return undefined;
              this.#pageEnds.set(state.header, { seq: end, end: line.end });
              return "stop";
            },
            readBytes,
            start,
          );
        }
        // A full page says nothing of a torn tail: the next page tells.
        if (budget.cut) return { header: state.header, events, tornTail: false, from, cut: true };
        const tornTail = events.length < limit && state.size > state.intactEnd;
        return { header: state.header, events, tornTail, from };
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
  }

  /**
   * The state of an open log, current: remembered when unchanged, extended by reading only the
   * bytes after the remembered intact lines when the file grew (and still holds them), else
   * recovered by reading it whole.
   */
  async grownState(id: string, handle: FileHandle): Promise<FileState> {
    const trusted = this.held.get(id)?.state;
    if (trusted !== undefined) return trusted;
    const now = fileKey(handle);
    const known = this.states.get(id);
    // The same file, as large or larger, still holding its first and last intact lines.
    if (
      known !== undefined &&
      known.key === now.key &&
      now.size >= known.size &&
      (await stillHolds(handle, known))
    ) {
      if (now.size === known.size) return known;
      return (await this.extend(id, handle, known, now.size)).state;
    }
    return this.scanState(id, handle, now);
  }

  /** The state of an open log: remembered when the file is unchanged, else recovered by reading it. */
  async stateOf(id: string, handle: FileHandle): Promise<FileState> {
    const trusted = this.held.get(id)?.state;
    if (trusted !== undefined) return trusted;
    const key = fileKey(handle);
    const known = this.states.get(id);
    if (known !== undefined && known.key === key.key && known.size === key.size) return known;
    return this.scanState(id, handle, key);
  }

  /** The state of an open log read from the whole file (its turn markers, not its events), remembered. */
  async scanState(
    id: string,
    handle: FileHandle,
    key: { key: string; size: number },
  ): Promise<FileState> {
    const markers: IndexedMarker[] = [];
    const scan = await this.scan(id, handle, (event, line) => {
      collectMarker(markers, event, line.end);
      return undefined;
    });
    return this.remember(id, key, scan, markers);
  }
  remember(
    id: string,
    key: { key: string; size: number },
    scan: LogScan & { readonly last: LineCheck },
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
      last: scan.last,
    };
    // A size that moved while reading means another writer; the next write re-reads.
    if (key.size === scan.end) this.states.set(id, state);
    return state;
  }

  /** Records the state this instance's own write left; trusted while the writer lock is held. */
  record(id: string, state: FileState): void {
    this.states.set(id, state);
    const held = this.held.get(id);
    if (held !== undefined && this.#locks.holds(encodeSessionId(id))) held.state = state;
  }

  /** Forgets the state of a file about to change, so that a failure leaves it to be re-read. */
  forgetState(id: string): void {
    this.states.delete(id);
    const held = this.held.get(id);
    if (held !== undefined) held.state = undefined;
  }

  /** Closes the kept-open file of a held log (before a repair, a delete). */
  dropHandle(id: string): void {
    const held = this.held.get(id);
    if (held?.handle === undefined) return;
    const { handle } = held;
    held.handle = undefined;
    held.state = undefined;
    void handle.close().catch(() => undefined);
  }
}
