// toAcpUpdates: stored events as ACP session/update updates, checked against ACP's own published schema.
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/generated.js";
import {
  type AcpSessionUpdate,
  acpUpdatesOf,
  defaultToolPresentation,
  type SessionEvent,
  toAcpUpdates,
} from "../../src/index.js";
import { ACP_UPDATE_MAPPING } from "../../src/log/acp-updates.js";
import {
  assistantChunk,
  assistantMessage,
  compactEnd,
  compactStart,
  compactSummary,
  contextMessage,
  foreignRecord,
  hookInvoked,
  hookResult,
  promptBlocked,
  steeringMessage,
  stepEnd,
  stepStart,
  text,
  todoWrite,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { corpusLogs } from "../helpers/corpus.js";

/** ACP's own JSON Schema (v1), as the official SDK publishes it. */
const acpSchema = createRequire(import.meta.url)("@agentclientprotocol/sdk/schema/v1/schema.json");
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(acpSchema, "acp");
const validNotification = ajv.getSchema("acp#/$defs/SessionNotification");

/** Asserts that each update is a valid ACP SessionNotification's update. */
function expectAcpValid(updates: readonly AcpSessionUpdate[]): void {
  if (validNotification === undefined) throw new Error("ACP's schema has no SessionNotification");
  for (const update of updates) {
    const ok = validNotification({ sessionId: "s", update });
    expect(ok ? [] : validNotification.errors, JSON.stringify(update)).toEqual([]);
  }
}

describe("toAcpUpdates", () => {
  it("sends each user content block as a user_message_chunk, steering too", () => {
    const user: SessionEvent = {
      ...userMessage(0, "first"),
      data: { content: [text("first"), text("second")], source: { kind: "user" } },
    };
    const updates = toAcpUpdates([user, steeringMessage(1, 0, "wait")]);
    expect(updates).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "first" } },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "second" } },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "wait" } },
    ]);
    expectAcpValid(updates);
  });

  it("sends each text and reasoning delta as streamed, neither merged nor re-chunked", () => {
    const events = [
      assistantChunk(0, 0, 0, { type: "block-start", index: 0, blockType: "reasoning" }),
      assistantChunk(1, 0, 0, { type: "reasoning-delta", index: 0, text: "let me " }),
      assistantChunk(2, 0, 0, { type: "reasoning-delta", index: 0, text: "think" }),
      assistantChunk(3, 0, 0, { type: "text-delta", index: 1, text: "" }),
      assistantChunk(4, 0, 0, { type: "text-delta", index: 1, text: "Hel" }),
      assistantChunk(5, 0, 0, { type: "text-delta", index: 1, text: "lo" }),
      assistantChunk(6, 0, 0, {
        type: "tool-call-delta",
        index: 2,
        id: "c1",
        name: "bash",
        argumentsDelta: "{}",
      }),
      assistantChunk(7, 0, 0, { type: "finish", reason: { kind: "stop" } }),
      assistantMessage(8, 0, 0, [text("Hello")]),
    ];
    const updates = toAcpUpdates(events);
    expect(updates.map((u) => [u.sessionUpdate, "content" in u ? u.content : undefined])).toEqual([
      ["agent_thought_chunk", { type: "text", text: "let me " }],
      ["agent_thought_chunk", { type: "text", text: "think" }],
      ["agent_message_chunk", { type: "text", text: "" }],
      ["agent_message_chunk", { type: "text", text: "Hel" }],
      ["agent_message_chunk", { type: "text", text: "lo" }],
    ]);
    expectAcpValid(updates);
  });

  it("sends a tool call in progress, then its completed or failed update with the result", () => {
    const updates = toAcpUpdates([
      toolCall(0, 0, 0, "c1", "read_file", '{"path":"/a"}'),
      toolResult(1, 0, 0, "c1", { output: "contents" }),
      toolCall(2, 0, 0, "c2", "bash", "not json"),
      toolResult(3, 0, 0, "c2", { output: "boom", isError: true }),
    ]);
    expect(updates).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "0.0/c1",
        title: "read_file",
        kind: "read",
        status: "in_progress",
        rawInput: { path: "/a" },
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "0.0/c1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "contents" } }],
      },
      {
        sessionUpdate: "tool_call",
        toolCallId: "0.0/c2",
        title: "bash",
        kind: "execute",
        status: "in_progress",
        rawInput: "not json",
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "0.0/c2",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "boom" } }],
      },
    ]);
    expectAcpValid(updates);
  });

  it("takes a tool's title and kind from the presenter, keeping the default for what it leaves out", () => {
    const calls = [toolCall(0, 0, 0, "c1", "bash", '{"command":"ls"}'), toolCall(1, 0, 0, "c2")];
    const updates = toAcpUpdates(calls, {
      presentTool: (call) =>
        call.callId === "c1"
          ? { title: `Run ${(JSON.parse(call.arguments) as { command: string }).command}` }
          : undefined,
    });
    expect(updates.map((u) => (u.sessionUpdate === "tool_call" ? [u.title, u.kind] : []))).toEqual([
      ["Run ls", "execute"],
      ["bash", "execute"],
    ]);
    const kinds = toAcpUpdates([toolCall(0, 0, 0, "c1", "any")], {
      presentTool: () => ({ kind: "think" }),
    });
    expect(kinds[0]).toMatchObject({ title: "any", kind: "think" });
  });

  it("guesses a tool's kind from the words of its name, other when none says one", () => {
    expect(defaultToolPresentation("readFile")).toEqual({ title: "readFile", kind: "read" });
    expect(defaultToolPresentation("str_replace_editor").kind).toBe("edit");
    expect(defaultToolPresentation("WebFetch").kind).toBe("fetch");
    expect(defaultToolPresentation("glob").kind).toBe("search");
    expect(defaultToolPresentation("subagent").kind).toBe("other");
    expect(defaultToolPresentation("constructor").kind).toBe("other");
  });

  it("sends the todo list as a plan with its entries", () => {
    const updates = toAcpUpdates([
      todoWrite(0, [
        { content: "write tests", status: "completed" },
        { content: "ship", status: "in_progress" },
      ]),
    ]);
    expect(updates).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "write tests", priority: "medium", status: "completed" },
          { content: "ship", priority: "medium", status: "in_progress" },
        ],
      },
    ]);
    expectAcpValid(updates);
  });

  it("sends nothing for markers, context, blocked prompts, compaction, hooks and foreign records", () => {
    const silent: SessionEvent[] = [
      turnStart(0, 0),
      stepStart(1, 0, 0),
      stepEnd(2, 0, 0),
      turnEnd(3, 0),
      contextMessage(4, "ctx"),
      promptBlocked(5, "no"),
      compactStart(6, 0),
      compactSummary(7, [4]),
      compactEnd(8, 0),
      hookInvoked(9, 0),
      hookResult(10, 0),
      foreignRecord(11),
    ];
    for (const event of silent) expect(acpUpdatesOf(event), event.type).toEqual([]);
  });

  it("checks updates against a schema that refuses what ACP does not allow", () => {
    // A plan entry without its required priority: the check above is not vacuous.
    const bad = { sessionUpdate: "plan", entries: [{ content: "x", status: "pending" }] };
    expect(validNotification?.({ sessionId: "s", update: bad })).toBe(false);
  });

  it("maps every event type of the vocabulary in its table", () => {
    expect(Object.keys(ACP_UPDATE_MAPPING)).toEqual([...EVENT_TYPES]);
  });

  it("gives ACP-valid updates for every recorded log, one run per event", () => {
    for (const log of corpusLogs()) {
      const events = log.events as SessionEvent[];
      const updates = toAcpUpdates(events);
      expect(updates).toEqual(events.flatMap((e) => acpUpdatesOf(e)));
      expectAcpValid(updates);
    }
  });
});
