// A JSONL fork of a log the instance has not read: the boundary found by bisecting the file, the prefix copied without reading the log.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  hasCode,
  type SessionEvent,
  type SessionHeader,
  SessionStore,
} from "../../../src/index.js";
import { formatHeaderLine } from "../../../src/log/jsonl-codec.js";
import { JsonlBackend } from "../../../src/store/jsonl/jsonl-backend.js";
import { logFileName } from "../../../src/store/jsonl/layout.js";
import { seekEventLine } from "../../../src/store/jsonl/seek-line.js";
import { simpleTurn, TIME } from "../../helpers/builders.js";
import { CORPUS_DIR } from "../../helpers/corpus.js";

const roots: string[] = [];
const backends: JsonlBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-cold-fork-"));
  roots.push(dir);
  return dir;
}

function open(root: string): JsonlBackend {
  const backend = new JsonlBackend(root, { durability: "process" });
  backends.push(backend);
  return backend;
}

function logPath(root: string, id: string): string {
  return join(root, "sessions", logFileName(id));
}

const CORPUS_LOG = join(CORPUS_DIR, "multi-turn/session.jsonl");

/** A log of `turns` closed turns written by one instance, which is then closed. */
async function writtenLog(root: string, id: string, turns: number): Promise<SessionEvent[]> {
  const writer = open(root);
  const store = new SessionStore({ backend: writer });
  const events: SessionEvent[] = [];
  await store.create({ id: id });
  for (let t = 1; t <= turns; t++) {
    const turn = simpleTurn(events.length, t);
    await store.append(id, turn);
    events.push(...turn);
  }
  await store.close();
  return events;
}

describe("seekEventLine", () => {
  it("finds the line of every event of a recorded log, with probes smaller and larger than its lines", async () => {
    const text = readFileSync(CORPUS_LOG, "utf8");
    const lines = text.split("\n").slice(0, -1);
    const headerEnd = Buffer.byteLength(`${lines[0]}\n`);
    const starts: number[] = [];
    let at = headerEnd;
    for (const line of lines.slice(1)) {
      starts.push(at);
      at += Buffer.byteLength(`${line}\n`);
    }
    const handle = await openFile(CORPUS_LOG, "r");
    try {
      for (const probe of [16, 97, 4096]) {
        for (let seq = 0; seq < starts.length; seq++) {
          const found = seekEventLine(handle, headerEnd, at, seq, probe);
          expect(found, `seq ${seq}, probe ${probe}`).toEqual({
            start: starts[seq],
            end: starts[seq + 1] ?? at,
            text: lines[seq + 1],
          });
        }
        expect(seekEventLine(handle, headerEnd, at, starts.length, probe)).toBeUndefined();
      }
      // A line cut off before its newline (a torn tail) holds no event.
      const last = starts.length - 1;
      expect(seekEventLine(handle, headerEnd, at - 1, last)).toBeUndefined();
    } finally {
      await handle.close();
    }
  });

  it("gives up on lines not in canonical form and on a seq that does not rise line by line", async () => {
    const root = tempDir();
    const turn = simpleTurn(0, 1);
    const spaced = join(root, "spaced.jsonl");
    writeFileSync(
      spaced,
      turn.map((e) => `${JSON.stringify(e, null, 1).replaceAll("\n", "")}\n`).join(""),
    );
    const repeated = join(root, "repeated.jsonl");
    writeFileSync(
      repeated,
      turn.map((e) => `${JSON.stringify({ ...e, seq: Math.min(e.seq, 3) })}\n`).join(""),
    );
    for (const [path, seq] of [
      [spaced, 2],
      [repeated, 6],
    ] as const) {
      const handle = await openFile(path, "r");
      try {
        const size = (await handle.stat()).size;
        expect(seekEventLine(handle, 0, size, seq, 16), path).toBeUndefined();
      } finally {
        await handle.close();
      }
    }
  });
});

