// R2 (docs/performance.md): a log cut or damaged near its end loads as its intact prefix; CORRUPT_LOG only for damage at or before the last turn/end.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import {
  interruptedTurnClosers,
  JsonlBackend,
  type SessionEvent,
  SessionStore,
  SqliteBackend,
  StorageError,
} from "../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import {
  balancedLog,
  contextMessage,
  testHeader,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";

const root = mkdtempSync(join(tmpdir(), "seedline-r2-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ID = "r2";
const HEADER = { ...testHeader(ID), cwd: "/r2" };
/** Text with multi-byte UTF-8, so that cuts also land inside a character. */
const WIDE = "naïve café — ✓ 日本";

/** Three logs whose last three events differ in where the last turn/end stands. */
function fixtures(): { name: string; events: SessionEvent[] }[] {
  const base = () => balancedLog(3, { steps: 2, chunksPerStep: 2, toolCallsPerStep: 1 });
  const openAfter = base();
  const n = openAfter.length;
  openAfter.push(turnStart(n, 4), userMessage(n + 1, `prompt ${WIDE}`));
  const standaloneAfter = balancedLog(2, { steps: 1, chunksPerStep: 1 });
  const m = standaloneAfter.length;
  standaloneAfter.push(
    turnStart(m, 3),
    userMessage(m + 1, WIDE),
    turnEnd(m + 2, 3),
    contextMessage(m + 3, `notes ${WIDE}`),
  );
  return [
    { name: "ending tool/result, step/end, turn/end", events: base() },
    { name: "ending turn/end, turn/start, user/message", events: openAfter },
    { name: "ending user/message, turn/end, context/message", events: standaloneAfter },
  ];
}

/** The seq of the last turn/end of `events`, or -1. */
function lastTurnEnd(events: readonly SessionEvent[]): number {
  let at = -1;
  for (const event of events) if (event.type === "turn/end") at = event.seq;
  return at;
}

/**
 * Opens `id` for writing through a fresh store, as the next writer would (readers never repair);
 * the events, or the StorageError code it threw.
 */
async function load(open: () => Promise<SessionStore>): Promise<SessionEvent[] | string> {
  const store = await open();
  try {
    return [...(await (await store.openForWriting(ID)).readEvents())];
  } catch (error) {
    if (error instanceof StorageError) return error.code;
    throw error;
  } finally {
    await store.close();
  }
}

/** What loading a log whose intact prefix is `prefix` must give: the prefix, then the closers repair adds. */
function expectPrefix(
  loaded: SessionEvent[] | string,
  prefix: readonly SessionEvent[],
  what: string,
) {
  expect(typeof loaded, `${what}: ${String(loaded)}`).toBe("object");
  const events = loaded as SessionEvent[];
  expect(events.slice(0, prefix.length), what).toEqual(prefix);
  expect(events.slice(prefix.length), what).toEqual(interruptedTurnClosers(prefix));
}

describe("R2 torn tails", () => {
  it("loads a JSONL log cut at every byte offset inside its last 3 lines as the intact prefix, never CORRUPT_LOG", async () => {
    let offsets = 0;
    let repaired = 0;
    let clean = 0;
    for (const [f, { name, events }] of fixtures().entries()) {
      const lines = [formatHeaderLine(HEADER), ...events.map(formatEventLine)];
      const bytes = Buffer.from(lines.join(""), "utf8");
      const starts: number[] = [];
      let at = 0;
      for (const line of lines) {
        starts.push(at);
        at += Buffer.byteLength(line);
      }
      const firstCut = starts[lines.length - 3] as number;
      for (let cut = firstCut; cut < bytes.length; cut++) {
        const dir = join(root, `jsonl-cut-${f}-${cut}`);
        mkdirSync(join(dir, "sessions"), { recursive: true });
        writeFileSync(join(dir, "sessions", logFileName(ID)), bytes.subarray(0, cut));
        // Complete lines kept, the header included.
        const complete = starts.filter((_, i) => (starts[i + 1] ?? bytes.length) <= cut).length;
        const prefix = events.slice(0, complete - 1);
        const loaded = await load(
          async () =>
            new SessionStore({ backend: new JsonlBackend(dir, { durability: "process" }) }),
        );
        expectPrefix(loaded, prefix, `${name}, cut at byte ${cut}`);
        if (starts.includes(cut)) clean++;
        if ((loaded as SessionEvent[]).length > prefix.length) repaired++;
        offsets++;
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.log(
      `R2 jsonl cuts: ${offsets} byte offsets tried in the last 3 lines of 3 logs; every one loaded as its intact prefix (${clean} at a line boundary, ${repaired} closed by repair), 0 CORRUPT_LOG`,
    );
    expect(offsets).toBeGreaterThan(300);
  });

  it("reports a garbled JSONL line as CORRUPT_LOG only when it is at or before the last turn/end", async () => {
    const outcomes: string[] = [];
    for (const [f, { name, events }] of fixtures().entries()) {
      const end = lastTurnEnd(events);
      for (let seq = events.length - 3; seq < events.length; seq++) {
        const dir = join(root, `jsonl-garble-${f}-${seq}`);
        mkdirSync(join(dir, "sessions"), { recursive: true });
        const lines = [formatHeaderLine(HEADER), ...events.map(formatEventLine)];
        // The line keeps its text (its type still shows) but no longer parses.
        lines[seq + 1] = `${(lines[seq + 1] as string).slice(0, -2)}#\n`;
        writeFileSync(join(dir, "sessions", logFileName(ID)), lines.join(""));
        const loaded = await load(
          async () =>
            new SessionStore({ backend: new JsonlBackend(dir, { durability: "process" }) }),
        );
        const what = `${name}: seq ${seq} garbled (last turn/end at ${end})`;
        if (seq <= end) expect(loaded, what).toBe("CORRUPT_LOG");
        else expectPrefix(loaded, events.slice(0, seq), what);
        outcomes.push(seq <= end ? "corrupt" : "prefix");
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.log(
      `R2 jsonl garbled lines: ${outcomes.length} cases, ${outcomes.filter((o) => o === "corrupt").length} CORRUPT_LOG (damage at or before the last turn/end), ${outcomes.filter((o) => o === "prefix").length} loaded as the intact prefix`,
    );
  });

  it("loads SQLite logs with trailing rows deleted or garbled as the intact prefix; CORRUPT_LOG only at or before the last turn/end", async () => {
    const counts = { trailing: 0, holes: 0, garbled: 0, corrupt: 0, prefix: 0 };
    for (const [f, { name, events }] of fixtures().entries()) {
      const template = join(root, `template-${f}.db`);
      const store = new SessionStore({
        backend: await SqliteBackend.open(template, { durability: "process" }),
      });
      await store.create({
        id: ID,
        seed: events,
        meta: { cwd: HEADER.cwd, createdAt: HEADER.createdAt },
      });
      await store.close();
      const n = events.length;
      const cases: { what: string; sql: string; params: unknown[]; damagedAt: number }[] = [];
      for (let t = 1; t <= 3; t++) {
        cases.push({
          what: `the last ${t} row(s) deleted`,
          sql: "DELETE FROM events WHERE session_id = ? AND seq >= ?",
          params: [ID, n - t],
          damagedAt: n - t,
        });
      }
      for (let seq = n - 3; seq < n; seq++) {
        cases.push({
          what: `row ${seq} deleted (a hole)`,
          sql: "DELETE FROM events WHERE session_id = ? AND seq = ?",
          params: [ID, seq],
          damagedAt: seq,
        });
        cases.push({
          what: `row ${seq} garbled`,
          sql: "UPDATE events SET data = '#' || substr(data, 2) WHERE session_id = ? AND seq = ?",
          params: [ID, seq],
          damagedAt: seq,
        });
      }
      for (const [c, { what, sql, params, damagedAt }] of cases.entries()) {
        const path = join(root, `case-${f}-${c}.db`);
        copyFileSync(template, path);
        const db = new Database(path);
        db.prepare(sql).run(...params);
        // What is left decides: a turn/end row at or after the damage makes it corruption.
        const remainingEnd = (
          db
            .prepare(
              "SELECT coalesce(max(seq), -1) AS seq FROM events WHERE session_id = ? AND type = 'turn/end'",
            )
            .get(ID) as { seq: number }
        ).seq;
        db.close();
        const loaded = await load(
          async () =>
            new SessionStore({
              backend: await SqliteBackend.open(path, { durability: "process" }),
            }),
        );
        const label = `${name}: ${what} (last remaining turn/end at ${remainingEnd})`;
        if (remainingEnd >= damagedAt) {
          expect(loaded, label).toBe("CORRUPT_LOG");
          counts.corrupt++;
        } else {
          expectPrefix(loaded, events.slice(0, damagedAt), label);
          counts.prefix++;
        }
        if (what.includes("garbled")) counts.garbled++;
        else if (what.includes("hole")) counts.holes++;
        else counts.trailing++;
        rmSync(path, { force: true });
        rmSync(`${path}.locks`, { recursive: true, force: true });
      }
    }
    console.log(
      `R2 sqlite rows: ${counts.trailing + counts.holes + counts.garbled} damaged copies (${counts.trailing} trailing deletes, ${counts.holes} holes, ${counts.garbled} garbled rows in the last 3), ${counts.prefix} loaded as the intact prefix, ${counts.corrupt} CORRUPT_LOG (damage at or before the last turn/end)`,
    );
  });
});
