// The JSONL backend's encoding of a batch's lines: the bytes written, where each turn marker's line ends, the buffer kept between batches.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../src/index.js";
import { SerializedEvent } from "../../../src/log/serialized-event.js";
import { encodeLines, LineEncoder, linesBound } from "../../../src/store/jsonl/event-lines.js";
import { type IndexedMarker, lineCheck } from "../../../src/store/jsonl/file-state.js";
import { simpleTurn } from "../../helpers/builders.js";

/** The lines of `events` as the log holds them, encoded from their joined text. */
function joined(events: readonly SerializedEvent[]): Buffer {
  return Buffer.from(events.map((event) => `${event.json}\n`).join(""), "utf8");
}

/** Every turn marker of `events` (seqs from 7) with the byte where its line ends, found by scanning `data`. */
function scanned(events: readonly SessionEvent[], start: number, data: Buffer): IndexedMarker[] {
  const markers: IndexedMarker[] = [];
  let at = 0;
  events.forEach((event, i) => {
    at = data.indexOf(10, at) + 1;
    if (event.type === "turn/start" || event.type === "turn/end") {
      markers.push({ seq: 7 + i, type: event.type, turn: event.data.turn, end: start + at });
    }
  });
  return markers;
}

// Three turns in one batch, with prompts of two-, three- and four-byte characters, so that a
// line's length in UTF-16 units is not its length in bytes. Seen failing with each marker's end
// counted in string length instead of bytes: the first turn/end 7 bytes short.
const turns = [
  ...simpleTurn(0, 1, { prompt: "é".repeat(5) }),
  ...simpleTurn(100, 2, { prompt: "日本語" }),
  ...simpleTurn(200, 3, { prompt: "😀 and ascii" }),
];

describe("encodeLines", () => {
  it("encodes each event's text and a newline, and finds each marker's line end in bytes", () => {
    const events = turns.map((event) => SerializedEvent.take(event));
    const buffer = Buffer.alloc(linesBound(events));
    const lines = encodeLines(events, 7, 1000, buffer);
    const data = buffer.subarray(0, lines.bytes);
    expect(data.equals(joined(events))).toBe(true);
    expect(lines.markers).toEqual(scanned(turns, 1000, data));
    expect(lines.markers.map((m) => m.type)).toEqual([
      "turn/start",
      "turn/end",
      "turn/start",
      "turn/end",
      "turn/start",
      "turn/end",
    ]);
    expect(lines.markers.at(-1)?.end).toBe(1000 + data.length);
  });

  it("does the same for the store's own events, and checks the last line where it starts", () => {
    const events = turns.map((event) => SerializedEvent.of(Object.freeze(event)));
    const buffer = Buffer.alloc(linesBound(events));
    const lines = encodeLines(events, 7, 3, buffer);
    const data = buffer.subarray(0, lines.bytes);
    expect(lines.markers).toEqual(scanned(turns, 3, data));
    const lastStart = data.lastIndexOf(10, data.length - 2) + 1;
    expect(lines.last).toEqual(lineCheck(3 + lastStart, data.subarray(lastStart)));
  });

  it("ends a batch whose last line is not a marker at no marker past its last marker's line", () => {
    const events = turns.slice(0, -1).map((event) => SerializedEvent.take(event));
    const buffer = Buffer.alloc(linesBound(events));
    const lines = encodeLines(events, 7, 0, buffer);
    expect(lines.markers).toEqual(scanned(turns.slice(0, -1), 0, buffer.subarray(0, lines.bytes)));
  });

  it("fits lines of characters outside the basic plane, and of three-byte ones, in the bound", () => {
    // The bound counts three bytes per UTF-16 unit: a four-byte character is two units (six).
    const [, astral] = simpleTurn(0, 1, { prompt: "😀".repeat(50) });
    const [, basic] = simpleTurn(0, 1, { prompt: "語".repeat(50) });
    const events = [astral, basic].map((event) => SerializedEvent.take(event as SessionEvent));
    const buffer = Buffer.alloc(linesBound(events));
    const lines = encodeLines(events, 0, 0, buffer);
    expect(buffer.subarray(0, lines.bytes).equals(joined(events))).toBe(true);
  });
});

describe("LineEncoder", () => {
  const batch = (from: number, turn: number, prompt: string) =>
    simpleTurn(from, turn, { prompt }).map((event) => SerializedEvent.take(event));

  it("writes each batch's own bytes when a shorter batch follows a longer one in the kept buffer", async () => {
    const encoder = new LineEncoder();
    const long = batch(0, 1, "x".repeat(5000));
    const short = batch(10, 2, "y");
    const seen: Buffer[] = [];
    const write = async (data: Buffer) => {
      seen.push(Buffer.from(data));
    };
    await encoder.write(long, 0, 0, write);
    const written = await encoder.write(short, long.length, 100, write);
    expect(seen[0]?.equals(joined(long))).toBe(true);
    expect(seen[1]?.equals(joined(short))).toBe(true);
    expect(written.bytes).toBe(joined(short).length);
  });

  // Two sessions' appends run side by side: the second batch is encoded while the first one's
  // write waits. Seen failing with one buffer shared by both (no lending): the first write's
  // bytes became the second batch's lines before it wrote them.
  it("gives a batch encoded while another's write goes on a buffer of its own", async () => {
    const encoder = new LineEncoder();
    const first = batch(0, 1, "first ".repeat(100));
    const second = batch(0, 1, "second ".repeat(100));
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstBytes: Buffer | undefined;
    const pending = encoder.write(first, 0, 0, async (data) => {
      await gate;
      firstBytes = Buffer.from(data);
    });
    let secondBytes: Buffer | undefined;
    await encoder.write(second, 0, 0, async (data) => {
      secondBytes = Buffer.from(data);
    });
    release();
    await pending;
    expect(firstBytes?.equals(joined(first))).toBe(true);
    expect(secondBytes?.equals(joined(second))).toBe(true);
  });

  it("gives the buffer back when the write fails, and rethrows", async () => {
    const encoder = new LineEncoder();
    const events = batch(0, 1, "a");
    await expect(
      encoder.write(events, 0, 0, async () => {
        throw new Error("EIO");
      }),
    ).rejects.toThrow("EIO");
    let again: Buffer | undefined;
    await encoder.write(events, 0, 0, async (data) => {
      again = Buffer.from(data);
    });
    expect(again?.equals(joined(events))).toBe(true);
  });
});
