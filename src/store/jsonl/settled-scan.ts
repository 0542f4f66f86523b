// The settled part of a JSONL log for a writer resuming it: its message-producing lines and turn markers parsed, every other line only counted.
import type { FileHandle } from "node:fs/promises";
import { StorageError } from "../../errors.js";
import type { SessionHeader } from "../../generated.js";
import { missingHeaderLine, parseEventLine, parseHeaderLine } from "../../log/jsonl-codec.js";
import { collectMarker, type IndexedMarker, type LineCheck, lineCheck } from "./file-state.js";
import { type LineBytes, readLineBytes } from "./line-reader.js";

/** How every event line in canonical form starts (`JSON.stringify` puts `type` first). */
const CANONICAL_START = Buffer.from('{"type":"');

/** How a `turn/start` or `turn/end` line in canonical form starts. */
const TURN_MARKER_START = Buffer.from('{"type":"turn/');

/**
 * The member every message-producing event has. Inside a JSON string a quote is escaped, so these
 * bytes occur in a line only as a member name: every line of an event with a `surfaceOp` holds
 * them (some other lines may, in nested data; those are parsed and passed over).
 */
const SURFACE_OP_MEMBER = Buffer.from('"surfaceOp"');

/** What {@link scanSettled} found: the settled part of a log, up to its last `turn/end`. */
export interface SettledScan {
  readonly header: SessionHeader;
  readonly headerEnd: number;
  /** The seq after the last `turn/end` (0 without one, or when the log is not read this way). */
  readonly settled: number;
  /** The byte offset just past the last `turn/end`'s line. */
  readonly settledEnd: number;
  /** The check of the last `turn/end`'s line (undefined when `settled` is 0). */
  readonly last: LineCheck | undefined;
  /** The turn markers before `settled`, with where their lines end. */
  readonly markers: IndexedMarker[];
  /** The events with a `surfaceOp` before `settled`, fresh from `JSON.parse`, in seq order. */
  readonly events: unknown[];
}

/**
 * Reads a log once, in chunks, and parses only its turn markers and the lines holding a
 * `surfaceOp` member; the other lines — the chunks, most of a log — are counted, not parsed. A
 * parsed line must hold the seq its line number gives (a missing or extra line shows there). A
 * line not in canonical form ends the settled part before it (settled 0 when it comes before the
 * first `turn/end`): the caller reads the rest with every check, as for any log. A damaged line
 * is CORRUPT_LOG when a `turn/end` follows it; after the last one it is the tail's, read by the
 * caller.
 * @throws StorageError CORRUPT_LOG (no header line, a damaged line before the last turn/end),
 *   FORMAT_UNSUPPORTED (the header's version), as a full read would.
 */
export async function scanSettled(
  handle: FileHandle,
  location: string,
  chunkBytes: number,
): Promise<SettledScan> {
  let header: SessionHeader | undefined;
  let headerEnd = 0;
  let settled = 0;
  let settledEnd = 0;
  let last: LineCheck | undefined;
  const markers: IndexedMarker[] = [];
  const events: Record<string, unknown>[] = [];
  let damaged: { seq: number; line: number } | undefined;
  // Where the member was last found in the read buffer, and in which read.
  let hitRead = -2;
  let hit = -1;
  const holdsSurfaceOp = (line: LineBytes): boolean => {
    if (line.read === -1) {
      const at = line.bytes.indexOf(SURFACE_OP_MEMBER, line.from);
      return at !== -1 && at < line.to;
    }
    if (line.read !== hitRead || (hit !== -1 && hit < line.from)) {
      hit = line.bytes.indexOf(SURFACE_OP_MEMBER, line.from);
      hitRead = line.read;
    }
    return hit !== -1 && hit < line.to;
  };
  await readLineBytes(
    handle,
    (line) => {
      if (!line.terminated) return "stop";
      if (header === undefined) {
        header = parseHeaderLine(line.bytes.toString("utf8", line.from, line.to), location);
        headerEnd = settledEnd = line.end;
        return undefined;
      }
      const { bytes, from, to } = line;
      if (!startsWith(bytes, from, to, CANONICAL_START)) return "stop";
      const marker = startsWith(bytes, from, to, TURN_MARKER_START);
      if (!marker && !holdsSurfaceOp(line)) return undefined;
      const seq = line.number - 2;
      const event = parseEventLine(bytes.toString("utf8", from, to));
      if (event === undefined || event.seq !== seq) {
        damaged ??= { seq, line: line.number };
        return undefined;
      }
      if (marker) {
        collectMarker(markers, event, line.end);
        if (event.type === "turn/end") {
          if (damaged !== undefined) throw damagedLine(damaged, location);
          settled = seq + 1;
          settledEnd = line.end;
          last = lineCheck(line.start, bytes.subarray(from, to));
        }
      }
      if (event.surfaceOp !== undefined) events.push(event);
      return undefined;
    },
    chunkBytes,
  );
  if (header === undefined) throw missingHeaderLine(location);
  while (markers.length > 0 && (markers.at(-1) as IndexedMarker).seq >= settled) markers.pop();
  while (events.length > 0 && ((events.at(-1) as { seq: number }).seq as number) >= settled) {
    events.pop();
  }
  return { header, headerEnd, settled, settledEnd, last, markers, events };
}

/**
 * Whether `bytes[from, to)` starts with `prefix`, compared byte by byte: run once per line, this is
 * several times cheaper than `Buffer.compare` with offsets (which checks its arguments each call).
 */
function startsWith(bytes: Buffer, from: number, to: number, prefix: Buffer): boolean {
  if (to - from < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[from + i] !== prefix[i]) return false;
  }
  return true;
}

function damagedLine(at: { seq: number; line: number }, location: string): StorageError {
  return new StorageError(
    "CORRUPT_LOG",
    `expected an intact event at seq ${at.seq} of ${location} (line ${at.line}, before the last turn/end), found a line that is not that event's JSON`,
    { location, line: at.line, seq: at.seq },
  );
}
