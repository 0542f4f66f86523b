// Turn inference and replay matching of the model proxy, as pure functions over parsed requests.
import { describe, expect, it } from "vitest";
import type { SessionRecordResult } from "../../src/generated.js";
import { fingerprintOf, requestDiff } from "../../src/proxy/fingerprint.js";
import { openaiChat } from "../../src/proxy/openai-chat.js";
import { opsBeforeCall } from "../../src/proxy/turn-inference.js";
import type { NeutralRequest } from "../../src/proxy/types.js";

function parse(body: object): NeutralRequest {
  const parsed = openaiChat.parseRequest(body);
  if (parsed === undefined) throw new Error("expected a chat completion request");
  return parsed;
}

const fp = (request: NeutralRequest) => fingerprintOf("openai-chat", request);

const noTurn: SessionRecordResult = {
  nextSeq: 0,
  lastTurn: 0,
  finished: false,
  pendingToolCalls: [],
};

describe("turn inference", () => {
  it("opens a turn for a new user message, and none for the same request repeated", () => {
    const first = parse({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(opsBeforeCall(noTurn, undefined, first, fp(first), undefined).map((o) => o.op)).toEqual([
      "turn_start",
      "step_start",
    ]);
    const afterFirst: SessionRecordResult = {
      nextSeq: 9,
      lastTurn: 1,
      turn: 1,
      finished: false,
      pendingToolCalls: [],
    };
    expect(
      opsBeforeCall(afterFirst, fp(first), first, fp(first), undefined).map((o) => o.op),
    ).toEqual(["step_start"]);
    const next = parse({
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "user", content: "again" },
      ],
    });
    const ops = opsBeforeCall(afterFirst, fp(first), next, fp(next), undefined);
    expect(ops.map((o) => o.op)).toEqual(["turn_end", "turn_start", "step_start"]);
    expect(ops[1]).toMatchObject({ prompt: [{ type: "text", text: "again" }] });
  });

  it("answers the open step's tool calls from the tool messages after the last assistant message, the rest as unanswered", () => {
    const open: SessionRecordResult = {
      nextSeq: 12,
      lastTurn: 1,
      turn: 1,
      step: 1,
      finished: true,
      pendingToolCalls: [
        { callId: "a", name: "x", arguments: "{}" },
        { callId: "b", name: "y", arguments: "{}" },
      ],
    };
    const request = parse({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "a", type: "function", function: { name: "x", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "a", content: "done" },
      ],
    });
    const ops = opsBeforeCall(open, undefined, request, fp(request), {
      api: "openai-chat",
      status: 200,
    });
    expect(ops).toEqual([
      { op: "tool_result", callId: "a", content: [{ type: "text", text: "done" }] },
      expect.objectContaining({
        op: "tool_result",
        callId: "b",
        isError: true,
        error: { name: "UnansweredToolCall", code: "unanswered" },
      }),
      { op: "step_end", response: { api: "openai-chat", status: 200 } },
      expect.objectContaining({ op: "step_start" }),
    ]);
  });
});

describe("replay matching", () => {
  const recorded = parse({
    model: "gpt-4o",
    temperature: 0,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ],
    tools: [
      { type: "function", function: { name: "a" } },
      { type: "function", function: { name: "b" } },
    ],
  });

  it("matches the same request whatever its key order, its streaming mode or a null for an empty content", () => {
    const same = parse({
      tools: [
        { function: { name: "a" }, type: "function" },
        { type: "function", function: { name: "b" } },
      ],
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        { content: "hi", role: "user" },
      ],
      temperature: 0,
      model: "gpt-4o",
    });
    expect(requestDiff(fp(recorded), fp(same), same.messages)).toEqual([]);
  });

  it("names what differs: the model, the parameters, the tools and the first differing message", () => {
    const other = parse({
      model: "gpt-4o-mini",
      temperature: 1,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hello there" },
      ],
      tools: [
        { type: "function", function: { name: "a" } },
        { type: "function", function: { name: "c" } },
      ],
    });
    expect(requestDiff(fp(recorded), fp(other), other.messages)).toEqual([
      'model: recorded "gpt-4o", got "gpt-4o-mini"',
      'params: recorded {"temperature":0}, got {"temperature":1}',
      "tools: recorded [a, b], got [a, c]",
      'message 2: recorded another user message, got user "hello there"',
    ]);
  });
});
