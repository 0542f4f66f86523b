// `seedline show` on a long session beside the imported corpus: the default bound, --tail, --turn, --all, --full, --json, text cut by width, paging on a terminal.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/index.js";
import { displayWidth } from "../../src/util/text-width.js";
import { balancedLog, simpleTurn } from "../helpers/builders.js";
import { hasScript, MAIN, seedline, seedlineInTerminal } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
/** The corpus fork child: turn 1 inherited (seqs 0–37), turn 2 its own (38–87). */
const CHILD = "906f1eac-a457-4eb9-828b-1ba537552524";
const LONG = "long-session";
/** 94 columns, then an emoji: cut at 96 columns by code units, half of the emoji was printed. */
const EMOJI = `${"a".repeat(94)}😀 and more`;
/** Two columns a character: 96 characters are 192 columns. */
const CJK = "日本語のテキスト".repeat(30);
const MULTILINE = `first line\nsecond line ${"x".repeat(150)}`;
const NO_COLOR = { NO_COLOR: "1" };
const TERMINAL = hasScript();

let temp: string;
let store: string;

/**
 * 60 turns of 7 rows each (turn, user, step, assistant, call, result, end) and 28 events (20
 * chunks), then three more of 8 events: 1,704 events, more than one page of the store's reads.
 */
