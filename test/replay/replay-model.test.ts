// ReplayModel: callers bound to scripts in first-call order, cursors, loud failures, and enacting entries.
import { describe, expect, it } from "vitest";
import {
  enactEntry,
  RecordedModelError,
  type ReplayEntry,
  ReplayError,
  ReplayModel,
  type SessionScript,
  type StreamChunk,
} from "../../src/index.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

function chunksEntry(text: string): ReplayEntry {
  return {
    kind: "chunks",
    chunks: [
      { type: "text-delta", index: 0, text },
      { type: "finish", reason: { kind: "stop" } },
    ],
  };
}

function script(
  sessionId: string,
  entries: readonly ReplayEntry[],
  primary = false,
): SessionScript {
  return { sessionId, createdAt: 0, primary, seedLength: 0, entries };
}

/** A primary with two responses and a child with one. */
function twoScripts(): SessionScript[] {
  return [
    script("recorded-parent", [chunksEntry("p1"), chunksEntry("p2")], true),
    script("recorded-child", [chunksEntry("c1")]),
  ];
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

describe("ReplayModel", () => {
  it("binds two callers to the scripts in first-call order, each with its own cursor", () => {
    const model = new ReplayModel(twoScripts());
    // The child's caller happens to ask first: it takes the primary's script, as docs/replay.md says.
    expect(model.next("live-b")).toEqual({
      entry: chunksEntry("p1"),
      index: 0,
      sessionId: "recorded-parent",
    });
    expect(model.next("live-a")).toEqual({
      entry: chunksEntry("c1"),
      index: 0,
      sessionId: "recorded-child",
    });
    expect(model.next("live-b")).toMatchObject({ index: 1, sessionId: "recorded-parent" });
    expect(model.boundScript("live-a")).toBe("recorded-child");
    expect(model.boundScript("nobody")).toBeUndefined();
  });

  it("fails a call past the end of a script with REPLAY_EXHAUSTED, and never wraps", () => {
    const model = new ReplayModel(twoScripts());
    model.next("a");
    model.next("a");
    for (let i = 0; i < 2; i++) {
      const error = thrownBy(() => model.next("a"));
      expect(error).toBeInstanceOf(ReplayError);
      expect((error as ReplayError).code).toBe("REPLAY_EXHAUSTED");
      expect((error as ReplayError).details).toEqual({
        sessionId: "recorded-parent",
        callerSessionId: "a",
      });
    }
  });

  it("fails a caller arriving when every script is bound with REPLAY_UNEXPECTED_SESSION", () => {
    const model = new ReplayModel(twoScripts());
    model.next("a");
    model.next("b");
    const error = thrownBy(() => model.next("c"));
    expect(error).toBeInstanceOf(ReplayError);
    expect((error as ReplayError).code).toBe("REPLAY_UNEXPECTED_SESSION");
    expect((error as ReplayError).details).toEqual({ callerSessionId: "c" });
    // The bound callers are not disturbed by the refused one.
    expect(model.next("a").index).toBe(1);
  });

  it("binds a caller to an empty script, whose first call is then exhausted", () => {
    const model = new ReplayModel([script("empty", [], true)]);
    expect((thrownBy(() => model.next("a")) as ReplayError).code).toBe("REPLAY_EXHAUSTED");
    expect((thrownBy(() => model.next("b")) as ReplayError).code).toBe("REPLAY_UNEXPECTED_SESSION");
  });

  it("returns throw and hang entries as data", () => {
    const thrown: ReplayEntry = { kind: "throw", chunks: [], message: "down", code: "E" };
    const hang: ReplayEntry = { kind: "hang", chunks: [] };
    const model = new ReplayModel([script("s", [thrown, hang], true)]);
    expect(model.next("a").entry).toEqual(thrown);
    expect(model.next("a").entry).toEqual(hang);
  });

  it("reports the scripts with entries not yet served", () => {
    const model = new ReplayModel(twoScripts());
    model.next("a");
    expect(model.unserved()).toEqual([
      { sessionId: "recorded-parent", callerSessionId: "a", remaining: 1 },
      { sessionId: "recorded-child", callerSessionId: undefined, remaining: 1 },
    ]);
    model.next("a");
    model.next("b");
    expect(model.unserved()).toEqual([]);
  });

  it("keeps its own frozen copy of the scripts", () => {
    const scripts = twoScripts();
    const model = new ReplayModel(scripts);
    (scripts[0]?.entries as ReplayEntry[]).length = 0;
    const { entry } = model.next("a");
    expect(entry).toEqual(chunksEntry("p1"));
    expect(Object.isFrozen(entry.chunks)).toBe(true);
  });

  it("opens a fixture folder", async () => {
    const model = await ReplayModel.fromFixture(`${CORPUS_DIR}/error-finish`);
    expect(model.next("live").entry).toMatchObject({ kind: "throw", code: "AUTH" });
  });
});

describe("enactEntry", () => {
  it("streams a chunks entry and ends", async () => {
    const entry = chunksEntry("hi");
    expect(await collect(enactEntry(entry))).toEqual(entry.chunks);
  });

  it("streams a throw entry's chunks, then throws the recorded error", async () => {
    const chunk: StreamChunk = { type: "text-delta", index: 0, text: "a" };
    const seen: StreamChunk[] = [];
    const entry: ReplayEntry = { kind: "throw", chunks: [chunk], message: "down", code: "E401" };
    const error = await (async () => {
      try {
        for await (const c of enactEntry(entry)) seen.push(c);
      } catch (e) {
        return e;
      }
    })();
    expect(seen).toEqual([chunk]);
    expect(error).toBeInstanceOf(RecordedModelError);
    expect(error).toMatchObject({ message: "down", code: "E401" });
  });

  it("streams a hang entry's chunks, then waits until the caller cancels", async () => {
    const model = await ReplayModel.fromFixture(`${CORPUS_DIR}/cancel`);
    const controller = new AbortController();
    const stream = model.stream("live", { signal: controller.signal });
    expect((await stream.next()).value).toMatchObject({ type: "block-start" });
    expect((await stream.next()).value).toMatchObject({ type: "text-delta", text: "partial" });
    let settled = false;
    const rest = stream.next().finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    controller.abort(new Error("cancelled by the test"));
    await expect(rest).rejects.toThrow("cancelled by the test");
  });

  it("refuses a hang entry without a signal instead of hanging forever", async () => {
    await expect(collect(enactEntry({ kind: "hang", chunks: [] }))).rejects.toThrow(TypeError);
  });
});
