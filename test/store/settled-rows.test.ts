// A settled read, and a page of event rows, let go of each row once parsed: the rows' text is not kept live while the rest are parsed.
//
// A resume reads a log's message-producing rows in one result. Before, the split copied each row
// and the driver's array kept the originals, so the text of every row stayed live until the last
// was parsed; a young-generation collection on the way copied all of it (B9 PostgreSQL: two
// collections, 4 + 26 ms, of a 98 ms resume). Without the fix `rows` keeps its rows after the
// split and each settled row is a copy (`not.toBe`), and the taken array keeps its entries: the
// three assertions marked below failed. A page of a full read (B3 PostgreSQL, 409 against a
// floor of 300 ms) kept its rows the same way; without the fix the page's array keeps them (the
// assertion marked in the last case failed), and B3 PostgreSQL read in 328 against 320 ms with it.
import { describe, expect, it } from "vitest";
import { splitSettledRead } from "../../src/store/postgres/rows.js";
import { scanEventRows, valueRowForm } from "../../src/store/sql/event-frames.js";
import {
  eventOfValues,
  settledEvents,
  valuesEventBuilder,
} from "../../src/store/sql/settled-rows.js";

const JSON_MEMBERS: ReadonlySet<string> = new Set(["data", "sourceEventSeqs", "surfaceOp"]);
const EVENT_COLUMNS = ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"];
const COLUMNS = ["id", "lastTurnEnd", "tail", ...EVENT_COLUMNS];

function userRow(seq: number, tail: boolean): unknown[] {
  return [
    null,
    null,
    tail,
    "user/message",
    seq,
    1000 + seq,
    JSON.stringify({ turn: 0, content: [{ type: "text", text: `hello ${seq}` }] }),
    null,
    JSON.stringify({ kind: "append" }),
  ];
}

describe("a settled read", () => {
  it("empties the driver's rows and keeps each settled row itself, not a copy", () => {
    const settledRows = [userRow(0, false), userRow(2, false)];
    const tailRow = userRow(5, true);
    const rows: unknown[][] = [["s1", 4, null], ...settledRows, tailRow];
    const split = splitSettledRead(rows, COLUMNS);
    if (split === undefined) throw new Error("expected a split");
    expect(rows).toHaveLength(0); // failed before: 4 rows
    expect(split.settled[0]).toBe(settledRows[0]); // failed before: a slice
    expect(split.offset).toBe(3);
    expect(split.columns).toEqual(EVENT_COLUMNS);
    expect(split.lastTurnEnd).toBe(4);
    expect(split.tail).toEqual([tailRow.slice(3)]);

    const events = settledEvents(split.settled, JSON_MEMBERS, "here", split.columns, split.offset);
    expect(events).toEqual([
      {
        type: "user/message",
        seq: 0,
        time: 1000,
        data: { turn: 0, content: [{ type: "text", text: "hello 0" }] },
        surfaceOp: { kind: "append" },
      },
      {
        type: "user/message",
        seq: 2,
        time: 1002,
        data: { turn: 0, content: [{ type: "text", text: "hello 2" }] },
        surfaceOp: { kind: "append" },
      },
    ]);
    expect(split.settled).toEqual([undefined, undefined]); // failed before: both rows kept
  });

  it("still names the seq of a row whose JSON does not parse, at an offset", () => {
    const bad = userRow(1, false);
    bad[6] = "{not json";
    const taken = [userRow(0, false), bad];
    expect(() => settledEvents(taken, JSON_MEMBERS, "table events", EVENT_COLUMNS, 3)).toThrow(
      /expected an intact event at seq 1 of table events/,
    );
  });

  it("reads an iterable of rows without taking it", () => {
    const rows = [userRow(0, false).slice(3)];
    const iterable = { [Symbol.iterator]: () => rows[Symbol.iterator]() };
    expect(settledEvents(iterable, JSON_MEMBERS, "here", EVENT_COLUMNS)).toHaveLength(1);
    expect(rows[0]).toBeDefined();
  });
});

describe("a page of event rows", () => {
  it("is taken: each row is let go once its event is built, bad rows included", () => {
    const good = userRow(0, false).slice(3);
    const bad = userRow(1, false).slice(3);
    bad[3] = "{not json";
    const after = userRow(2, false).slice(3);
    const rows = [good, bad, after];
    const scanned = scanEventRows(rows, 0, valueRowForm(EVENT_COLUMNS, JSON_MEMBERS));
    expect(scanned.events).toHaveLength(1);
    expect(scanned.bad?.seq).toBe(1);
    expect(scanned.bad?.what).toContain("{not json");
    expect(scanned.count).toBe(3);
    expect(scanned.lastSeq).toBe(2);
    expect(rows).toEqual([undefined, undefined, undefined]); // failed before: the rows kept
  });
});

describe("events built from rows of values", () => {
  // The canonical layout gets a builder of its own that makes each event as one object literal
  // (B3 SQLite: the store's page reads 282 against a floor of 263 ms before, 259 against 259
  // after). Without it there is no valuesEventBuilder, and no canonical builder to pick: the
  // first assertion fails. The rest hold the two builders to the same events.
  const generic = valuesEventBuilder(EVENT_COLUMNS, new Set());
  const canonical = valuesEventBuilder(EVENT_COLUMNS, JSON_MEMBERS);
  const reordered = ["seq", "type", "time", "data", "sourceEventSeqs", "surfaceOp"];

  it("builds the canonical layout with its own builder, and any other with the general one", () => {
    expect(canonical.name).toBe("canonicalEventOf");
    expect(generic.name).not.toBe("canonicalEventOf");
    expect(valuesEventBuilder(reordered, JSON_MEMBERS).name).not.toBe("canonicalEventOf");
    expect(valuesEventBuilder(EVENT_COLUMNS, new Set(["data"])).name).not.toBe("canonicalEventOf");
  });

  it("gives the events the general builder gives, members in the same order, NULL ones absent", () => {
    const rows: unknown[][] = [
      userRow(0, false).slice(3),
      ["assistant/chunk", 1, 1001, JSON.stringify({ turn: 0, step: 0, delta: "x" }), null, null],
      ["assistant/message", 2, 1002, JSON.stringify({ turn: 0 }), "[1]", JSON.stringify("append")],
    ];
    const parsedColumns = new Set(["data", "sourceEventSeqs", "surfaceOp"]);
    for (const row of rows) {
      const fast = canonical(row);
      const slow = eventOfValues(
        row,
        EVENT_COLUMNS,
        EVENT_COLUMNS.map((c) => parsedColumns.has(c)),
      );
      expect(fast).toEqual(slow);
      expect(Object.keys(fast ?? {})).toEqual(Object.keys(slow ?? {}));
    }
    expect(Object.keys(canonical(rows[1] as unknown[]) ?? {})).toEqual([
      "type",
      "seq",
      "time",
      "data",
    ]);
  });

  it("reads from an offset, and answers undefined for a JSON column that does not parse", () => {
    const row = userRow(4, false);
    expect(canonical(row, 3)).toMatchObject({ type: "user/message", seq: 4, time: 1004 });
    for (const at of [6, 7, 8]) {
      const bad = userRow(4, false);
      bad[at] = "{not json";
      expect(canonical(bad, 3)).toBeUndefined();
    }
  });
});