describe("a JSONL fork of a log this instance has not read", () => {
  // Before the bisecting seek, store.fork read the whole source log to find its turn markers and
  // kept that state: this test failed with `retainedSessions` 1 where it expects 0 (and the
  // benchmark's first fork took ~9× the byte copy).
  it("copies the prefix up to a turn/end byte for byte, reading neither log", async () => {
    const root = tempDir();
    const events = await writtenLog(root, "source", 40);
    const boundary = events.findLastIndex((e, i) => e.type === "turn/end" && i < events.length / 2);
    const cold = open(root);
    const store = new SessionStore({ backend: cold });
    const child = await store.fork("source", { boundary: boundary, childSessionId: "child" });
    expect(child).toMatchObject({ parentSession: "source", seedLength: boundary + 1 });
    expect(cold.retainedSessions).toBe(0);

    // The same fork by an instance that has read the source (its turn markers known).
    const warm = open(root);
    await warm.forkPoint("source", undefined);
    await new SessionStore({ backend: warm }).fork("source", {
      boundary: boundary,
      childSessionId: "warm-child",
    });
    const body = (path: string) => readFileSync(path, "utf8").split("\n").slice(1).join("\n");
    expect(body(logPath(root, "child"))).toBe(body(logPath(root, "warm-child")));
    expect(body(logPath(root, "child"))).toBe(
      events
        .slice(0, boundary + 1)
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(""),
    );
    const readBack = await store.readEvents("child");
    expect(readBack).toEqual(events.slice(0, boundary + 1));
    // The child takes appends after its inherited prefix.
    const turns = events.slice(0, boundary + 1).filter((e) => e.type === "turn/end").length;
    await store.append("child", simpleTurn(boundary + 1, turns + 1));
    expect((await store.readEvents("child")).length).toBe(boundary + 1 + simpleTurn(0, 1).length);
  });

  it("reads the log as before when the boundary is not a turn/end or the log is not canonical", async () => {
    const root = tempDir();
    const events = await writtenLog(root, "source", 3);
    const inside = events.findIndex((e) => e.type === "turn/start" && e.seq > 0) + 1;
    const store = new SessionStore({ backend: open(root) });
    const refused = await store
      .fork("source", { boundary: inside, childSessionId: "inside" })
      .catch((e: unknown) => e);
    expect(hasCode(refused, "OPEN_TURN")).toBe(true);
    expect((refused as Error).message).toContain(`got ${inside} inside turn 2`);

    // A log written with spaces inside its lines is forked from the markers a full read finds.
    const h: SessionHeader = { version: 0, id: "spaced", createdAt: TIME };
    const spaced = events.map((e) => `${JSON.stringify(e, null, 1).replaceAll("\n", "")}\n`);
    writeFileSync(logPath(root, "spaced"), formatHeaderLine(h) + spaced.join(""));
    const end = events.findIndex((e) => e.type === "turn/end");
    const fresh = new SessionStore({ backend: open(root) });
    await fresh.fork("spaced", { boundary: end, childSessionId: "spaced-child" });
    expect(
      readFileSync(logPath(root, "spaced-child"), "utf8").split("\n").slice(1).join("\n"),
    ).toBe(spaced.slice(0, end + 1).join(""));
  });

  it("a source that grew between the boundary check and the copy is forked from a full read", async () => {
    const root = tempDir();
    const events = await writtenLog(root, "source", 4);
    const boundary = events.findIndex((e) => e.type === "turn/end");
    const backend = open(root);
    const point = await backend.forkPoint("source", boundary);
    expect(point).toMatchObject({
      length: boundary + 1,
      marker: { seq: boundary, type: "turn/end" },
    });
    // Another process appends meanwhile: the remembered offsets are for a file of another size.
    const other = new SessionStore({ backend: open(root) });
    await other.append("source", simpleTurn(events.length, 5));
    const h: SessionHeader = {
      version: 0,
      id: "child",
      createdAt: TIME,
      parentSession: "source",
      seedLength: boundary + 1,
    };
    await backend.fork("source", boundary, h);
    expect(await new SessionStore({ backend: open(root) }).readEvents("child")).toEqual(
      events.slice(0, boundary + 1),
    );
  });
});
