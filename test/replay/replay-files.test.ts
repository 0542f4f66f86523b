// Recorded session files for replay: header and log parsing, loadSessionScripts, fixture folders and overrides.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  hasCode,
  type ReplayEntry,
  ReplayError,
  type SessionEvent,
  type SessionScript,
  StorageError,
} from "../../src/index.js";
import {
  loadFixtureScripts,
  loadSessionScripts,
  orderScripts,
  parseReplayOverride,
  parseSessionHeader,
  parseSessionLog,
} from "../../src/replay/index.js";
import {
  assistantChunk,
  stepEnd,
  stepStart,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const corpus = (path: string) => join(CORPUS_DIR, path);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "seedline-replay-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** JSONL text: the header line, then one line per event. */
function jsonl(header: object, events: readonly SessionEvent[]): string {
  return [{ type: "session", version: 0, ...header }, ...events]
    .map((line) => `${JSON.stringify(line)}\n`)
    .join("");
}

/** A turn whose one step streamed a text-delta and was closed as interrupted by crash repair. */
function interruptedTurn(): SessionEvent[] {
  return [
    turnStart(0, 1),
    userMessage(1, "go"),
    stepStart(2, 1, 1),
    assistantChunk(3, 1, 1, { type: "text-delta", index: 0, text: "half" }),
    stepEnd(4, 1, 1),
    turnEnd(5, 1, { kind: "interrupted" }),
  ];
}

const OVERRIDE: ReplayEntry[] = [
  { kind: "chunks", chunks: [{ type: "finish", reason: { kind: "stop" } }] },
];

/** The error a promise rejects with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("parseSessionHeader", () => {
  it("reads id, createdAt and seedLength from the first non-blank line", () => {
    const text = `\n  \n${jsonl({ id: "c", createdAt: 5, parentSession: "p", seedLength: 3 }, [])}`;
    expect(parseSessionHeader(text)).toEqual({ id: "c", createdAt: 5, seedLength: 3 });
  });

  it("gives 0 for a header without seedLength", () => {
    expect(parseSessionHeader(jsonl({ id: "s", createdAt: 0 }, []))).toEqual({
      id: "s",
      createdAt: 0,
      seedLength: 0,
    });
  });

  it("refuses a missing or invalid header as CORRUPT_LOG, and another version as FORMAT_UNSUPPORTED", () => {
    const empty = thrownBy(() => parseSessionHeader("\n\n", "empty.jsonl"));
    expect(hasCode(empty, "CORRUPT_LOG")).toBe(true);
    const invalid = thrownBy(() => parseSessionHeader('\n{"type":"session","version":0}\n', "f"));
    expect((invalid as StorageError).details).toEqual({ location: "f", line: 2 });
    const newer = thrownBy(() =>
      parseSessionHeader('{"type":"session","version":1,"id":"x","createdAt":0}', "f"),
    );
    expect((newer as StorageError).code).toBe("FORMAT_UNSUPPORTED");
    expect((newer as StorageError).details).toEqual({ found: 1, supported: 0, location: "f" });
  });
});

describe("parseSessionLog", () => {
  it("returns the events after the header", () => {
    const events = interruptedTurn();
    expect(parseSessionLog(jsonl({ id: "s", createdAt: 0 }, events))).toEqual(events);
  });

  it("names the line number of a line that is not JSON, counting blank lines", () => {
    const lines = jsonl({ id: "s", createdAt: 0 }, interruptedTurn()).split("\n");
    lines.splice(2, 0, "");
    lines[4] = "{not json";
    const error = thrownBy(() => parseSessionLog(lines.join("\n"), "broken.jsonl"));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe("CORRUPT_LOG");
    expect((error as StorageError).details).toEqual({ location: "broken.jsonl", line: 5 });
  });

  it("names the line, seq and rule of an event that breaks an invariant", () => {
    const events = interruptedTurn();
    events[3] = assistantChunk(3, 1, 2); // a chunk naming a step that is not open
    const error = thrownBy(() => parseSessionLog(jsonl({ id: "s", createdAt: 0 }, events), "f"));
    expect((error as StorageError).code).toBe("CORRUPT_LOG");
    expect((error as StorageError).details).toEqual({
      location: "f",
      line: 5,
      seq: 3,
      rule: "step-order",
    });
  });

  it("refuses an unknown event type as FORMAT_UNSUPPORTED", () => {
    const text = `${jsonl({ id: "s", createdAt: 0 }, [])}{"type":"x/new","seq":0,"time":0,"data":{}}\n`;
    const error = thrownBy(() => parseSessionLog(text, "f"));
    expect((error as StorageError).code).toBe("FORMAT_UNSUPPORTED");
    expect((error as StorageError).details).toMatchObject({ found: "x/new", location: "f" });
  });

  it("refuses a header seedLength longer than the log", () => {
    const error = thrownBy(() =>
      parseSessionLog(jsonl({ id: "s", createdAt: 0, seedLength: 2 }, [])),
    );
    expect(hasCode(error, "CORRUPT_LOG")).toBe(true);
  });
});

describe("parseReplayOverride", () => {
  it("reads a JSON array of entries", () => {
    expect(parseReplayOverride(JSON.stringify(OVERRIDE))).toEqual(OVERRIDE);
  });

  it("refuses anything else as INVALID_PARAMS, pointing at the bad entry", () => {
    for (const [text, path] of [
      ["{", ""],
      ['{"kind":"chunks"}', ""],
      ['[{"kind":"chunks","chunks":[]},{"kind":"wait"}]', "/1"],
    ] as const) {
      const error = thrownBy(() => parseReplayOverride(text));
      expect(error).toBeInstanceOf(ReplayError);
      expect((error as ReplayError).code).toBe("INVALID_PARAMS");
      expect((error as ReplayError<"INVALID_PARAMS">).details.errors[0]?.instancePath).toBe(path);
    }
  });
});

describe("loadSessionScripts", () => {
  it("gives subagent-fork/session.1.jsonl only the child's own entry", async () => {
    const scripts = await loadSessionScripts({
      file: corpus("subagent-fork/session.jsonl"),
      childFiles: [corpus("subagent-fork/session.1.jsonl")],
    });
    expect(scripts.map((s) => [s.sessionId, s.primary, s.seedLength, s.entries.length])).toEqual([
      ["f2358dc0-75f8-4649-8440-ab94b8e10dc3", true, 0, 3],
      ["906f1eac-a457-4eb9-828b-1ba537552524", false, 38, 1],
    ]);
    // The parent's first entry is what the child's log inherits; the child must not replay it.
    expect(scripts[1]?.entries[0]).not.toEqual(scripts[0]?.entries[0]);
  });

  it("slices a primary that is itself a fork child at its own seedLength", async () => {
    const [primary] = await loadSessionScripts({ file: corpus("subagent-fork/session.1.jsonl") });
    expect(primary).toMatchObject({ primary: true, seedLength: 38 });
    expect(primary?.entries).toHaveLength(1);
  });

  it("orders the children of subagent-mixed by createdAt, whatever order they are given in", async () => {
    const scripts = await loadSessionScripts({
      file: corpus("subagent-mixed/session.jsonl"),
      childFiles: [
        corpus("subagent-mixed/session.2.jsonl"),
        corpus("subagent-mixed/session.1.jsonl"),
      ],
    });
    expect(scripts.map((s) => [s.sessionId, s.createdAt])).toEqual([
      ["6d80d699-1744-467a-80a3-e3c73110adda", 1782133869868],
      ["be77a907-c832-4870-8e71-beb6e57d3726", 1782133872837],
      ["3659a741-05d5-4382-93e5-977b8d563ab3", 1782133875844],
    ]);
    expect(scripts.map((s) => s.entries.length)).toEqual([4, 1, 1]);
  });

  it("breaks createdAt ties by id", () => {
    const script = (sessionId: string, createdAt: number): SessionScript => ({
      sessionId,
      createdAt,
      primary: sessionId === "p",
      seedLength: 0,
      entries: [],
    });
    const ordered = orderScripts(script("p", 9), [script("b", 1), script("a", 1), script("B", 1)]);
    expect(ordered.map((s) => s.sessionId)).toEqual(["p", "B", "a", "b"]);
  });

  it("refuses a log with an interrupted turn as REPLAY_INCOMPLETE naming turn and step", async () => {
    const file = join(dir, "crashed.jsonl");
    await writeFile(file, jsonl({ id: "crashed", createdAt: 0 }, interruptedTurn()));
    const error = await rejectionOf(loadSessionScripts({ file }));
    expect(error).toBeInstanceOf(ReplayError);
    expect((error as ReplayError).code).toBe("REPLAY_INCOMPLETE");
    expect((error as ReplayError).details).toEqual({ sessionId: "crashed", turn: 1, step: 1 });
  });

  it("replaces the primary's script with an override file, without deriving it", async () => {
    const file = join(dir, "overridden.jsonl");
    const overrideFile = join(dir, "overridden.override.json");
    await writeFile(file, jsonl({ id: "crashed", createdAt: 7 }, interruptedTurn()));
    await writeFile(overrideFile, JSON.stringify(OVERRIDE));
    expect(await loadSessionScripts({ file, overrideFile })).toEqual([
      { sessionId: "crashed", createdAt: 7, primary: true, seedLength: 0, entries: OVERRIDE },
    ]);
  });

  it("names the file of a malformed line", async () => {
    const file = join(dir, "torn.jsonl");
    await writeFile(file, `${jsonl({ id: "t", createdAt: 0 }, interruptedTurn())}{"type":`);
    const error = await rejectionOf(loadSessionScripts({ file }));
    expect((error as StorageError).details).toEqual({ location: file, line: 8 });
  });
});

describe("loadFixtureScripts", () => {
  it("loads session.jsonl first, then session.N.jsonl children by createdAt", async () => {
    const scripts = await loadFixtureScripts(corpus("subagent-mixed"));
    expect(scripts.map((s) => [s.primary, s.seedLength])).toEqual([
      [true, 0],
      [false, 0],
      [false, 44],
    ]);
  });

  it("uses replay.override.json for the primary when present", async () => {
    const folder = join(dir, "fixture");
    await mkdir(folder);
    await writeFile(
      join(folder, "session.jsonl"),
      jsonl({ id: "p", createdAt: 0 }, interruptedTurn()),
    );
    await writeFile(join(folder, "notes.txt"), "ignored");
    const incomplete = await rejectionOf(loadFixtureScripts(folder));
    expect(hasCode(incomplete, "REPLAY_INCOMPLETE")).toBe(true);
    await writeFile(join(folder, "replay.override.json"), JSON.stringify(OVERRIDE));
    const [primary] = await loadFixtureScripts(folder);
    expect(primary?.entries).toEqual(OVERRIDE);
  });

  it("gives a header-only fixture an empty script", async () => {
    expect(await loadFixtureScripts(corpus("handshake"))).toEqual([
      {
        sessionId: "00000000-0000-0000-0000-000000000000",
        createdAt: 0,
        primary: true,
        seedLength: 0,
        entries: [],
      },
    ]);
  });
});
