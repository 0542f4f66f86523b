// The viewer's view items over recorded corpus logs: chunks assembled per step, tool calls beside results, the seed boundary, and pages that join back into the whole.
import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionHeader } from "../../src/generated.js";
import { PendingCalls } from "../../src/log/pending-calls.js";
import { TimelineBuilder } from "../../src/view/timeline.js";
import {
  joinPartials,
  pageCut,
  type ViewItem,
  ViewItemBuilder,
  viewItemsOfPage,
} from "../../src/view/view-items.js";
import { answersEarlierCalls } from "../../src/viewer/server/pending-calls-at.js";
import {
  assistantMessage,
  foreignRecord,
  stepStart,
  text,
  turnStart,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";

const LOGS = corpusLogs().map((log) => ({
  name: log.name,
  header: log.header as SessionHeader,
  events: log.events as SessionEvent[],
}));

function logNamed(name: string) {
  const log = LOGS.find((l) => l.name === name);
  if (log === undefined) throw new Error(`expected a corpus log ${name}`);
  return log;
}

/** Every item of a log, built by one builder fed the whole log. */
function wholeItems(header: SessionHeader, events: readonly SessionEvent[]): ViewItem[] {
  const builder = new ViewItemBuilder(header);
  return [...builder.add(events), ...builder.flush(true)];
}

/**
 * The items of a log read as the viewer's server reads it: pages of at most `limit` events, each
 * built alone, given the calls pending where it starts when its results answer calls before it.
 */
function pagedItems(header: SessionHeader, events: readonly SessionEvent[], limit: number) {
  const pages: ViewItem[][] = [];
  const pending = new PendingCalls();
  let from = 0;
  while (from < events.length) {
    const page = events.slice(from, from + limit);
    const done = from + page.length >= events.length;
    const cut = done ? page.length : pageCut(page);
    const read = page.slice(0, cut);
    const start = answersEarlierCalls(read) ? { pendingCalls: pending } : {};
    pages.push(viewItemsOfPage(header, read, done, start));
    for (const e of read) pending.follow(e);
    from += cut;
  }
  if (events.length === 0) pages.push(viewItemsOfPage(header, [], true));
  return pages;
}

describe("view items", () => {
  it("assembles a step's streamed chunks into one assistant item with its usage and finish", () => {
    const { header, events } = logNamed("tool-call-turn/session.jsonl");
    const items = wholeItems(header, events);
    const assistant = items.filter((i) => i.kind === "assistant");
    expect(assistant).toHaveLength(2);
    expect(assistant[0]).toMatchObject({
      seq: 3,
      turn: 1,
      step: 1,
      text: "",
      reasoning: 'The user wants me to run `echo SNAPSHOT_OK` and then reply with "DONE".',
      chunkSeqs: [3, 62],
      chunkCount: 60,
      usage: { inputTokens: 122, outputTokens: 95 },
      finish: "tool-calls",
    });
    expect(assistant[1]).toMatchObject({ step: 2, text: "DONE", finish: "stop" });
    expect(assistant.some((a) => a.kind === "assistant" && a.partial)).toBe(false);
  });

  it("gives a tool call with its arguments pretty-printed, and its result by the same call id", () => {
    const { header, events } = logNamed("tool-call-turn/session.jsonl");
    const items = wholeItems(header, events);
    const call = items.find((i) => i.kind === "tool-call");
    const result = items.find((i) => i.kind === "tool-result");
    expect(call).toMatchObject({ seq: 64, turn: 1, name: "bash" });
    expect(call?.kind === "tool-call" && JSON.parse(call.arguments)).toEqual({
      command: "echo SNAPSHOT_OK",
      description: "Run echo SNAPSHOT_OK",
    });
    expect(call?.kind === "tool-call" && call.arguments).toContain('\n  "command"');
    expect(result).toMatchObject({
      seq: 65,
      callId: call?.kind === "tool-call" ? call.callId : "",
      name: "bash",
      isError: false,
      text: "SNAPSHOT_OK\n",
    });
  });

  it("marks a turn's start with how it ended when its end is in the same page", () => {
    const { header, events } = logNamed("tool-call-turn/session.jsonl");
    const items = wholeItems(header, events);
    expect(items[0]).toEqual({
      kind: "turn",
      seq: 0,
      turn: 1,
      trigger: "message from user",
      endSeq: 103,
      reason: "completed",
    });
    expect(items.at(-1)).toMatchObject({ kind: "turn-end", seq: 103, reason: "completed" });
  });

  it("draws the recorded fork's seed boundary before its first own event", () => {
    const { header, events } = logNamed("subagent-fork/session.1.jsonl");
    expect(header.seedLength).toBe(38);
    const items = wholeItems(header, events);
    const at = items.findIndex((i) => i.kind === "seed-boundary");
    expect(items[at]).toEqual({ kind: "seed-boundary", seq: 38, inherited: 38 });
    expect(items.slice(0, at).every((i) => i.seq < 38)).toBe(true);
    expect(items.slice(at + 1).every((i) => i.seq >= 38)).toBe(true);
    expect(items.filter((i) => i.kind === "seed-boundary")).toHaveLength(1);
  });

  it("shows the same events as the CLI's timeline rows (one derivation)", () => {
    for (const { name, header, events } of LOGS) {
      const cli = new TimelineBuilder(header);
      const rows = [...cli.read(events), ...cli.finish()];
      const rowSeqs = rows
        .filter((r) => r.kind !== "step-end" && r.kind !== "seed-boundary")
        .filter((r) => !(r.kind === "message" && r.role === "assistant"))
        .map((r) => `${r.kind}@${"seq" in r ? r.seq : ""}`);
      const itemSeqs = wholeItems(header, events)
        .filter((i) => i.kind !== "assistant" && i.kind !== "seed-boundary")
        .map((i) => `${i.kind}@${i.seq}`);
      expect(itemSeqs.sort(), name).toEqual(rowSeqs.sort());
    }
  });

  // Seen failing while pages were built without the block-end rule: a block whose deltas were in
  // the page before came back whole from its block-end, so the joined text said it twice.
  it("builds the same items page by page as at once, once the partial items are joined", () => {
    for (const limit of [7, 13, 50]) {
      for (const { name, header, events } of LOGS) {
        const whole = wholeItems(header, events);
        const pages = pagedItems(header, events, limit);
        const joined = joinPartials(pages.flat()).map(strip);
        expect(joined, `${name} in pages of ${limit}`).toEqual(whole.map(strip));
      }
    }
  });

  // Seen failing before a flushed step's next run was marked continued: the items of one step in
  // successive batches did not join (cancel/session.jsonl in batches of 1 gave two items).
  it("builds the same items from live batches through one builder, once joined", () => {
    for (const size of [1, 3, 10]) {
      for (const { name, header, events } of LOGS) {
        const builder = new ViewItemBuilder(header);
        const batches: ViewItem[] = [];
        for (let i = 0; i < events.length; i += size) {
          const batch = events.slice(i, i + size);
          batches.push(...builder.add(batch), ...builder.flush(i + size >= events.length));
        }
        if (events.length === 0) batches.push(...builder.flush(true));
        expect(joinPartials(batches), `${name} in batches of ${size}`).toEqual(
          wholeItems(header, events),
        );
      }
    }
  });

  it("cuts a page before a step that began in it and has not ended", () => {
    const { events } = logNamed("tool-call-turn/session.jsonl");
    // Events 0–69: turn/start, user/message, step 1 (2–66), step/start 67 and two chunks.
    expect(pageCut(events.slice(0, 70))).toBe(67);
    // A page that is one long step's middle is cut where it ends.
    expect(pageCut(events.slice(2, 40))).toBe(38);
    expect(pageCut(events.slice(0, 104))).toBe(104);
  });

  it("marks the chunks of a step cut by a page as continued and unfinished", () => {
    const { header, events } = logNamed("tool-call-turn/session.jsonl");
    const first = viewItemsOfPage(header, events.slice(0, 30), false);
    const second = viewItemsOfPage(header, events.slice(30, 104), true);
    const a = first.at(-1);
    const b = second[0];
    expect(a).toMatchObject({ kind: "assistant", partial: true, unfinished: true });
    expect(a?.kind === "assistant" && a.continued).toBeUndefined();
    expect(b).toMatchObject({ kind: "assistant", partial: true, continued: true, step: 1 });
    expect(b?.kind === "assistant" && b.unfinished).toBeUndefined();
  });

  it("shows each assistant message of a step that streamed no chunks (an import writes one per line), but no empty one", () => {
    const header: SessionHeader = { version: 0, id: "imported", createdAt: 0 };
    const events: SessionEvent[] = [
      turnStart(0, 1),
      stepStart(1, 1, 1),
      assistantMessage(2, 1, 1, [{ type: "reasoning", text: "think" }]),
      assistantMessage(3, 1, 1, [text("first")]),
      assistantMessage(4, 1, 1, [text("second")]),
      assistantMessage(5, 1, 1, [{ type: "tool-call", id: "t1", name: "Read", arguments: "{}" }]),
    ];
    const items = wholeItems(header, events).filter((i) => i.kind === "assistant");
    // Before, only the first message of the step was drawn: the later ones only added usage. A
    // message of a tool call alone gives no (empty) assistant item: the call's item shows it.
    expect(items.map((i) => i.kind === "assistant" && [i.seq, i.text, i.reasoning])).toEqual([
      [2, "", "think"],
      [3, "first", undefined],
      [4, "second", undefined],
    ]);
  });

  it("shows a foreign record folded: its source and line, what it names itself, the start of its JSON", () => {
    const header: SessionHeader = { version: 0, id: "imported", createdAt: 0 };
    const long = "x".repeat(500);
    const events: SessionEvent[] = [
      foreignRecord(0, { type: "file-history-snapshot", messageId: "m1" }, 1),
      turnStart(1, 1),
      stepStart(2, 1, 1),
      foreignRecord(3, { type: "progress", data: { type: "hook_progress", command: long } }, 7),
      foreignRecord(4, [1, 2], 8),
    ];
    const items = wholeItems(header, events).filter((i) => i.kind === "foreign");
    expect(items.map((i) => [i.seq, i.kind === "foreign" && [i.line, i.what]])).toEqual([
      [0, [1, "file-history-snapshot"]],
      [3, [7, "progress (hook_progress)"]],
      [4, [8, ""]],
    ]);
    const folded = items[1];
    expect(folded).toMatchObject({ source: "claude-code", turn: 1 });
    expect(folded?.kind === "foreign" && folded.text.length).toBe(200);
    expect(folded?.kind === "foreign" && folded.text.startsWith('{"type":"progress"')).toBe(true);
  });
});

/** An item as compared across pagings: without what a page knows only of its own events (a turn's end, a tool's name). */
function strip(item: ViewItem): unknown {
  if (item.kind === "turn") {
    const { endSeq: _e, reason: _r, ...rest } = item;
    return rest;
  }
  if (item.kind === "tool-result") {
    const { name: _n, ...rest } = item;
    return rest;
  }
  return item;
}