function longLog(): string {
  const events: SessionEvent[] = balancedLog(60, { toolCallsPerStep: 1, chunksPerStep: 20 });
  for (const [turn, prompt] of [
    [61, EMOJI],
    [62, CJK],
    [63, MULTILINE],
  ] as const) {
    events.push(...simpleTurn(events.length, turn, { prompt, chunksPerStep: 2 }));
  }
  const header = { type: "session", version: 0, id: LONG, createdAt: 1_700_000_000_000 };
  return `${[header, ...events].map((line) => JSON.stringify(line)).join("\n")}\n`;
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-view-"));
  store = `sqlite:${join(temp, "sessions.db")}`;
  const corpus = await cli(["import", CORPUS, "--skip-existing", "--store", store]);
  expect(corpus.status, corpus.stderr).toBe(0);
  const path = join(temp, "long.jsonl");
  writeFileSync(path, longLog());
  expect((await cli(["import", path, "--store", store])).status).toBe(0);
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

/**
 * `seedline show ARGS` in this process (its output into a pipe, as a spawned one's): the tests on
 * a terminal spawn the built CLI.
 */
function show(args: readonly string[]) {
  return cli(["show", ...args, "--store", store], { env: NO_COLOR });
}

/** The timeline rows of the output: lines that start with a seq. */
function rows(stdout: string): string[] {
  return stdout.split("\n").filter((line) => /^ *\d+ {2}/.test(line));
}

describe("seedline show", () => {
  // Before: a 204k-event session printed 10,004 lines.
  it("shows the last 200 rows by default, with a line saying how many were left out", async () => {
    const run = await show([LONG]);
    expect(run.status).toBe(0);
    const shown = rows(run.stdout);
    expect(shown).toHaveLength(200);
    expect(shown.at(-1)).toMatch(/turn 63 end · completed$/);
    // 60 turns of 7 rows and 3 of 5 (no tool call; the step's end is no row): 435 rows.
    expect(run.stdout).toContain(
      "… 235 earlier rows not shown (--tail N shows more, --all shows every row)",
    );
  });

  it("shows the last N rows with --tail and every row with --all", async () => {
    const tail = rows((await show([LONG, "--tail", "3"])).stdout);
    expect(tail).toHaveLength(3);
    expect(tail[2]).toMatch(/turn 63 end/);
    const all = await show([LONG, "--all"]);
    expect(rows(all.stdout)).toHaveLength(435);
    expect(all.stdout).not.toContain("not shown");
    expect(rows(all.stdout)[0]).toMatch(/^ +0 {2}turn 1 · message from user$/);
  });

  it("shows one turn with --turn, from its start to its end", async () => {
    const run = await show([LONG, "--turn", "7"]);
    expect(run.status).toBe(0);
    const shown = rows(run.stdout);
    expect(shown).toHaveLength(7);
    expect(shown[0]).toMatch(/turn 7 · message from user$/);
    expect(shown[1]).toMatch(/user: prompt of turn 7$/);
    expect(shown.at(-1)).toMatch(/turn 7 end · completed$/);
    expect(run.stdout).not.toMatch(/turn [68] /);
    const child = rows((await show([CHILD, "--turn", "2"])).stdout);
    expect(child[0]).toMatch(/^38 {2}turn 2 · message from user$/);
    expect(child.at(-1)).toMatch(/^87 {2}turn 2 end · completed$/);
  });

  it("refuses a turn the session does not have (TURN_NOT_FOUND) and bad counts (usage)", async () => {
    const missing = await show([LONG, "--turn", "64"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^seedline show: TURN_NOT_FOUND: /);
    for (const args of [
      ["--tail", "0"],
      ["--tail", "x"],
      ["--turn", "-1"],
      ["--tail", "3", "--all"],
    ]) {
      const run = await show([LONG, ...args]);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/^usage: seedline show /m);
    }
  });

  // Before: text was cut by UTF-16 code units at 95, so the emoji was cut in half ("aaaa\uFFFD…")
  // and 95 CJK characters made a 190-column excerpt.
  it("cuts text between characters and by display width: no half emoji, CJK counted as two columns", async () => {
    const run = await show([LONG, "--tail", "21"]);
    expect(run.stdout).not.toContain("\uFFFD");
    expect(run.stdout).toContain(`user: ${"a".repeat(94)}…\n`);
    const cjk = /user: (日本語.*)$/m.exec(run.stdout)?.[1] ?? "";
    expect(cjk.endsWith("…")).toBe(true);
    expect(displayWidth(cjk)).toBeLessThanOrEqual(96);
    expect(displayWidth(cjk)).toBeGreaterThanOrEqual(95);
  });

  it("shows text whole with --full, its line breaks kept and indented under the row's start", async () => {
    const run = await show([LONG, "--turn", "63", "--full"]);
    const lines = run.stdout.split("\n");
    const first = lines.findIndex((line) => line.endsWith("user: first line"));
    expect(first).toBeGreaterThan(0);
    // Continuation lines hang two columns deeper than the row they belong to.
    const indent = (lines[first] ?? "").indexOf("user:") + 2;
    expect(lines[first + 1]).toBe(`${" ".repeat(indent)}second line ${"x".repeat(150)}`);
    expect((await show([LONG, "--turn", "61", "--full"])).stdout).toContain(`user: ${EMOJI}\n`);
  });

  // Before: --json carried the same 96-character excerpts as the text.
  it("prints every row with its text whole in --json, and what --tail leaves out as skippedRows", async () => {
    const run = await show([LONG, "--json"]);
    expect(run.status).toBe(0);
    const timeline = JSON.parse(run.stdout) as {
      eventCount: number;
      skippedRows?: number;
      rows: { kind: string; text?: string; chunks?: number }[];
    };
    expect(timeline.skippedRows).toBeUndefined();
    const texts = timeline.rows.map((row) => row.text);
    expect(texts).toEqual(expect.arrayContaining([EMOJI, CJK, MULTILINE]));
    // Chunks counted across pages (1,000 events a page): a step's row waits for its last chunk.
    const steps = timeline.rows.filter((r) => r.kind === "step").map((r) => r.chunks);
    expect(steps).toEqual([...Array.from({ length: 60 }, () => 20), 2, 2, 2]);
    expect(timeline.eventCount).toBe(60 * 28 + 3 * 8);
    const tail = JSON.parse(
      (await show([LONG, "--json", "--tail", "2"])).stdout,
    ) as typeof timeline;
    expect(tail.rows.map((r) => r.kind)).toEqual(["step-end", "turn-end"]);
    expect(tail.skippedRows).toBe(timeline.rows.length - 2);
  });

  describe.skipIf(!TERMINAL)("on a terminal (script(1) gives it a pseudo-terminal)", () => {
    /** A pager that notes it was called, then shows its input (as `cat` does). */
    function fakePager(): { pager: string; mark: string; calls: () => string } {
      const mark = join(temp, "pager-calls.log");
      const script = join(temp, "fake-pager.sh");
      writeFileSync(script, `#!/bin/sh\necho "paged $*" >> "$PAGER_MARK"\ncat\n`);
      return {
        pager: `sh ${script} --from-test`,
        mark,
        calls: () => (existsSync(mark) ? readFileSync(mark, "utf8") : ""),
      };
    }

    it("pages through $PAGER, and not with --no-pager or in a pipe", () => {
      const { pager, calls, mark } = fakePager();
      const env = { ...NO_COLOR, PAGER: pager, PAGER_MARK: mark };
      const paged = seedlineInTerminal(["show", LONG, "--tail", "4", "--store", store], { env });
      expect(paged.status).toBe(0);
      expect(calls()).toBe("paged --from-test\n");
      expect(rows(paged.stdout)).toHaveLength(4);

      const direct = seedlineInTerminal(["show", LONG, "--no-pager", "--store", store], { env });
      expect(rows(direct.stdout)).toHaveLength(200);
      const piped = seedline(["show", LONG, "--store", store], { env });
      expect(rows(piped.stdout)).toHaveLength(200);
      expect(calls()).toBe("paged --from-test\n");
    });

    it("cuts each line to the terminal's width ($COLUMNS), between characters", () => {
      const env = { ...NO_COLOR, PAGER: "cat", COLUMNS: "50" };
      const run = seedlineInTerminal(["show", LONG, "--tail", "21", "--store", store], { env });
      expect(run.status).toBe(0);
      const lines = run.stdout.split("\n").filter((line) => line !== "");
      expect(lines.length).toBeGreaterThan(20);
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(50);
      expect(run.stdout).toMatch(/user: aaaa+…$/m);
      expect(run.stdout).not.toContain("\uFFFD");
      // Not cut in a pipe: the excerpt keeps its 96 columns.
      const piped = seedline(["show", LONG, "--tail", "21", "--store", store], {
        env: NO_COLOR,
      }).stdout;
      expect(piped).toContain(`user: ${"a".repeat(94)}…`);
    });
  });
});
