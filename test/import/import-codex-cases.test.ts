// Codex rollout mapping, case by case, on small rollouts written here: turns without task markers, prompts told from context, cut-off tasks, shell and search calls, bad places.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { mapCodexRollout } from "../../src/import/codex.js";
import type { MappedSession } from "../../src/import/transcript.js";
import { replayProblems } from "../../src/replay/derive.js";
import {
  checkMapped,
  foreignRecords,
  withoutForeignRecords,
} from "../helpers/import-codex-harness.js";

/** The timestamp of the n-th line of a rollout written here. */
const at = (n: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

/** A rollout of `records` ([type, payload] each), a session_meta first, one line each, timestamps a second apart. */
function rollout(...records: readonly (readonly [string, object])[]): string {
  const meta = ["session_meta", { id: "s-1", timestamp: at(0), cwd: "/w", cli_version: "0.1" }];
  return [meta, ...records]
    .map(([type, payload], i) => `${JSON.stringify({ timestamp: at(i), type, payload })}\n`)
    .join("");
}

const item = (payload: object) => ["response_item", payload] as const;
const event = (payload: object) => ["event_msg", payload] as const;
const userItem = (text: string) =>
  item({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const userCopy = (text: string) =>
  event({ type: "user_message", message: text, images: [], local_images: [], text_elements: [] });
const answer = (text: string) =>
  item({ type: "message", role: "assistant", content: [{ type: "output_text", text }] });
const reasoning = (text: string) =>
  item({ type: "reasoning", summary: [{ type: "summary_text", text }], content: null });

function only(text: string): MappedSession {
  const mapped = mapCodexRollout(text);
  expect(mapped.sessions).toHaveLength(1);
  return mapped.sessions[0] as MappedSession;
}

const types = (events: readonly SessionEvent[]) =>
  withoutForeignRecords(events)
    .map((e) => e.type)
    .filter((t) => t !== "assistant/chunk");

describe("mapping a Codex rollout", () => {
  it("opens a turn at each prompt of a rollout without task markers, ending the one before as completed", () => {
    const session = only(
      rollout(
        userItem("<environment_context>…</environment_context>"),
        userItem("first"),
        userCopy("first"),
        reasoning("think"),
        item({ type: "function_call", name: "shell", arguments: "{}", call_id: "c1" }),
        item({ type: "function_call_output", call_id: "c1", output: "ok" }),
        answer("done"),
        userItem("second"),
        userCopy("second"),
        answer("again"),
      ),
    );
    expect(types(session.events)).toEqual([
      "context/message",
      "turn/start",
      "user/message",
      "step/start",
      "assistant/message",
      "tool/call",
      "tool/result",
      "step/end",
      "step/start",
      "assistant/message",
      "step/end",
      "turn/end",
      "turn/start",
      "user/message",
      "step/start",
    ]);
    const context = session.events.find((e) => e.type === "context/message");
    expect(context?.data).toEqual({
      content: [{ type: "text", text: "<environment_context>…</environment_context>" }],
      source: { kind: "plugin", plugin: "codex:user" },
    });
    expect(session.events.find((e) => e.type === "turn/end")?.data).toEqual({
      turn: 1,
      reason: { kind: "completed" },
    });
    expect(checkMapped(session, "legacy.jsonl")).toEqual([]);
  });

  it("waits for the line after a user-role message to tell a prompt from injected context", () => {
    const head = rollout(event({ type: "task_started", turn_id: "t1" }), userItem("hello"));
    const waiting = mapCodexRollout(head);
    const before = head.slice(0, head.lastIndexOf("\n", head.length - 2) + 1);
    expect(waiting.consumed).toBe(before.length);
    expect(waiting.counts.mapped).toBe(2);
    expect(waiting).toEqual({ ...mapCodexRollout(before), consumed: before.length });

    const typed = only(head + rollout(userCopy("hello")).split("\n")[1]);
    const prompt = typed.events.find((e) => e.type === "user/message");
    expect(prompt?.data.content).toEqual([{ type: "text", text: "hello" }]);
    expect(prompt?.time).toBe(Date.parse(at(2)));

    const injected = only(
      `${head}${JSON.stringify({ timestamp: at(3), type: "turn_context", payload: {} })}\n`,
    );
    expect(injected.events.filter((e) => e.type === "user/message")).toEqual([]);
    expect(injected.events.filter((e) => e.type === "context/message")).toHaveLength(1);
  });

  it("ends a task cut off mid-response as aborted, its step answered without a finish chunk", () => {
    const session = only(
      rollout(
        event({ type: "task_started", turn_id: "t1" }),
        userItem("go"),
        userCopy("go"),
        reasoning("hmm"),
        answer("partial"),
        event({ type: "turn_aborted", reason: "interrupted" }),
      ),
    );
    const chunks = session.events.flatMap((e) =>
      e.type === "assistant/chunk" ? [e.data.chunk] : [],
    );
    expect(chunks.some((c) => c.type === "finish")).toBe(false);
    const message = session.events.find((e) => e.type === "assistant/message");
    expect(message?.data.content).toEqual([
      { type: "reasoning", text: "hmm" },
      { type: "text", text: "partial" },
    ]);
    expect(session.events.findLast((e) => e.type === "turn/end")?.data).toEqual({
      turn: 1,
      reason: { kind: "aborted", reason: "interrupted" },
    });
    // The cut-off call replays as a hang, as an aborted recording does.
    const events = withoutForeignRecords(session.events);
    expect(replayProblems(events)).toEqual([]);
    expect(checkMapped(session, "aborted.jsonl")).toEqual([]);
  });

  it("maps a local shell call and a web search as tool calls; the search takes the id Codex reported", () => {
    const action = { type: "exec", command: ["ls", "-a"] };
    const search = { type: "search", query: "seedline" };
    const session = only(
      rollout(
        event({ type: "task_started", turn_id: "t1" }),
        userItem("look"),
        userCopy("look"),
        event({ type: "web_search_end", call_id: "ws_1", query: "seedline", action: search }),
        item({ type: "web_search_call", status: "completed", action: search }),
        item({ type: "local_shell_call", call_id: "c1", status: "completed", action }),
        event({
          type: "token_count",
          info: {
            total_token_usage: { input_tokens: 9, output_tokens: 2 },
            last_token_usage: { input_tokens: 9, output_tokens: 2 },
          },
        }),
        item({
          type: "function_call_output",
          call_id: "c1",
          output: [{ type: "input_text", text: "a b" }],
        }),
        event({ type: "task_complete", turn_id: "t1" }),
      ),
    );
    const calls = session.events.flatMap((e) => (e.type === "tool/call" ? [e.data] : []));
    expect(calls).toEqual([
      { turn: 1, step: 1, callId: "ws_1", name: "web_search", arguments: JSON.stringify(search) },
      { turn: 1, step: 1, callId: "c1", name: "local_shell", arguments: JSON.stringify(action) },
    ]);
    const result = session.events.find((e) => e.type === "tool/result");
    expect(result?.data).toEqual({
      turn: 1,
      step: 1,
      callId: "c1",
      content: [{ type: "text", text: "a b" }],
      isError: false,
    });
    const finish = session.events.find(
      (e) => e.type === "assistant/chunk" && e.data.chunk.type === "finish",
    );
    expect(finish?.type === "assistant/chunk" && finish.data.chunk).toEqual({
      type: "finish",
      reason: { kind: "tool-calls" },
    });
    expect(session.events.find((e) => e.type === "assistant/message")?.data.usage).toEqual({
      inputTokens: 9,
      outputTokens: 2,
    });
    expect(foreignRecords(session.events).map((r) => r.data.line)).toEqual([1, 2, 5, 8, 10]);
    expect(checkMapped(session, "tools.jsonl")).toEqual([]);
  });

  it("keeps whole and reports a tool output that no pending call asked for", () => {
    const text = rollout(
      event({ type: "task_started", turn_id: "t1" }),
      userItem("go"),
      userCopy("go"),
      item({ type: "function_call_output", call_id: "nobody", output: "?" }),
    );
    const mapped = mapCodexRollout(text);
    expect(mapped.problems).toEqual([
      {
        line: 5,
        outcome: "verbatim",
        message: 'expected a pending call of the open step for "nobody", found none',
      },
    ]);
    expect(mapped.counts).toEqual({ mapped: 4, verbatim: 1, refused: 0 });
    const session = mapped.sessions[0] as MappedSession;
    expect(foreignRecords(session.events).at(-1)?.data.line).toBe(5);
    expect(checkMapped(session, "orphan.jsonl")).toEqual([]);
  });

  it("reports a line that is JSON but no object, and a task end outside any turn", () => {
    const text = `${rollout(event({ type: "task_complete", turn_id: "t0" }))}[1,2]\n`;
    const mapped = mapCodexRollout(text);
    expect(mapped.problems).toEqual([
      {
        line: 2,
        outcome: "verbatim",
        message: "expected an open turn for task_complete, found none",
      },
      { line: 3, outcome: "verbatim", message: "expected a JSON object, found an array" },
    ]);
    expect(
      foreignRecords((mapped.sessions[0] as MappedSession).events).map((r) => r.data.record),
    ).toEqual([
      expect.objectContaining({ type: "session_meta" }),
      expect.objectContaining({ type: "event_msg" }),
      [1, 2],
    ]);
  });

  it("takes the title from Codex's thread name, the last one given", () => {
    const session = only(
      rollout(
        event({ type: "thread_name_updated", thread_id: "s-1", thread_name: "first name" }),
        event({ type: "thread_name_updated", thread_id: "s-1", thread_name: "Fix the parser" }),
      ),
    );
    expect(session.title).toBe("Fix the parser");
  });

  it("gives no session for a text without a session_meta line, and none for an empty one", () => {
    const text = `${JSON.stringify({ timestamp: at(0), type: "turn_context", payload: {} })}\n`;
    expect(mapCodexRollout(text).sessions).toEqual([]);
    expect(mapCodexRollout("")).toEqual({
      format: "codex",
      sessions: [],
      counts: { mapped: 0, verbatim: 0, refused: 0 },
      problems: [],
      consumed: 0,
    });
  });

  it("stamps each event with the time of the line it comes from", () => {
    const session = only(
      rollout(event({ type: "task_started", turn_id: "t1" }), userItem("x"), userCopy("x")),
    );
    expect(session.header.createdAt).toBe(Date.parse(at(0)));
    expect(session.events.map((e) => [e.type, e.time])).toEqual([
      ["foreign/record", Date.parse(at(0))],
      ["turn/start", Date.parse(at(1))],
      ["foreign/record", Date.parse(at(1))],
      ["user/message", Date.parse(at(2))],
    ]);
  });

  it("keeps a line whole when its timestamp is not one that milliseconds give back", () => {
    const lines = [
      "2026-01-01T00:00:01.000123Z",
      "2026-02-30T00:00:00.000Z",
      "2026-02-28T23:59:59.999Z",
    ].map((timestamp) =>
      JSON.stringify({
        timestamp,
        type: "event_msg",
        payload: { type: "agent_message", message: "m", phase: null },
      }),
    );
    const text = `${rollout()}${lines.join("\n")}\n`;
    const session = only(text);
    // The copies say nothing more; only the timestamps that do not survive as `time` keep a line.
    expect(foreignRecords(session.events).map((r) => r.data.line)).toEqual([1, 2, 3]);
    expect(session.events.at(-1)?.time).toBe(Date.parse("2026-02-30T00:00:00.000Z"));
  });
});
