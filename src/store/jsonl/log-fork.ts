// Forking a JSONL log: where a fork may cut it (from what is known of the file, or by bisecting it for a turn/end), and the child published whole, the source's lines copied byte for byte.
import { closeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { formatHeaderLine, parseEventLine, parseHeaderLine } from "../../log/jsonl-codec.js";
import type { StoredForkPoint } from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";
import { copyRange } from "./durable-file.js";
import {
  type FileState,
  fileKey,
  type LineCheck,
  lineCheck,
  markerAt,
  turnEndAfter,
} from "./file-state.js";
import { readFirstLineSync } from "./line-reader.js";
import type { ListIndex } from "./list-index.js";
import { type LogFolder, refused } from "./log-folder.js";
import { type LogStates, MIN_READ_BYTES } from "./log-states.js";
import { seekEventLine } from "./seek-line.js";

/** A fork boundary's line found by {@link seekEventLine} in a file of this identity and size. */
interface SoughtForkPoint {
  readonly key: string;
  readonly size: number;
  readonly seq: number;
  readonly headerEnd: number;
  readonly end: number;
}
/** How many sought fork points an instance keeps at most. */
const SOUGHT_KEPT = 64;

/** Fork points and forks of a JSONL store's logs, for one backend instance. */
export class LogForks {
  readonly #folder: LogFolder;
  readonly #logs: LogStates;
  readonly #index: ListIndex;
  readonly #copyBytes: number;
  /** Where `forkPoint` found a boundary by bisecting a log, for the `fork` that follows it. */
  readonly #sought = new Map<string, SoughtForkPoint>();

  constructor(folder: LogFolder, logs: LogStates, index: ListIndex, copyBytes: number) {
    this.#folder = folder;
    this.#logs = logs;
    this.#index = index;
    this.#copyBytes = copyBytes;
  }

  /**
   * The count and the last turn marker at or before `boundary`, from what this instance knows of
   * the file when it is unchanged, else from one read of it (which is then remembered).
   */
  async forkPoint(id: string, boundary: number | undefined): Promise<StoredForkPoint | undefined> {
    let state: FileState | undefined;
    try {
      state = this.#logs.knownState(id);
      if (state === undefined && boundary !== undefined) {
        const sought = this.#seek(id, boundary);
        if (sought !== undefined) return sought;
      }
      state ??= await this.#logs.readState(id);
    } catch (error) {
      throw refused(error, this.#folder.ownPath(id));
    }
    if (state === undefined) return undefined;
    const at = boundary ?? state.length - 1;
    const found = markerAt(state.markers, at);
    const marker =
      found === undefined ? undefined : { seq: found.seq, type: found.type, turn: found.turn };
    const closedAt =
      found?.type === "turn/start" ? turnEndAfter(state.markers, at, state.length) : undefined;
    return {
      header: state.header,
      length: state.length,
      marker,
      ...(closedAt === undefined ? {} : { closedAt }),
    };
  }

  /**
   * The fork point of a log this instance knows nothing of, when `boundary` is a `turn/end`: its
   * line is found by bisecting the file ({@link seekEventLine}), not by reading the log, and where
   * it ends is kept for the `fork` that follows. Undefined when the file cannot be read that way
   * (its header or lines not in canonical form, damage, another event at the boundary): the
   * caller then reads the whole log, which also tells the errors.
   */
  #seek(id: string, boundary: number): StoredForkPoint | undefined {
    const handle = this.#folder.openFileSync(id);
    if (handle === undefined) return undefined;
    try {
      const file = fileKey(handle);
      const first = readFirstLineSync(handle.fd, Buffer.allocUnsafe(MIN_READ_BYTES));
      if (first === undefined) return undefined;
      const header = parseHeaderLine(first.text, this.#folder.path(id));
      if (header.id !== id) return undefined;
      const line = seekEventLine(handle, first.end, file.size, boundary);
      if (line === undefined) return undefined;
      const event = parseEventLine(line.text);
      const turn = (event?.data as { turn?: unknown } | undefined)?.turn;
      if (event?.type !== "turn/end" || event.seq !== boundary || typeof turn !== "number") {
        return undefined;
      }
      // Kept until the fork that follows; a fork that never comes (refused) leaves a few behind.
      if (this.#sought.size >= SOUGHT_KEPT) this.#sought.clear();
      this.#sought.set(id, { ...file, seq: boundary, headerEnd: first.end, end: line.end });
      return {
        header,
        length: boundary + 1,
        marker: { seq: boundary, type: "turn/end", turn },
      };
    } catch (error) {
      // A header this build does not read is told by the whole read, with its location.
      if (error instanceof StorageError) return undefined;
      throw error;
    } finally {
      closeSync(handle.fd);
    }
  }
  /**
   * Publishes the child: its own header line, then the source's event lines 0…`boundary`
   * copied byte for byte (never re-serialized). Runs in the child's queue (see `JsonlBackend.fork`).
   * @throws StorageError SESSION_NOT_FOUND (source), SESSION_ALREADY_EXISTS (child),
   *   CORRUPT_LOG when the source has fewer intact events than the boundary asks for.
   */
  async fork(sourceId: string, boundary: number, header: SessionHeader): Promise<void> {
    if (await this.#forkSought(sourceId, boundary, header)) return;
    const source = await this.#folder.openFile(sourceId, "r");
    if (source === undefined) throw sessionNotFound(sourceId);
    try {
      const state = await this.#logs.stateOf(sourceId, source);
      const prefix = await prefixOf(
        this.#folder.path(sourceId),
        source,
        state,
        boundary + 1,
        this.#copyBytes,
      );
      const headerLine = Buffer.from(formatHeaderLine(header), "utf8");
      const file = await this.#folder.publish(header.id, async (write) => {
        await write(headerLine);
        await copyRange(source, state.headerEnd, prefix.end, write, this.#copyBytes);
      });
      const shift = headerLine.length - state.headerEnd;
      this.#logs.record(header.id, {
        key: file.key,
        size: file.size,
        length: boundary + 1,
        intactEnd: file.size,
        header,
        headerEnd: headerLine.length,
        markers: state.markers
          .filter((m) => m.seq <= boundary)
          .map((m) => ({ ...m, end: m.end + shift })),
        last: forkedLast(state, boundary, headerLine, shift),
      });
      this.#index.noteCreated(header, headerLine.length);
    } finally {
      await source.close();
    }
  }

  /**
   * The fork of a log whose boundary line `forkPoint` found by bisecting it, when the file is
   * still as it was: copies up to that line without reading the log (the child's state is read
   * when it is first written). Returns false, having done nothing, otherwise.
   */
  async #forkSought(sourceId: string, boundary: number, header: SessionHeader): Promise<boolean> {
    const sought = this.#sought.get(sourceId);
    this.#sought.delete(sourceId);
    if (sought === undefined || sought.seq !== boundary || this.#logs.held.has(sourceId))
      return false;
    const source = this.#folder.openFileSync(sourceId);
    if (source === undefined) throw sessionNotFound(sourceId);
    try {
      const now = fileKey(source);
      if (now.key !== sought.key || now.size !== sought.size) return false;
      const headerLine = Buffer.from(formatHeaderLine(header), "utf8");
      await this.#folder.publish(header.id, async (write) => {
        await write(headerLine);
        await copyRange(source, sought.headerEnd, sought.end, write, this.#copyBytes);
      });
      this.#index.noteCreated(header, headerLine.length);
      return true;
    } finally {
      closeSync(source.fd);
    }
  }
}

