// SerializedEvent: an event's member texts and its JSON text in the canonical member order, whatever order the caller used.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/index.js";
import { TakenBatch } from "../../src/log/invariants.js";
import { SerializedEvent, serializeEvents } from "../../src/log/serialized-event.js";
import { assistantChunk, toolResult, turnStart, userMessage } from "../helpers/builders.js";

/** The member texts a serialized event must give: what JSON.stringify writes of each member. */
function expectTexts(serialized: SerializedEvent, event: SessionEvent): void {
  const members = event as unknown as Record<string, unknown>;
  const textOf = (member: string) =>
    members[member] === undefined ? undefined : JSON.stringify(members[member]);
  expect(serialized.json).toBe(JSON.stringify(reordered(event, CANONICAL)));
  expect(serialized.data).toBe(textOf("data"));
  expect(serialized.sourceEventSeqs).toBe(textOf("sourceEventSeqs"));
  expect(serialized.surfaceOp).toBe(textOf("surfaceOp"));
  expect(serialized.event).toEqual(event);
  expect([serialized.seq, serialized.type, serialized.time]).toEqual([
    event.seq,
    event.type,
    event.time,
  ]);
}

/** The same event with its members in another order (JSON.stringify keeps the caller's order). */
function reordered(event: SessionEvent, order: readonly string[]): SessionEvent {
  const members = event as unknown as Record<string, unknown>;
  return Object.fromEntries(
    order.filter((m) => members[m] !== undefined).map((m) => [m, members[m]]),
  ) as unknown as SessionEvent;
}

/** The member order of every stored line (what the SQL backends rebuild rows in, too). */
const CANONICAL = ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"];

const EVENTS: readonly SessionEvent[] = [
  turnStart(0, 1),
  assistantChunk(1, 1, 1, { type: "text-delta", index: 0, text: 'a "quoted" },"data": text' }),
  assistantChunk(9007199254740991, 1, 1, undefined, 1_700_000_000_000),
  userMessage(2, "hello"),
  toolResult(5, 1, 1, "c1", {
    sourceEventSeqs: [3, 4],
    surfaceOp: { op: "replace", start: 3, end: 4 },
  }),
];

describe("SerializedEvent", () => {
  // An event in the canonical order is serialized by one JSON.stringify, `data` sliced out of it:
  // a surface marker present as undefined (dropped by JSON) must shorten neither text.
  it("gives the same texts when an optional member is present but undefined", () => {
    const both = EVENTS[4] as SessionEvent;
    const variants = [
      { ...both, sourceEventSeqs: undefined },
      { ...both, surfaceOp: undefined },
      { ...both, sourceEventSeqs: undefined, surfaceOp: undefined },
    ] as unknown as SessionEvent[];
    for (const event of variants) {
      const serialized = SerializedEvent.of(event);
      expect(serialized.json).toBe(JSON.stringify(reordered(event, CANONICAL)));
      expect(serialized.data).toBe(JSON.stringify(event.data));
    }
  });

  it("gives the event's JSON text and each column's text, in the canonical member order", () => {
    for (const event of EVENTS) expectTexts(SerializedEvent.of(event), event);
  });

  // Seen failing with `json` made by JSON.stringify of the caller's value: the reordered events
  // kept their own member order, which JSONL would store and SQL would not.
  it("gives the canonical texts when the caller's members stand in another order", () => {
    const orders = [
      ["seq", "type", "time", "data", "surfaceOp", "sourceEventSeqs"],
      ["data", "type", "seq", "time", "sourceEventSeqs", "surfaceOp"],
      ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"],
    ];
    for (const order of orders) {
      for (const event of EVENTS) {
        const moved = reordered(event, order);
        expectTexts(serializeEvents([moved])[0] as SerializedEvent, moved);
      }
    }
  });

  it("keeps what was taken when the caller changes its events afterwards", () => {
    const chunk = assistantChunk(1, 1, 1);
    const message = userMessage(2, "before");
    const taken = TakenBatch.take([chunk, message], "copy").events as SerializedEvent[];
    const before = taken.map((s) => [s.json, s.data, s.surfaceOp]);
    (chunk.data as { turn: number }).turn = 7;
    (message.data.content[0] as { text: string }).text = "after";
    expect(taken.map((s) => [s.json, s.data, s.surfaceOp])).toEqual(before);
    expect(taken.map((s) => s.event)).toEqual([assistantChunk(1, 1, 1), userMessage(2, "before")]);
  });
});
