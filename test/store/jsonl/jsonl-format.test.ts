import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { SessionEvent, SessionHeader } from "../../../src/index.js";
import {
  formatEventLine,
  formatHeaderLine,
  parseHeaderLine,
} from "../../../src/log/jsonl-codec.js";
import { scanLogFile } from "../../../src/store/jsonl/line-reader.js";
import { type ParsedLog, parseLogText } from "../../../src/store/jsonl/log-reader.js";
import { stepStart, turnStart, userMessage } from "../../helpers/builders.js";
import { type CorpusLog, corpusLogs } from "../../helpers/corpus.js";

const LOGS = corpusLogs();
const WITH_EVENTS = LOGS.filter((log) => log.events.length > 0);
const LOCATION = "test.jsonl";
/** Small and mid-sized logs of different shapes, for the cases that re-read a log per byte. */
const SAMPLE = [
  "cancel/session.jsonl",
  "error-finish/session.jsonl",
  "multi-turn/session.jsonl",
  "subagent-fork/session.1.jsonl",
  "text-turn/session.jsonl",
  "tool-call-turn/session.jsonl",
].map((name) => LOGS.find((log) => log.name === name) as CorpusLog);

const scratch = mkdtempSync(join(tmpdir(), "seedline-jsonl-format-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The byte offsets where each line starts, plus the total size at the end. */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  if (starts.at(-1) !== bytes.length) starts.push(bytes.length);
  return starts;
}

/** The 1-based line number of the last turn/end (the header is line 1), or 0. */
function lastTurnEndLine(events: readonly unknown[]): number {
  const index = events.findLastIndex((e) => (e as { type: string }).type === "turn/end");
  return index === -1 ? 0 : index + 2;
}

function parse(bytes: Buffer | string): ParsedLog {
  return parseLogText(typeof bytes === "string" ? bytes : bytes.toString("utf8"), LOCATION);
}

/** A corpus log cut after its last turn/end and continued by three events of an open turn. */
function openTurnLog(log: CorpusLog): { bytes: Buffer; events: unknown[]; keptLines: number } {
  const end = log.events.findLastIndex((e) => (e as { type: string }).type === "turn/end");
  const kept = log.events.slice(0, end + 1) as SessionEvent[];
  const turn = (kept[end] as { data: { turn: number } }).data.turn + 1;
  const n = kept.length;
  const tail = [turnStart(n, turn), userMessage(n + 1, "go on"), stepStart(n + 2, turn, 1)];
  const lines = log.text.split("\n").slice(0, n + 1);
  const text = `${lines.join("\n")}\n${tail.map(formatEventLine).join("")}`;
  return { bytes: Buffer.from(text, "utf8"), events: [...kept, ...tail], keptLines: n + 1 };
}

async function scanBytes(bytes: Buffer, chunkBytes: number) {
  const path = join(scratch, "log.jsonl");
  writeFileSync(path, bytes);
  const handle = await open(path, "r");
  try {
    const events: unknown[] = [];
    const scan = await scanLogFile(
      handle,
      LOCATION,
      (event) => {
        events.push(event);
        return undefined;
      },
      chunkBytes,
    );
    return { scan, events };
  } finally {
    await handle.close();
  }
}

describe("formatting JSONL lines", () => {
  it("writes every corpus header and event line back byte for byte", () => {
    let lines = 0;
    for (const log of LOGS) {
      const [head, ...rest] = log.text.split("\n");
      expect(rest.pop()).toBe("");
      expect(formatHeaderLine(parseHeaderLine(head as string, log.name))).toBe(`${head}\n`);
      for (const line of rest) expect(formatEventLine(JSON.parse(line))).toBe(`${line}\n`);
      lines += rest.length + 1;
    }
    expect(LOGS.length).toBe(39);
    expect(lines).toBeGreaterThan(1000);
  });

  it("writes header members in the order type, version, id, createdAt, cwd, parentSession, seedLength", () => {
    const scrambled = {
      seedLength: 3,
      parentSession: "p",
      cwd: "/w",
      createdAt: 5,
      id: "s",
      version: 0,
    } as SessionHeader;
    expect(formatHeaderLine(scrambled)).toBe(
      '{"type":"session","version":0,"id":"s","createdAt":5,"cwd":"/w","parentSession":"p","seedLength":3}\n',
    );
    expect(formatHeaderLine({ version: 0, id: "s", createdAt: 5 })).toBe(
      '{"type":"session","version":0,"id":"s","createdAt":5}\n',
    );
  });
});

describe("reading a log text", () => {
  it("reads every corpus log whole: the header without type, every event, no torn tail", () => {
    for (const log of LOGS) {
      const { type, ...header } = log.header as { type: string };
      const parsed = parse(log.text);
      expect(type).toBe("session");
      expect(parsed.header).toEqual(header);
      expect(parsed.events).toEqual(log.events);
      expect(parsed.tornTail).toBe(false);
    }
  });

  it("ignores a final fragment at every byte offset inside the last line of every corpus log", () => {
    let offsets = 0;
    for (const log of WITH_EVENTS) {
      const bytes = Buffer.from(log.text, "utf8");
      const starts = lineStarts(bytes);
      const lastStart = starts.at(-2) as number;
      for (let cut = lastStart; cut <= bytes.length; cut++) {
        const parsed = parse(bytes.subarray(0, cut));
        const whole = cut === bytes.length;
        expect(parsed.events).toEqual(log.events.slice(0, whole ? undefined : -1));
        const inside = cut > lastStart && !whole;
        expect(parsed.tornTail).toBe(inside);
        if (inside)
          expect(parsed.tornAt).toEqual({ line: starts.length - 1, byteOffset: lastStart });
        offsets++;
      }
    }
    expect(offsets).toBe(3794);
  });

  it("cuts every byte offset of each of the last three lines after the last turn/end to the intact prefix", () => {
    let offsets = 0;
    for (const log of SAMPLE) {
      const { bytes, events, keptLines } = openTurnLog(log);
      const starts = lineStarts(bytes);
      for (let line = keptLines; line < keptLines + 3; line++) {
        const [start, end] = [starts[line] as number, starts[line + 1] as number];
        for (let cut = start; cut <= end; cut++) {
          const parsed = parse(bytes.subarray(0, cut));
          const complete = cut === end ? line : line - 1;
          expect(parsed.events).toEqual(events.slice(0, complete));
          expect(parsed.tornTail).toBe(cut > start && cut < end);
          offsets++;
        }
      }
    }
    expect(offsets).toBeGreaterThan(2000);
  });

  it("cuts at a damaged line after the last turn/end, dropping the lines after it, for a damaged byte anywhere in it", () => {
    const { bytes, events, keptLines } = openTurnLog(
      LOGS.find((l) => l.name === "multi-turn/session.jsonl") as CorpusLog,
    );
    const starts = lineStarts(bytes);
    let damaged = 0;
    for (let line = keptLines; line < keptLines + 3; line++) {
      const [start, end] = [starts[line] as number, starts[line + 1] as number];
      for (let at = start; at < end - 1; at++) {
        const copy = Buffer.from(bytes);
        copy[at] = 0; // a NUL byte is invalid anywhere in JSON text, inside strings too
        const parsed = parse(copy);
        expect(parsed.events).toEqual(events.slice(0, line - 1));
        expect(parsed.tornTail).toBe(true);
        expect(parsed.tornAt).toEqual({ line: line + 1, byteOffset: start });
        damaged++;
      }
    }
    expect(damaged).toBeGreaterThan(200);
  });

  it("reports CORRUPT_LOG naming the line and seq for a damaged line at or before the last turn/end of every corpus log", () => {
    let lines = 0;
    for (const log of WITH_EVENTS) {
      const text = log.text.split("\n");
      for (let line = 2; line <= lastTurnEndLine(log.events); line++) {
        const copy = text.slice();
        copy[line - 1] = `#${(copy[line - 1] as string).slice(1)}`;
        const error = rejectionOfSync(() => parse(copy.join("\n")));
        expect(error).toMatchObject({
          code: "CORRUPT_LOG",
          details: { location: LOCATION, line, seq: line - 2 },
        });
        lines++;
      }
    }
    expect(lines).toBeGreaterThan(1000);
  });

  it("reports CORRUPT_LOG for a damaged byte anywhere in a middle line", () => {
    const log = LOGS.find((l) => l.name === "multi-turn/session.jsonl") as CorpusLog;
    const bytes = Buffer.from(log.text, "utf8");
    const starts = lineStarts(bytes);
    const [start, end] = [starts[3] as number, starts[4] as number];
    for (let at = start; at < end - 1; at++) {
      const copy = Buffer.from(bytes);
      copy[at] = 0;
      expect(rejectionOfSync(() => parse(copy))).toMatchObject({
        code: "CORRUPT_LOG",
        details: { line: 4, seq: 2 },
      });
    }
  });

  it("treats a repeated line, and JSON that is not an object, as a bad line", () => {
    const log = LOGS.find((l) => l.name === "multi-turn/session.jsonl") as CorpusLog;
    const text = log.text.split("\n");
    for (const bad of [text[2] as string, "[]", "1", "null", '"x"', ""]) {
      const copy = text.slice();
      copy.splice(3, 0, bad);
      expect(rejectionOfSync(() => parse(copy.join("\n")))).toMatchObject({
        code: "CORRUPT_LOG",
        details: { line: 4, seq: 2 },
      });
    }
  });

  it("counts a damaged turn/end after the first bad line as a turn/end, but not a message quoting one", () => {
    const events = [turnStart(0, 1), userMessage(1, "a"), stepStart(2, 1, 1)];
    const lines = events.map((e) => JSON.stringify(e));
    const head = '{"type":"session","version":0,"id":"s","createdAt":0}';
    const damagedEnd = '{"type":"turn/end","seq":4,"time":0,"data":{"tu';
    const corrupt = [head, lines[0], "#", lines[2], damagedEnd, ""].join("\n");
    expect(rejectionOfSync(() => parse(corrupt))).toMatchObject({
      code: "CORRUPT_LOG",
      details: { line: 3, seq: 1 },
    });
    const quoting = JSON.stringify(userMessage(3, '{"type":"turn/end"}'));
    const torn = parse([head, lines[0], "#", lines[2], quoting, ""].join("\n"));
    expect(torn).toMatchObject({ tornTail: true, tornAt: { line: 3 } });
    expect(torn.events).toEqual([events[0]]);
  });

  it("gives the byte offset of a torn tail after multi-byte characters", () => {
    const head = '{"type":"session","version":0,"id":"é😀","createdAt":0}\n';
    const parsed = parse(`${head}{"type":"turn/st`);
    expect(parsed.tornAt).toEqual({ line: 2, byteOffset: Buffer.byteLength(head, "utf8") });
  });

  it("reads non-canonical JSON lines (spacing, escapes) as the values they hold", () => {
    const text =
      '{ "type": "session", "version": 0, "id": "s", "createdAt": 0 }\n' +
      '{"type" : "todo\\/write", "seq": 0, "time": 1, "data": {"todos": []}}\n';
    const parsed = parse(text);
    expect(parsed.header).toEqual({ version: 0, id: "s", createdAt: 0 });
    expect(parsed.events).toEqual([{ type: "todo/write", seq: 0, time: 1, data: { todos: [] } }]);
  });
});

describe("the header line", () => {
  it("is CORRUPT_LOG on line 1 when missing, cut, not JSON, not a session or missing its version", () => {
    const cases = [
      "",
      '{"type":"session","version":0,"id":"s","createdAt":0}',
      "not json\n",
      "[]\n",
      '{"type":"event","version":0,"id":"s","createdAt":0}\n',
      '{"type":"session","id":"s","createdAt":0}\n',
      '{"type":"session","version":0,"id":"s","createdAt":-1}\n',
      '{"type":"session","version":0,"id":"s","createdAt":0,"extra":1}\n',
    ];
    for (const text of cases) {
      expect(rejectionOfSync(() => parse(text))).toMatchObject({
        code: "CORRUPT_LOG",
        details: { location: LOCATION, line: 1 },
      });
    }
  });

  it("refuses another format version as FORMAT_UNSUPPORTED with found, supported, location and the direction", () => {
    const newer = rejectionOfSync(() =>
      parse('{"type":"session","version":1,"id":"s","createdAt":0}\n'),
    ) as Error;
    expect(newer).toMatchObject({
      code: "FORMAT_UNSUPPORTED",
      details: { found: 1, supported: 0, location: LOCATION },
    });
    expect(newer.message).toMatch(/upgrade seedline/);
    const older = rejectionOfSync(() =>
      parse('{"type":"session","version":-1,"id":"s","createdAt":0}\n'),
    ) as Error;
    expect(older).toMatchObject({ code: "FORMAT_UNSUPPORTED", details: { found: -1 } });
    expect(older.message).toMatch(/no upgrade path/);
    expect(
      rejectionOfSync(() => parse('{"type":"session","version":"0","id":"s","createdAt":0}\n')),
    ).toMatchObject({ code: "FORMAT_UNSUPPORTED", details: { found: '"0"', supported: 0 } });
  });

  it("checks the version on the raw header, before the header's other members and before any event line", () => {
    const badLines = "#\n".repeat(500);
    const turnEnd = '{"type":"turn/end","seq":9,"time":0,"data":{"turn":1}}\n';
    // With version 0 this log is corrupt (a bad line before a turn/end) ...
    expect(
      rejectionOfSync(() =>
        parse(`{"type":"session","version":0,"id":"s","createdAt":0}\n${badLines}${turnEnd}`),
      ),
    ).toMatchObject({ code: "CORRUPT_LOG" });
    // ... with version 1 (and an invalid createdAt) it is refused from the header alone.
    const parseSpy = vi.spyOn(JSON, "parse");
    try {
      const error = rejectionOfSync(() =>
        parse(`{"type":"session","version":1,"id":"s","createdAt":"x"}\n${badLines}${turnEnd}`),
      );
      expect(error).toMatchObject({ code: "FORMAT_UNSUPPORTED", details: { found: 1 } });
      expect(parseSpy).toHaveBeenCalledTimes(1);
    } finally {
      parseSpy.mockRestore();
    }
  });

  it("refuses an intact event of a type outside the vocabulary as FORMAT_UNSUPPORTED", () => {
    const text =
      '{"type":"session","version":0,"id":"s","createdAt":0}\n' +
      '{"type":"turn/pause","seq":0,"time":0,"data":{}}\n';
    expect(rejectionOfSync(() => parse(text))).toMatchObject({
      code: "FORMAT_UNSUPPORTED",
      details: { found: "turn/pause", supported: 0, location: LOCATION },
    });
  });
});

describe("streaming a log file", () => {
  it("reads corpus logs exactly as the text reader does, at chunk sizes from 1 byte to 1 MiB", async () => {
    const sizes = [1, 2, 3, 7, 64, 4096, 1 << 20];
    const logs = ["handshake/session.jsonl", "cancel/session.jsonl", "multi-turn/session.jsonl"];
    for (const name of logs) {
      const log = LOGS.find((l) => l.name === name) as CorpusLog;
      const bytes = Buffer.from(log.text, "utf8");
      for (const chunkBytes of sizes) {
        const { scan, events } = await scanBytes(bytes, chunkBytes);
        expect(events).toEqual(log.events);
        expect(scan).toMatchObject({ tornTail: false, intactEnd: bytes.length, end: bytes.length });
      }
    }
  });

  it("agrees with the text reader at every cut of a last line and every damaged last-three line", async () => {
    const { bytes, keptLines } = openTurnLog(
      LOGS.find((l) => l.name === "multi-turn/session.jsonl") as CorpusLog,
    );
    const starts = lineStarts(bytes);
    const variants: Buffer[] = [];
    for (let cut = starts[keptLines + 2] as number; cut <= bytes.length; cut++) {
      variants.push(bytes.subarray(0, cut));
    }
    for (let line = keptLines; line < keptLines + 3; line++) {
      const copy = Buffer.from(bytes);
      copy[(starts[line] as number) + 5] = 0;
      variants.push(copy);
    }
    for (const variant of variants) {
      const expected = parse(variant);
      for (const chunkBytes of [61, 1 << 20]) {
        const { scan, events } = await scanBytes(variant, chunkBytes);
        expect(events).toEqual(expected.events);
        expect(scan.tornTail).toBe(expected.tornTail);
        expect(scan.tornAt).toEqual(expected.tornAt);
        expect(scan.intactEnd).toBe(expected.tornAt?.byteOffset ?? variant.length);
      }
    }
    expect(variants.length).toBeGreaterThan(50);
  });

  it("decodes multi-byte characters split across chunk boundaries", async () => {
    const text =
      '{"type":"session","version":0,"id":"é😀","createdAt":0}\n' +
      `${JSON.stringify(userMessage(0, "ünïcödé 😀😀 ✓"))}\n`;
    for (let chunkBytes = 1; chunkBytes <= 17; chunkBytes++) {
      const { scan, events } = await scanBytes(Buffer.from(text, "utf8"), chunkBytes);
      expect(scan.header.id).toBe("é😀");
      expect(events).toEqual(parse(text).events);
    }
  });
});

function rejectionOfSync(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw, but it returned");
}
