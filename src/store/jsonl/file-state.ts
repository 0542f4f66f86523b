// What a JSONL backend remembers of a log file between reads and writes: identity, size, intact prefix, turn markers.
import { type BigIntStats, fstatSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { SessionHeader } from "../../generated.js";
import type { TurnMarker } from "../../log/invariants.js";
import { formatHeaderLine } from "../../log/jsonl-codec.js";

/**
 * What an instance knows of a log file, so that an append or a fork need not read it again and
 * `loadFrom` reads only what follows it. It holds only while the file is the same file (device and
 * inode) at the same size; anything else — another writer, a repair, a delete and re-create —
 * shows as a mismatch and the state is recovered by reading the file. A file that only grew is
 * read on from `intactEnd` by `loadFrom` (the intact lines of a file are never rewritten: a
 * repair cuts only a torn tail), once {@link FileState.last} shows it is still the same log.
 */
export interface FileState {
  /** Device and inode, as one string. */
  readonly key: string;
  readonly size: number;
  /** The number of intact events. */
  readonly length: number;
  /** The byte offset just past the last intact line. */
  readonly intactEnd: number;
  readonly header: SessionHeader;
  readonly headerEnd: number;
  /**
   * Every `turn/start` and `turn/end` among the intact events, in seq order, with the byte offset
   * just past its line: a fork finds its boundary's marker and byte offset from these without
   * parsing the log. Shared by the states of one file as it grows (appends push to it).
   */
  readonly markers: IndexedMarker[];
  /** The first bytes of the last intact line (the header when there are none), when known. */
  readonly last: LineCheck | undefined;
}

/** A turn marker of a log and where its line ends. */
export interface IndexedMarker extends TurnMarker {
  readonly end: number;
}

/**
 * Where a line starts and its first bytes (at most {@link CHECK_BYTES}). The inode of a deleted
 * file is soon given to the next file created — often the same session created again, and larger —
 * so device, inode and a grown size do not prove that a remembered prefix is still there; the
 * header line and the first bytes of the last line (type, seq and time of the event), each at the
 * same offset, do, for two small reads.
 */
export interface LineCheck {
  readonly start: number;
  readonly bytes: Buffer;
}

/** How many bytes of a line a {@link LineCheck} keeps: an event line's type, seq and time. */
export const CHECK_BYTES = 64;

/**
 * An open file, by its descriptor: a `FileHandle`, or a descriptor opened synchronously where a
 * round trip through the thread pool would cost more than the call (a fork's source).
 */
export interface OpenFile {
  readonly fd: number;
}

/** The identity and size of an open file. */
export function fileKey(handle: OpenFile): { key: string; size: number } {
  return keyOf(fstatSync(handle.fd, { bigint: true }));
}

/** The identity and size a `stat` shows. */
export function keyOf(info: BigIntStats): { key: string; size: number } {
  return { key: `${info.dev}:${info.ino}`, size: Number(info.size) };
}

/** The check of a line starting at byte `start` of a file, from its text or its bytes. */
export function lineCheck(start: number, line: string | Uint8Array): LineCheck {
  const bytes =
    typeof line === "string"
      ? Buffer.from(line.slice(0, CHECK_BYTES), "utf8").subarray(0, CHECK_BYTES)
      : line.subarray(0, CHECK_BYTES);
  // A copy: a slice would keep the whole batch or line it was cut from alive.
  return { start, bytes: Buffer.from(bytes) };
}

/**
 * Whether an open file still holds the log `state` describes, as far as two small reads can
 * tell: its header line (in canonical form) and the first bytes of its last intact line, each
 * where it was. False when the state has no check of its last line.
 */
export async function stillHolds(handle: FileHandle, state: FileState): Promise<boolean> {
  if (state.last === undefined) return false;
  const header = Buffer.from(formatHeaderLine(state.header), "utf8");
  return (
    header.length === state.headerEnd &&
    (await holdsAt(handle, 0, header)) &&
    (await holdsAt(handle, state.last.start, state.last.bytes))
  );
}

async function holdsAt(handle: FileHandle, start: number, bytes: Buffer): Promise<boolean> {
  const found = Buffer.allocUnsafe(bytes.length);
  const { bytesRead } = await handle.read(found, 0, found.length, start);
  return bytesRead === found.length && found.equals(bytes);
}

/** Adds `event` to `markers` when it is a turn marker whose line ends at `end`. */
export function collectMarker(
  markers: IndexedMarker[],
  event: Record<string, unknown>,
  end: number,
): void {
  const type = event.type;
  if (type !== "turn/start" && type !== "turn/end") return;
  const turn = (event.data as { turn?: unknown } | undefined)?.turn;
  markers.push({ seq: event.seq as number, type, turn: typeof turn === "number" ? turn : 0, end });
}

/** The last marker with a seq at or before `seq` (binary search over seq order). */
export function markerAt(
  markers: readonly IndexedMarker[],
  seq: number,
): IndexedMarker | undefined {
  return markers[markersThrough(markers, seq) - 1];
}

/**
 * The seq of the first `turn/end` after `seq` among the first `length` events. The markers of a
 * file are shared by its states as it grows, so some may lie past an older state's `length`.
 */
export function turnEndAfter(
  markers: readonly IndexedMarker[],
  seq: number,
  length: number,
): number | undefined {
  for (let i = markersThrough(markers, seq); i < markers.length; i++) {
    const marker = markers[i] as IndexedMarker;
    if (marker.seq >= length) return undefined;
    if (marker.type === "turn/end") return marker.seq;
  }
  return undefined;
}

/** How many markers have a seq at or before `seq` (binary search over seq order). */
function markersThrough(markers: readonly IndexedMarker[], seq: number): number {
  let low = 0;
  let high = markers.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((markers[mid] as IndexedMarker).seq <= seq) low = mid + 1;
    else high = mid;
  }
  return low;
}
