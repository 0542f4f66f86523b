// The browser app's pure parts, in Node: its routes (deep links) and how it turns view items into rows (tool calls paired, pages joined, deep links placed).
import { describe, expect, it } from "vitest";
import type { ViewItem } from "../../src/view/view-items.js";
import { parseRoute, type Route, routePath } from "../../src/viewer/app/routes.js";
import { joinPages, type Row, rowAt, rowsOf } from "../../src/viewer/app/timeline-model.js";

function route(address: string): Route {
  const url = new URL(address, "http://127.0.0.1");
  return parseRoute(url.pathname, url.search);
}

describe("viewer routes", () => {
  it("reads every deep link the viewer prints and writes it back the same", () => {
    const cases: [string, Route][] = [
      ["/", { name: "list", q: "", cwd: "", prefix: "" }],
      ["/?q=echo+HELLO", { name: "list", q: "echo HELLO", cwd: "", prefix: "" }],
      ["/?cwd=%2Fwork&prefix=ab", { name: "list", q: "", cwd: "/work", prefix: "ab" }],
      ["/s/abc", { name: "session", id: "abc", tab: "timeline" }],
      ["/s/abc/e/12", { name: "session", id: "abc", tab: "timeline", seq: 12 }],
      ["/s/abc/t/3", { name: "session", id: "abc", tab: "timeline", turn: 3 }],
      ["/s/abc/lineage", { name: "session", id: "abc", tab: "lineage" }],
      ["/s/abc/compare", { name: "session", id: "abc", tab: "compare" }],
      ["/s/abc/replay", { name: "session", id: "abc", tab: "replay" }],
    ];
    for (const [address, expected] of cases) {
      expect(route(address), address).toEqual(expected);
      expect(route(routePath(expected)), address).toEqual(expected);
    }
  });

  it("keeps ids with slashes, dots and accents whole (one encoded path segment)", () => {
    for (const id of ["../x", "a/b", "é", "a b?c#d"]) {
      const path = routePath({ name: "session", id, tab: "replay" });
      expect(path.split("/")).toHaveLength(4);
      expect(route(path)).toEqual({ name: "session", id, tab: "replay" });
    }
  });

  it("opens the timeline for an address it does not know under a session", () => {
    for (const address of ["/s/abc/e/x", "/s/abc/e/-1", "/s/abc/t/1.5", "/s/abc/other"]) {
      expect(route(address), address).toEqual({ name: "session", id: "abc", tab: "timeline" });
    }
  });
});

const call = (seq: number, callId: string): ViewItem => ({
  kind: "tool-call",
  seq,
  turn: 1,
  callId,
  name: "ls",
  arguments: "{}",
});
/** A result answering the call at `callSeq` (none when undefined). */
const result = (seq: number, callId: string, callSeq?: number): ViewItem => ({
  kind: "tool-result",
  seq,
  turn: 1,
  callId,
  ...(callSeq === undefined ? {} : { callSeq }),
  isError: false,
  text: "ok",
});
const step = (seq: number): ViewItem => ({ kind: "step", seq, turn: 1, step: seq });

function shape(rows: readonly Row[]): string[] {
  return rows.map((r) =>
    r.kind === "item"
      ? `${r.item.kind}@${r.item.seq}`
      : `tool ${r.call?.seq ?? "-"}/${r.result?.seq ?? "-"}`,
  );
}

describe("viewer rows", () => {
  it("draws each tool result with the call it answers, at the call's place", () => {
    const rows = rowsOf([
      call(1, "a"),
      call(2, "b"),
      result(3, "b", 2),
      step(4),
      result(5, "a", 1),
    ]);
    expect(shape(rows)).toEqual(["tool 1/5", "tool 2/3", "step@4"]);
  });

  it("pairs by the call a result answers, not by call id: an id used again in a later step", () => {
    const rows = rowsOf([
      call(1, "a"),
      result(2, "a", 1),
      step(3),
      call(4, "a"),
      result(5, "a", 4),
    ]);
    expect(shape(rows)).toEqual(["tool 1/2", "step@3", "tool 4/5"]);
    // A result that answers no call stands alone, even beside a call of the same id.
    expect(shape(rowsOf([call(1, "a"), result(2, "a")]))).toEqual(["tool 1/-", "tool -/2"]);
  });

  it("draws a result whose call is on an earlier page alone, and a call still waiting alone", () => {
    expect(shape(rowsOf([result(3, "x", 1), call(4, "y")]))).toEqual(["tool -/3", "tool 4/-"]);
  });

  it("lights the row holding a deep link's event, else the row before it", () => {
    const rows = rowsOf([step(0), call(1, "a"), step(2), result(3, "a", 1), step(6)]);
    expect(shape(rows)).toEqual(["step@0", "tool 1/3", "step@2", "step@6"]);
    // Seq 3 (the result) is inside the tool row's range 1–3, which starts before step 2.
    expect(rowAt(rows, 3)).toBe(1);
    expect(rowAt(rows, 5)).toBe(2);
    expect(rowAt(rows, 6)).toBe(3);
  });

  it("joins a step cut between two pages into one assembled item", () => {
    const first: ViewItem = {
      kind: "assistant",
      seq: 10,
      turn: 1,
      step: 1,
      text: "Hel",
      chunkSeqs: [11, 19],
      chunkCount: 9,
      partial: true,
      unfinished: true,
    };
    const second: ViewItem = {
      kind: "assistant",
      seq: 20,
      turn: 1,
      step: 1,
      text: "lo",
      chunkSeqs: [20, 24],
      chunkCount: 5,
      finish: "stop",
      partial: true,
      continued: true,
    };
    const joined = joinPages([step(9), first], [second, step(25)]);
    expect(joined).toHaveLength(3);
    expect(joined[1]).toMatchObject({
      kind: "assistant",
      seq: 10,
      text: "Hello",
      chunkSeqs: [11, 24],
      chunkCount: 14,
      finish: "stop",
    });
    expect(joined[1]).not.toHaveProperty("partial");
  });
});
