// `seedline search` end to end: the built CLI over a store with the corpus imported, plain (NO_COLOR), as JSON, and under a pseudo-terminal.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionSearchResult } from "../../src/index.js";
import { MAIN, ROOT, seedline } from "../helpers/cli-harness.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

let temp: string;
const stores: Record<string, string> = {};
beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-search-"));
  for (const kind of ["sqlite", "jsonl"]) {
    const url = kind === "sqlite" ? `sqlite:${join(temp, "s.db")}` : `jsonl:${join(temp, "j")}`;
    const run = seedline(["import", CORPUS_DIR, "--store", url]);
    // A few corpus logs share an id with another: the import reports them and stores the rest.
    expect(run.stderr).toContain("imported");
    stores[kind] = url;
  }
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

const NO_COLOR = { env: { NO_COLOR: "1" } };
/** The corpus session whose first prompt asks for the single word FIRST. */
const FIRST_PROMPT = "Reply with the single word FIRST and stop.";

describe("seedline search", () => {
  for (const kind of ["sqlite", "jsonl"]) {
    it(`prints each matching session with its title and excerpts, plain under NO_COLOR (${kind})`, () => {
      const run = seedline(
        ["search", '"single word"', "first", "--store", stores[kind] as string],
        NO_COLOR,
      );
      expect(run.status).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout).not.toContain("\u001b[");
      const lines = run.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(new RegExp(`^\\S+  ${FIRST_PROMPT}$`));
      expect(lines[1]).toMatch(/^ {2}#1 {2}Reply with the single word FIRST/);
      expect(lines.at(-1)).toMatch(/^\d+ sessions?/);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    });
  }

  it("prints the session/search result with --json, uncut, the same on every store", () => {
    const results = Object.values(stores).map((url) => {
      const run = seedline(["search", "FIRST", "--limit", "3", "--json", "--store", url]);
      expect(run.status).toBe(0);
      return JSON.parse(run.stdout) as SessionSearchResult;
    });
    const [sqlite, jsonl] = results;
    expect(sqlite?.results).toHaveLength(3);
    expect(sqlite?.nextCursor).toEqual(expect.any(String));
    expect(jsonl).toEqual(sqlite);
    for (const { excerpts } of sqlite?.results ?? []) {
      for (const { text, highlight } of excerpts) {
        for (const { start, end } of highlight)
          expect(text.slice(start, end).toLowerCase()).toBe("first");
      }
    }
  });

  it("says so when nothing matches, and refuses a bad --limit (exit 2)", () => {
    const none = seedline(["search", "zzqx-nowhere", "--store", stores.sqlite as string], NO_COLOR);
    expect(none.status).toBe(0);
    expect(none.stdout).toMatch(/^no sessions in .* match "zzqx-nowhere"\n$/);
    const bad = seedline(["search", "x", "--limit", "0", "--store", stores.sqlite as string]);
    expect(bad.status).toBe(2);
  });

  it("highlights the matches on a terminal and cuts lines to its width", () => {
    const command = `COLUMNS=60 stty cols 60 2>/dev/null; ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} search '"single word"' --limit 1 --store ${JSON.stringify(stores.sqlite)}`;
    const env: Record<string, string | undefined> = { ...process.env };
    delete env.NO_COLOR;
    delete env.FORCE_COLOR;
    const run = spawnSync("script", ["-qec", command, "/dev/null"], {
      cwd: ROOT,
      env,
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    // Bold on, yellow, the match, yellow off, bold off.
    expect(run.stdout).toContain("\u001b[1m\u001b[33msingle word\u001b[39m\u001b[22m");
    const plain = stripVTControlCharacters(run.stdout).replace(/\r/g, "");
    for (const line of plain.trimEnd().split("\n"))
      expect([...line].length).toBeLessThanOrEqual(60);
  });
});
