// A tool result is paired with the pending call of its own step, as the log's tool-pairing rule says, by every reader: view items and the viewer's rows (whole and paged), `show`, the Markdown and HTML exports, ACP updates.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/store.js";
import { type AcpSessionUpdate, type SessionStore, toAcpUpdates } from "../../src/index.js";
import { type ViewItem, ViewItemBuilder } from "../../src/view/view-items.js";
import { joinPages, rowsOf } from "../../src/viewer/app/timeline-model.js";
import { LiveStreams } from "../../src/viewer/server/live.js";
import { timelinePage } from "../../src/viewer/server/session-views.js";
import { runCliHere } from "../helpers/cli-in-process.js";
import { ORPHAN_TEXT, pairingLog } from "../helpers/tool-pairing-log.js";

const ID = "pairing";
const log = pairingLog(ID);
const [listFiles, grep, readFile] = log.calls as [
  (typeof log.calls)[0],
  (typeof log.calls)[0],
  (typeof log.calls)[0],
];

/** What a tool row of the viewer shows: the call's tool and seq beside the result's text and seq. */
interface DrawnPair {
  readonly call?: string;
  readonly callSeq?: number;
  readonly output?: string;
  readonly resultSeq?: number;
}

/** The tool rows the viewer draws of `items`, as call/result pairs. */
function drawnPairs(items: readonly ViewItem[]): DrawnPair[] {
  return rowsOf(items).flatMap((row) =>
    row.kind === "tool"
      ? [
          {
            ...(row.call === undefined ? {} : { call: row.call.name, callSeq: row.call.seq }),
            ...(row.result === undefined
              ? {}
              : { output: row.result.text, resultSeq: row.result.seq }),
          },
        ]
      : [],
  );
}

/** Each call of the log beside its own result, then the orphan result alone. */
const EXPECTED_PAIRS: DrawnPair[] = [
  ...log.calls.map((c) => ({
    call: c.name,
    callSeq: c.callSeq,
    output: c.output,
    resultSeq: c.resultSeq,
  })),
  { output: ORPHAN_TEXT, resultSeq: log.orphanSeq },
];

let temp: string;
let url: string;
let store: SessionStore;

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "seedline-tool-pairing-"));
  url = `sqlite:${join(temp, "store.db")}`;
  const file = join(temp, "pairing.jsonl");
  writeFileSync(file, log.jsonl);
  const imported = await runCliHere(["import", file, "--store", url]);
  expect(imported.stderr).toBe("");
  expect(imported.status).toBe(0);
  store = await openStore(url);
});

afterAll(async () => {
  await store?.close();
  rmSync(temp, { recursive: true, force: true });
});