/**
 * Where the first `count` intact events end: found from the turn marker at or before the last
 * of them and the newlines after that marker, without parsing any line.
 * @throws StorageError CORRUPT_LOG when fewer than `count` events are intact.
 */
export async function prefixOf(
  location: string,
  handle: FileHandle,
  state: FileState,
  count: number,
  chunkBytes: number,
): Promise<{ end: number }> {
  if (count > state.length) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected at least ${count} intact events in ${location}, got ${state.length}`,
      { location: location },
    );
  }
  if (count === state.length) return { end: state.intactEnd };
  if (count === 0) return { end: state.headerEnd };
  const marker = markerAt(state.markers, count - 1);
  const from = marker?.end ?? state.headerEnd;
  const lines = count - 1 - (marker?.seq ?? -1);
  const end = lines === 0 ? from : await endOfLines(handle, from, lines, chunkBytes);
  return { end };
}

/**
 * The check of a child's last line: its header when it inherits nothing, the source's last intact
 * line (moved by `shift`) when it inherits all of them, else unknown (its first `loadFrom` reads
 * it whole).
 */
function forkedLast(
  source: FileState,
  boundary: number,
  headerLine: Buffer,
  shift: number,
): LineCheck | undefined {
  if (boundary === -1) return lineCheck(0, headerLine);
  if (boundary + 1 !== source.length || source.last === undefined) return undefined;
  return { start: source.last.start + shift, bytes: source.last.bytes };
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
