// Replay over a SessionStore: the seed boundary of fork children, session trees, overrides, and replayed agent loops.
import { describe, expect, it } from "vitest";
import {
  type ContentBlock,
  type FinishReason,
  MemoryBackend,
  ReplayError,
  ReplayModel,
  type Session,
  type SessionEvent,
  SessionStore,
  type StreamChunk,
  storedSessionScript,
} from "../../src/index.js";
import { assembleMessage, storedSessionScripts } from "../../src/replay/index.js";
import {
  assistantChunk,
  assistantMessage,
  stepEnd,
  stepStart,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";

/** One planned model call: the blocks it answers with, and the tool results that follow it. */
interface PlannedStep {
  readonly blocks: readonly ContentBlock[];
  readonly results?: readonly string[];
}

/** The chunks a provider streams for `blocks`: per block start, deltas and end; then usage and finish. */
function streamOf(blocks: readonly ContentBlock[], finish: FinishReason): StreamChunk[] {
  const chunks: StreamChunk[] = [];
  blocks.forEach((block, index) => {
    if (block.type === "tool-call") {
      chunks.push({ type: "block-start", index, blockType: "tool-call" });
      const half = Math.floor(block.arguments.length / 2);
      for (const part of [block.arguments.slice(0, half), block.arguments.slice(half)]) {
        chunks.push({
          type: "tool-call-delta",
          index,
          id: block.id,
          name: block.name,
          argumentsDelta: part,
        });
      }
    } else if (block.type === "text" || block.type === "reasoning") {
      chunks.push({ type: "block-start", index, blockType: block.type });
      const delta = block.type === "text" ? "text-delta" : "reasoning-delta";
      for (const word of block.text.split(/(?<= )/))
        chunks.push({ type: delta, index, text: word });
    }
    chunks.push({ type: "block-end", index, block });
  });
  chunks.push({ type: "usage", usage: { inputTokens: 10, outputTokens: 5 } });
  chunks.push({ type: "finish", reason: finish });
  return chunks;
}

/**
 * The events of one recorded turn from `fromSeq`, as an agent loop writes them: per step the
 * streamed chunks, the assembled assistant/message, then each tool call and its result.
 */
function recordTurn(
  fromSeq: number,
  turn: number,
  prompt: string,
  steps: PlannedStep[],
): SessionEvent[] {
  let seq = fromSeq;
  const events: SessionEvent[] = [turnStart(seq++, turn), userMessage(seq++, prompt)];
  steps.forEach(({ blocks }, i) => {
    const step = i + 1;
    const calls = blocks.filter((b) => b.type === "tool-call");
    events.push(stepStart(seq++, turn, step));
    const chunkSeqs: number[] = [];
    for (const chunk of streamOf(blocks, { kind: calls.length > 0 ? "tool-calls" : "stop" })) {
      chunkSeqs.push(seq);
      events.push(assistantChunk(seq++, turn, step, chunk));
    }
    events.push(assistantMessage(seq++, turn, step, blocks, { sourceEventSeqs: chunkSeqs }));
    calls.forEach((call, c) => {
      const callSeq = seq;
      events.push(toolCall(seq++, turn, step, call.id, call.name, call.arguments));
      events.push(
        toolResult(seq++, turn, step, call.id, {
          output: steps[i]?.results?.[c] ?? "ok",
          sourceEventSeqs: [callSeq],
        }),
      );
    });
    events.push(stepEnd(seq++, turn, step));
  });
  events.push(turnEnd(seq++, turn));
  return events;
}

/** Records a turn at the end of `session`; returns the seq of its turn/end. */
async function record(session: Session, turn: number, prompt: string, steps: PlannedStep[]) {
  const next = await session.append(recordTurn(session.nextSeq, turn, prompt, steps));
  return next - 1;
}

/** The contents of the recorded assistant/message events after `seedLength`. */
async function recordedMessages(session: Session): Promise<ContentBlock[][]> {
  return (await session.ownEvents()).flatMap((e) =>
    e.type === "assistant/message" ? [[...e.data.content]] : [],
  );
}

/**
 * A fake agent loop over the replay: per user turn, call the model, assemble its message, and
 * call again while the message asks for tools (a real loop would run them in between).
 */
function runAgent(model: ReplayModel, callerSessionId: string, turns: number): ContentBlock[][] {
  const messages: ContentBlock[][] = [];
  for (let turn = 0; turn < turns; turn++) {
    for (;;) {
      const { entry } = model.next(callerSessionId);
      const message = assembleMessage(entry.chunks);
      messages.push(message);
      if (!message.some((block) => block.type === "tool-call")) break;
    }
  }
  return messages;
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("the seed boundary of a fork child", () => {
  it("keeps the parent's inherited chunks out of the child's script", async () => {
    const store = new SessionStore();
    const parent = await store.create({ id: "parent" });
    const boundary = await record(parent, 1, "remember MARMALADE", [
      { blocks: [text("parent says OK")] },
    ]);
    const header = await store.fork(parent, { boundary, childSessionId: "child" });
    const child = await store.load("child");
    await record(child, 2, "what was the codeword?", [{ blocks: [text("child says MARMALADE")] }]);

    // The child's stored log begins with the parent's events, chunks included.
    const inherited = (await child.readEvents())
      .slice(0, header.seedLength)
      .filter((e) => e.type === "assistant/chunk");
    expect(inherited.length).toBeGreaterThan(0);

    // Regression guard for the seed boundary. With `.slice(seedLength)` removed from
    // sessionScript (src/replay/session-script.ts) this test was run and failed at the
    // toHaveLength(1) below with "AssertionError: expected [ { kind: 'chunks', …(1) }, …(1) ] to
    // have a length of 1 but got 2": the child's first call would have replayed the parent's
    // "parent says OK" response.
    const script = await storedSessionScript(store, "child");
    expect(script.seedLength).toBe(header.seedLength);
    expect(script.entries).toHaveLength(1);
    expect(assembleMessage(script.entries[0]?.chunks ?? [])).toEqual([
      text("child says MARMALADE"),
    ]);
    const parentBlockEnd = inherited
      .map((e) => (e.type === "assistant/chunk" ? e.data.chunk : undefined))
      .find((chunk) => chunk?.type === "block-end");
    expect(parentBlockEnd).toMatchObject({ block: text("parent says OK") });
    expect(script.entries.flatMap((entry) => entry.chunks)).not.toContainEqual(parentBlockEnd);
  });
});

describe("scripts of a stored session tree", () => {
  it("gives the primary first, then every descendant by createdAt, found recursively", async () => {
    let clock = 100;
    const store = new SessionStore({ now: () => clock });
    const root = await store.create({ id: "root" });
    const end = await record(root, 1, "q", [{ blocks: [text("root answer")] }]);
    clock = 300;
    await store.fork(root, { boundary: end, childSessionId: "late-child" });
    clock = 200;
    await store.fork(root, { boundary: end, childSessionId: "early-child" });
    const early = await store.load("early-child");
    const earlyEnd = await record(early, 2, "q2", [{ blocks: [text("early answer")] }]);
    clock = 250;
    await store.fork(early, { boundary: earlyEnd, childSessionId: "grandchild" });
    await store.create({ id: "unrelated", seed: [] });

    const scripts = await storedSessionScripts(store, "root");
    expect(scripts.map((s) => [s.sessionId, s.primary, s.createdAt, s.entries.length])).toEqual([
      ["root", true, 100, 1],
      ["early-child", false, 200, 1],
      ["grandchild", false, 250, 0],
      ["late-child", false, 300, 0],
    ]);
  });

  it("refuses a step closed as interrupted by crash repair, unless that session is overridden", async () => {
    const backend = new MemoryBackend();
    const writer = new SessionStore({ backend });
    const root = await writer.create({ id: "root" });
    const end = await record(root, 1, "q", [{ blocks: [text("fine")] }]);
    await writer.fork(root, { boundary: end, childSessionId: "crashed" });
    const crashed = await writer.load("crashed");
    // The writer dies inside turn 2, after one chunk of its first step.
    await crashed.append([
      turnStart(crashed.nextSeq, 2),
      userMessage(crashed.nextSeq + 1, "long job"),
      stepStart(crashed.nextSeq + 2, 2, 1),
      assistantChunk(crashed.nextSeq + 3, 2, 1, { type: "text-delta", index: 0, text: "work" }),
    ]);
    await writer.unload("crashed");

    // A new store loads the cold log: repair closes the turn as interrupted.
    const reader = new SessionStore({ backend });
    const error = await rejectionOf(storedSessionScripts(reader, "root"));
    expect(error).toBeInstanceOf(ReplayError);
    expect((error as ReplayError).code).toBe("REPLAY_INCOMPLETE");
    expect((error as ReplayError).details).toEqual({ sessionId: "crashed", turn: 2, step: 1 });

    const override = [{ kind: "hang" as const, chunks: [] }];
    const scripts = await storedSessionScripts(reader, "root", {
      overrides: { crashed: override },
    });
    expect(scripts[1]).toMatchObject({ sessionId: "crashed", entries: override });
  });

  it("refuses an override keyed by a session outside the tree as INVALID_PARAMS", async () => {
    const store = new SessionStore();
    await store.create({ id: "root", seed: [] });
    const error = await rejectionOf(
      storedSessionScripts(store, "root", { overrides: { "a/b": [] } }),
    );
    expect(error).toBeInstanceOf(ReplayError);
    expect((error as ReplayError).code).toBe("INVALID_PARAMS");
    expect((error as ReplayError<"INVALID_PARAMS">).details.errors[0]?.instancePath).toBe(
      "/overrides/a~1b",
    );
  });

  it("refuses an unknown session as SESSION_NOT_FOUND", async () => {
    const error = await rejectionOf(storedSessionScripts(new SessionStore(), "nobody"));
    expect((error as ReplayError).code).toBe("SESSION_NOT_FOUND");
  });
});

describe("replaying a recorded parent and its fork child end to end", () => {
  it("drives two agent loops to the recorded assistant messages of each session", async () => {
    let clock = 1_000;
    const store = new SessionStore({ now: () => clock++ });
    const parent = await store.create({ id: "parent" });
    const turn1End = await record(parent, 1, "list the files, then summarise", [
      {
        blocks: [
          { type: "reasoning", text: "I should look at the folder first" },
          { type: "tool-call", id: "call-1", name: "ls", arguments: '{"path":"."}' },
        ],
        results: ["a.txt b.txt"],
      },
      { blocks: [text("There are two files: a.txt and b.txt.")] },
    ]);
    await record(parent, 2, "thanks", [{ blocks: [text("You are welcome.")] }]);

    const forked = await store.fork(parent, { boundary: turn1End, childSessionId: "child" });
    expect(forked.seedLength).toBe(turn1End + 1);
    const child = await store.load("child");
    await record(child, 2, "now count the letters in the names", [
      { blocks: [text("a.txt and b.txt have five characters each.")] },
    ]);

    const model = await ReplayModel.fromStore(store, "parent");
    expect(model.scripts.map((s) => [s.sessionId, s.entries.length])).toEqual([
      ["parent", 3],
      ["child", 1],
    ]);

    const parentMessages = runAgent(model, "live-parent", 2);
    const childMessages = runAgent(model, "live-child", 1);

    expect(parentMessages).toEqual(await recordedMessages(parent));
    expect(parentMessages).toHaveLength(3);
    expect(childMessages).toEqual(await recordedMessages(child));
    expect(childMessages).toEqual([[text("a.txt and b.txt have five characters each.")]]);
    expect(model.unserved()).toEqual([]);
    expect(() => model.next("live-child")).toThrow(
      expect.objectContaining({ code: "REPLAY_EXHAUSTED" }),
    );
  });
});