describe("pairing a tool result with its call when every step uses call_1", () => {
  // Fails without the fix: the viewer paired each call with the first result named call_1, so
  // turn 2's read_file call was drawn beside turn 1's list_files output ("notes.txt\nplan.md"),
  // and its own result stood alone.
  it("view items name the call each result answers, and the viewer draws each call beside its own result", () => {
    const builder = new ViewItemBuilder(log.header);
    const items = [...builder.add(log.events), ...builder.flush(true)];
    const results = items.filter((i) => i.kind === "tool-result");
    expect(results.map((r) => [r.seq, r.callSeq, r.name])).toEqual([
      [listFiles.resultSeq, listFiles.callSeq, "list_files"],
      [grep.resultSeq, grep.callSeq, "grep"],
      [readFile.resultSeq, readFile.callSeq, "read_file"],
      [log.orphanSeq, undefined, undefined],
    ]);
    expect(drawnPairs(items)).toEqual(EXPECTED_PAIRS);
  });

  // Fails without the fix: a page that began between turn 2's call and its result answered the
  // result with no call (no name, no callSeq), and the joined pages paired read_file with turn
  // 1's list_files output.
  it("pairs across page edges: a result whose call is on an earlier page of its step answers that call", async () => {
    const page = await timelinePage(store, ID, readFile.resultSeq, 4);
    const result = page.items.find((i) => i.kind === "tool-result");
    expect(result).toMatchObject({ callSeq: readFile.callSeq, name: "read_file" });
    // Every page of three events: edges fall inside every step, between each call and its result.
    let items: ViewItem[] = [];
    for (let from = 0, done = false; !done; ) {
      const next = await timelinePage(store, ID, from, 3);
      items = joinPages(items, next.items);
      done = next.done;
      from = next.nextSeq;
    }
    expect(drawnPairs(items)).toEqual(EXPECTED_PAIRS);
    // A page that begins in turn 3's step: no call of an earlier step answers its orphan result.
    const orphanPage = await timelinePage(store, ID, log.orphanSeq, 3);
    const orphan = orphanPage.items.find((i) => i.kind === "tool-result");
    expect(orphan).toMatchObject({ seq: log.orphanSeq, text: ORPHAN_TEXT });
    expect(orphan).not.toHaveProperty("callSeq");
    expect(orphan).not.toHaveProperty("name");
  });

  // Fails without the fix: show named the orphan result of turn 3 after the last call_1 seen,
  // "← read_file", and --json gave result rows no callSeq.
  it("seedline show names each result after the call of its own step", async () => {
    const json = await runCliHere(["show", ID, "--store", url, "--all", "--json"]);
    expect(json.status).toBe(0);
    const rows = (JSON.parse(json.stdout) as { rows: { kind: string }[] }).rows.filter(
      (r) => r.kind === "tool-result",
    );
    expect(rows).toEqual([
      expect.objectContaining({ seq: listFiles.resultSeq, callSeq: listFiles.callSeq }),
      expect.objectContaining({ seq: grep.resultSeq, callSeq: grep.callSeq, name: "grep" }),
      expect.objectContaining({ seq: readFile.resultSeq, callSeq: readFile.callSeq }),
      expect.objectContaining({ seq: log.orphanSeq, text: ORPHAN_TEXT }),
    ]);
    expect(rows[2]).toMatchObject({ name: "read_file" });
    expect(rows[3]).not.toHaveProperty("name");
    const text = await runCliHere(["show", ID, "--store", url, "--all"]);
    const line = (seq: number) =>
      text.stdout.split("\n").find((l) => l.trim().startsWith(`${seq} `));
    expect(line(readFile.resultSeq)).toContain("← read_file Water the plants.");
    expect(line(grep.resultSeq)).toContain("← grep plan.md:3: TODO ship");
    expect(line(log.orphanSeq)).toContain("← call_1 (error)");
  });

  // Fails without the fix: the Markdown headed turn 3's orphan result `read_file` (the last
  // call_1 seen) and named no call seq for any result.
  it("the Markdown export heads each result with the call it answers", async () => {
    const md = await runCliHere(["export", ID, "--format", "md", "--store", url]);
    expect(md.status).toBe(0);
    const headings = md.stdout.split("\n").filter((l) => l.startsWith("#### Tool result"));
    expect(headings).toEqual([
      `#### Tool result \`list_files\` · \`call_1\` · answers seq ${listFiles.callSeq} · seq ${listFiles.resultSeq}`,
      `#### Tool result \`grep\` · \`call_1\` · answers seq ${grep.callSeq} · seq ${grep.resultSeq}`,
      `#### Tool result \`read_file\` · \`call_1\` · answers seq ${readFile.callSeq} · seq ${readFile.resultSeq}`,
      `#### Tool result · \`call_1\` · ⚠ **error** \`interrupted\` · seq ${log.orphanSeq}`,
    ]);
  });

  // Fails without the fix: the export's embedded items paired read_file with list_files' output.
  it("the HTML export embeds items that draw each call beside its own result", async () => {
    const html = await runCliHere(["export", ID, "--format", "html", "--store", url]);
    expect(html.status).toBe(0);
    const embedded = /<script type="application\/json" id="seedline-data">(.*?)<\/script>/s.exec(
      html.stdout,
    );
    const data = JSON.parse(embedded?.[1] ?? "null") as { timeline: { items: ViewItem[] } };
    expect(drawnPairs(data.timeline.items)).toEqual(EXPECTED_PAIRS);
  });

  // Fails without the fix: every tool_call and tool_call_update was named "call_1", so turn 2's
  // update named turn 1's calls as well as its own.
  it("ACP updates give each call its own toolCallId and each result's update the id of its call", () => {
    const updates = toAcpUpdates(log.events);
    const calls = updates.filter(
      (u): u is Extract<AcpSessionUpdate, { sessionUpdate: "tool_call" }> =>
        u.sessionUpdate === "tool_call",
    );
    const ends = updates.filter(
      (u): u is Extract<AcpSessionUpdate, { sessionUpdate: "tool_call_update" }> =>
        u.sessionUpdate === "tool_call_update",
    );
    expect(calls.map((c) => c.title)).toEqual(["list_files", "grep", "read_file"]);
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(3);
    // Turn 2's update names turn 2's call, and no other call.
    const readFileEnd = ends.find((u) => u.content[0]?.content.text === readFile.output);
    expect(readFileEnd?.toolCallId).toBe(calls[2]?.toolCallId);
    expect(calls.slice(0, 2).map((c) => c.toolCallId)).not.toContain(readFileEnd?.toolCallId);
    expect(ends.map((u) => calls.findIndex((c) => c.toolCallId === u.toolCallId))).toEqual([
      0, 1, 2, -1,
    ]);
  });

  // Fails without the fix: a live stream opened between turn 2's call and its result sent the
  // result with no callSeq and no name (its builder knew no call before the stream's start).
  it("the live stream answers a result whose call landed before the stream began", async () => {
    const live = pairingLog("pairing-live");
    const [, , readFile] = live.calls as [unknown, unknown, (typeof live.calls)[0]];
    // Written up to turn 2's call (its step open), by this store as the writer.
    await store.create({ id: "pairing-live" });
    await store.append("pairing-live", live.events.slice(0, readFile.resultSeq));
    const stop = new AbortController();
    const server = createServer((_req, res) => {
      new LiveStreams({ store, log: () => {} })
        .serve("pairing-live", readFile.resultSeq, res, stop.signal)
        .catch((error: unknown) => res.destroy(error as Error));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/`);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      // The head is written once the watch is set up: only then is the rest appended.
      while (!text.includes(": seedline live")) {
        text += decoder.decode((await reader.read()).value ?? new Uint8Array(), { stream: true });
      }
      await store.append("pairing-live", live.events.slice(readFile.resultSeq));
      while (!/event: items\ndata: .*\n\n/.test(text)) {
        text += decoder.decode((await reader.read()).value ?? new Uint8Array(), { stream: true });
      }
      const data = /event: items\ndata: (.*)\n/.exec(text)?.[1] ?? "{}";
      const items = (JSON.parse(data) as { items: ViewItem[] }).items;
      expect(items.find((i) => i.kind === "tool-result")).toMatchObject({
        seq: readFile.resultSeq,
        callSeq: readFile.callSeq,
        name: "read_file",
        text: readFile.output,
      });
      await reader.cancel();
    } finally {
      stop.abort();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
