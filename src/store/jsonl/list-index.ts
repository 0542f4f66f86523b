// What listing knows of every log of a JSONL sessions folder, kept sorted newest first and checked against the folder before use.
import { closeSync, fstatSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { parseHeaderLine } from "../../log/jsonl-codec.js";
import { isErrno } from "../../util/errno.js";
import type { ListKey } from "../listing/list-cursor.js";
import { LOG_SUFFIX, legacyLogFileName, logFileName } from "./layout.js";
import { openIfPresentSync, readFirstLineSync } from "./line-reader.js";
import type {
  FolderStamp,
  HeaderEntry,
  IndexEntry,
  IndexFile,
  SkippedEntry,
} from "./list-index-file.js";

/** How many header lines are read between two turns of the event loop. */
const HEADERS_PER_TURN = 256;

/** The first read of a header line (a longer line is read on in larger chunks). */
const HEADER_READ_BYTES = 4096;

/**
 * How long after the folder's last change a read of its names is not trusted to have seen every
 * change: a file system stamps changes with a coarse clock, so a change made in the same tick as
 * the one the stamp shows, just after the names were read, leaves the stamp as it was. Seconds
 * for a stamp without a sub-second part (a file system that keeps whole seconds).
 */
const RACY_MS = 100;
const RACY_WHOLE_SECONDS_MS = 2000;

/** Saved again once this many entries changed since the file was written (or 1/32 of them, if more). */
const SAVE_AFTER_CHANGES = 64;

/** A listed entry with its sort key. */
interface Ranked {
  readonly entry: HeaderEntry;
  readonly createdAt: number;
  /** The id as UTF-8: ids are ordered by bytes (see compareNewestFirst in list-cursor.ts). */
  readonly idBytes: Buffer;
}

/** The filters and page size of one selection. */
export interface Selection {
  readonly cwd: string | undefined;
  readonly parentSession: string | undefined;
  readonly after: ListKey | undefined;
  readonly count: number;
}

/**
 * Every `.jsonl` name of a sessions folder with what listing needs of it (the header and where
 * its line ends, or why it is not listed), loaded from the index file once and kept in memory,
 * its listed entries sorted newest first. Before each use one `stat` of the folder is compared
 * with the stamp of the last read of its names; when they differ (a create, delete or copy by
 * any process or by hand; also lock and temp files) the names are read again, headers are read
 * for new names only and vanished names dropped. Files it could not list are `stat`ed on every
 * use and read again when they change. This process's creates, forks and deletes are noted as
 * they happen. The file is saved (whole, atomically) when no trusted one exists or enough has
 * changed since; see {@link IndexFile}.
 */
export class ListIndex {
  readonly #dir: string;
  readonly #file: IndexFile;
  readonly #entries = new Map<string, IndexEntry>();
  /** Names of skipped entries, `stat`ed on every use. */
  readonly #skipped = new Set<string>();
  /** How many entries are under a long id's previous-build name (whose listing depends on other names). */
  #legacy = 0;
  /** The listed entries, newest first; undefined when it is to be rebuilt. */
  #order: Ranked[] | undefined;
  /** The folder stamp the entries reflect; undefined when its names must be read again. */
  #stamp: FolderStamp | undefined;
  #loaded = false;
  /** Whether the index file holds a snapshot this instance read or wrote. */
  #onDisk = false;
  /** Whether that snapshot has a folder stamp (else a new process reads the folder's names first). */
  #onDiskStamped = false;
  /** Entries changed since the file was read or written. */
  #changes = 0;
  #refreshing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #saving: Promise<void> | undefined;
  #saveFailed = false;
  readonly #buffer = Buffer.allocUnsafe(HEADER_READ_BYTES);

  constructor(dir: string, file: IndexFile) {
    this.#dir = dir;
    this.#file = file;
  }

  /**
   * Brings the index up to date with the folder: loads the file on first use, then compares the
   * folder's stamp and reads its names again when it moved. Calls made meanwhile share one run.
   */
  refresh(): Promise<void> {
    if (this.#refreshing === undefined) {
      this.#refreshing = this.#refresh().finally(() => {
        this.#refreshing = undefined;
      });
      return this.#refreshing;
    }
    // The run under way may have looked at the folder before the caller's last change: the
    // caller waits for it, then for one more run (shared by every caller arriving meanwhile).
    this.#queued ??= this.#refreshing
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.refresh();
      });
    return this.#queued;
  }

  /**
   * Up to `count` listed entries, newest first, strictly after `after`, matching the filters:
   * the start is found by binary search, then entries are taken in order.
   */
  select(selection: Selection): HeaderEntry[] {
    const order = this.#sorted();
    let index = 0;
    if (selection.after !== undefined) {
      const key = rankOf(selection.after.at, selection.after.id);
      let high = order.length;
      while (index < high) {
        const middle = (index + high) >>> 1;
        if (compareRanks(key, order[middle] as Ranked) < 0) high = middle;
        else index = middle + 1;
      }
    }
    const found: HeaderEntry[] = [];
    for (; index < order.length && found.length < selection.count; index++) {
      const { header } = (order[index] as Ranked).entry;
      if (selection.cwd !== undefined && header.cwd !== selection.cwd) continue;
      if (
        selection.parentSession !== undefined &&
        header.parentSession !== selection.parentSession
      ) {
        continue;
      }
      found.push((order[index] as Ranked).entry);
    }
    return found;
  }

  /** The id of every listed entry, newest first, once the index is brought up to date. */
  async ids(): Promise<string[]> {
    await this.refresh();
    return this.#sorted().map((ranked) => ranked.entry.header.id);
  }

  /** Reads the file `name` again: a page found it other than its entry says. */
  reread(name: string): void {
    this.#remove(name);
    this.#read(name);
  }

  /** Notes a log this process has just published under its own name. */
  noteCreated(header: SessionHeader, headerEnd: number): void {
    if (this.#loaded) this.#add({ name: logFileName(header.id), header, headerEnd });
  }

  /** Notes a log file this process has just removed (or moved away from `name`). */
  noteRemoved(name: string): void {
    if (this.#loaded) this.#remove(name);
  }

  /** Waits for a save under way; for closing. */
  async settle(): Promise<void> {
    await this.#saving;
  }

  async #refresh(): Promise<void> {
    if (!this.#loaded) this.#load();
    const folder = statSync(this.#dir, { bigint: true, throwIfNoEntry: false });
    if (folder === undefined) {
      for (const name of [...this.#entries.keys()]) this.#remove(name);
      this.#stamp = undefined;
      return;
    }
    const stamp = this.#stamp;
    if (stamp === undefined || stamp.ino !== folder.ino || stamp.mtimeNs !== folder.mtimeNs) {
      await this.#readNames(folder);
    }
    this.#recheckSkipped();
    const due = Math.max(SAVE_AFTER_CHANGES, this.#entries.size >>> 5);
    // A snapshot saved without a stamp (too soon after a change) is saved again once one is trusted.
    const stampDue = !this.#onDiskStamped && this.#stamp !== undefined;
    if (!this.#onDisk || stampDue || this.#changes >= due) this.#save();
  }

  #load(): void {
    this.#loaded = true;
    const snapshot = this.#file.load();
    if (snapshot === undefined) return;
    for (const entry of snapshot.entries) this.#add(entry);
    this.#stamp = snapshot.stamp;
    this.#onDisk = true;
    this.#onDiskStamped = snapshot.stamp !== undefined;
    this.#changes = 0;
  }

  /** Reads the folder's names: drops vanished ones, reads the headers of new ones. */
  async #readNames(folder: { ino: bigint; mtimeNs: bigint }): Promise<void> {
    // Taken before the names are read: any change after this instant gets a later stamp.
    const started = Date.now();
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch (error) {
      if (!isErrno(error, "ENOENT")) throw error;
      names = [];
    }
    const present = new Set(names.filter((name) => name.endsWith(LOG_SUFFIX)));
    let known = 0;
    const added: string[] = [];
    for (const name of present) {
      if (this.#entries.has(name)) known++;
      else added.push(name);
    }
    // Every entry's name is still there when as many names are known as there are entries.
    if (known !== this.#entries.size) {
      for (const name of [...this.#entries.keys()]) if (!present.has(name)) this.#remove(name);
    }
    let read = 0;
    for (const name of added) {
      if (++read % HEADERS_PER_TURN === 0) {
        await new Promise((next) => setImmediate(next));
        // Noted by this process's own create meanwhile.
        if (this.#entries.has(name)) continue;
      }
      this.#read(name);
    }
    const stampMs = Number(folder.mtimeNs / 1_000_000n);
    const racy = folder.mtimeNs % 1_000_000_000n === 0n ? RACY_WHOLE_SECONDS_MS : RACY_MS;
    this.#stamp =
      started - stampMs >= racy ? { ino: folder.ino, mtimeNs: folder.mtimeNs } : undefined;
  }

  /** Reads skipped files again when their size or change time moved; drops vanished ones. */
  #recheckSkipped(): void {
    for (const name of [...this.#skipped]) {
      const entry = this.#entries.get(name) as SkippedEntry;
      const now = statSync(join(this.#dir, name), { bigint: true, throwIfNoEntry: false });
      if (now === undefined) this.#remove(name);
      else if (now.size !== entry.size || now.mtimeNs !== entry.mtimeNs) this.reread(name);
    }
  }

  /** Reads the header of the file `name` into an entry; nothing when it is gone. */
  #read(name: string): void {
    const entry = readEntry(join(this.#dir, name), name, this.#buffer);
    if (entry !== undefined) this.#add(entry);
  }

  /** Adds an entry, in place of the one of the same name. */
  #add(entry: IndexEntry): void {
    this.#remove(entry.name);
    this.#entries.set(entry.name, entry);
    this.#changes++;
    if (entry.header === undefined) {
      this.#skipped.add(entry.name);
      return;
    }
    if (entry.ownName !== undefined) this.#legacy++;
    // Other entries' listing may depend on this name (see #isListed).
    if (this.#legacy > 0) this.#order = undefined;
    if (this.#order === undefined || !this.#isListed(entry)) return;
    const ranked = rankOf(entry.header.createdAt, entry.header.id, entry);
    this.#order.splice(this.#position(ranked), 0, ranked);
  }

  #remove(name: string): void {
    const entry = this.#entries.get(name);
    if (entry === undefined) return;
    this.#entries.delete(name);
    this.#changes++;
    if (entry.header === undefined) {
      this.#skipped.delete(name);
      return;
    }
    if (entry.ownName !== undefined) this.#legacy--;
    if (this.#legacy > 0 || entry.ownName !== undefined) this.#order = undefined;
    if (this.#order === undefined) return;
    const at = this.#position(rankOf(entry.header.createdAt, entry.header.id));
    if (this.#order[at]?.entry === entry) this.#order.splice(at, 1);
  }

  /** Where `ranked` goes in the order: the first position not before it. */
  #position(ranked: Ranked): number {
    const order = this.#order as Ranked[];
    let low = 0;
    let high = order.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareRanks(order[middle] as Ranked, ranked) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  #sorted(): Ranked[] {
    if (this.#order !== undefined) return this.#order;
    const order: Ranked[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.header !== undefined && this.#isListed(entry)) {
        order.push(rankOf(entry.header.createdAt, entry.header.id, entry));
      }
    }
    order.sort(compareRanks);
    this.#order = order;
    return order;
  }

  /**
   * Whether a readable log is listed: always under its id's own name; under the previous build's
   * name of a long id only while no file has the id's own name (a move cut short by a crash).
   */
  #isListed(entry: HeaderEntry): boolean {
    return entry.ownName === undefined || !this.#entries.has(entry.ownName);
  }

  #save(): void {
    if (this.#saving !== undefined || this.#saveFailed) return;
    const snapshot = { stamp: this.#stamp, entries: [...this.#entries.values()] };
    this.#changes = 0;
    this.#saving = this.#file
      .save(snapshot)
      .then(
        () => {
          this.#onDisk = true;
          this.#onDiskStamped = snapshot.stamp !== undefined;
        },
        () => {
          // A read-only or full disk: the index is a cache, listing goes on without the file.
          this.#saveFailed = true;
        },
      )
      .finally(() => {
        this.#saving = undefined;
      });
  }
}

function rankOf(createdAt: number, id: string, entry?: HeaderEntry): Ranked {
  return { entry: entry as HeaderEntry, createdAt, idBytes: Buffer.from(id, "utf8") };
}

/** Newest first, as compareNewestFirst in list-cursor.ts, on precomputed id bytes. */
function compareRanks(a: Ranked, b: Ranked): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return Buffer.compare(b.idBytes, a.idBytes);
}

/**
 * The entry of the log file at `path` (named `name`) from its first line, or undefined when
 * there is no such file (deleted a moment ago). A file whose first line is not a header this
 * build reads, or whose header names an id whose log belongs under another name, is skipped.
 */
export function readEntry(path: string, name: string, buffer: Buffer): IndexEntry | undefined {
  const fd = openIfPresentSync(path);
  if (fd === undefined) return undefined;
  try {
    let header: SessionHeader | undefined;
    let end = 0;
    try {
      const first = readFirstLineSync(fd, buffer);
      if (first !== undefined) {
        header = parseHeaderLine(first.text, path);
        end = first.end;
      }
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
    }
    if (header !== undefined) {
      const ownName = logFileName(header.id);
      if (ownName === name) return { name, header, headerEnd: end };
      if (legacyLogFileName(header.id) === name) return { name, header, headerEnd: end, ownName };
    }
    const info = fstatSync(fd, { bigint: true });
    return { name, size: info.size, mtimeNs: info.mtimeNs };
  } finally {
    closeSync(fd);
  }
}
