// The JSONL backend's turn-marker index: where each turn/start and turn/end line ends, in bytes.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../src/index.js";
import { SerializedEvent, serializedLines } from "../src/log/serialized-event.js";
import { type IndexedMarker, indexMarkers } from "../src/store/jsonl/file-state.js";
import { simpleTurn } from "./builders.js";

/** Every turn marker of `events` with the byte where its line ends, found by scanning `data`. */
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

describe("indexMarkers", () => {
  // Three turns in one batch, with prompts of two-, three- and four-byte characters, so that a
  // line's length in UTF-16 units is not its length in bytes. Seen failing with each marker's end
  // counted in string length instead of bytes: the first turn/end 7 bytes short.
  const turns = [
    ...simpleTurn(0, 1, { prompt: "é".repeat(5) }),
    ...simpleTurn(100, 2, { prompt: "日本語" }),
    ...simpleTurn(200, 3, { prompt: "😀 and ascii" }),
  ];

  it("finds each marker's line end in bytes, a batch's last line and lines inside it alike, for events taken from a caller", () => {
    const events = turns.map((event) => SerializedEvent.take(event));
    const data = Buffer.from(serializedLines(events), "utf8");
    const markers = indexMarkers(events, 7, 1000, data, []);
    expect(markers).toEqual(scanned(turns, 1000, data));
    expect(markers.map((m) => m.type)).toEqual([
      "turn/start",
      "turn/end",
      "turn/start",
      "turn/end",
      "turn/start",
      "turn/end",
    ]);
    expect(markers.at(-1)?.end).toBe(1000 + data.length);
  });

  it("does the same for the store's own events, and adds to the markers it is given", () => {
    const events = turns.map((event) => SerializedEvent.of(Object.freeze(event)));
    const data = Buffer.from(serializedLines(events), "utf8");
    const before: IndexedMarker[] = [{ seq: 0, type: "turn/end", turn: 9, end: 5 }];
    const markers = indexMarkers(events, 7, 3, data, before);
    expect(markers).toBe(before);
    expect(markers).toEqual([before[0], ...scanned(turns, 3, data)]);
  });

  it("ends a batch whose last line is not a marker at no marker past its last marker's line", () => {
    const events = turns.slice(0, -1).map((event) => SerializedEvent.take(event));
    const data = Buffer.from(serializedLines(events), "utf8");
    expect(indexMarkers(events, 7, 0, data, [])).toEqual(scanned(turns.slice(0, -1), 0, data));
  });
});
