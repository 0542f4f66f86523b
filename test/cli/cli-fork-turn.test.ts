// The built `seedline` binary: `fork --at-turn`, and what OPEN_TURN and a wrong turn tell on the command line.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIN } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";
const ENV = { NO_COLOR: "1" };

let temp: string;
let store: string;
beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-fork-turn-"));
  store = `sqlite:${join(temp, "s.db")}`;
  const run = await cli(["import", join(CORPUS, "subagent-fork"), "--store", store], { env: ENV });
  expect(run.status).toBe(0);
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

describe("seedline fork --at-turn", () => {
  it("forks after the end of the turn: its turn/end is the last inherited event", async () => {
    // Turn 1 of the parent ends at seq 37, turn 2 at seq 188.
    const run = await cli(
      ["fork", PARENT, "--at-turn", "1", "--child-id", "t1", "--json", "--store", store],
      { env: ENV },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      sessionId: "t1",
      header: { id: "t1", parentSession: PARENT, seedLength: 38 },
    });
    const text = await cli(["fork", PARENT, "--at-turn", "2", "--store", store], { env: ENV });
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^forked .* at seq 188 into \S+ \(189 inherited events\)$/m);
  });

  it("refuses --at together with --at-turn as a usage error", async () => {
    const run = await cli(["fork", PARENT, "--at", "37", "--at-turn", "1", "--store", store], {
      env: ENV,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^usage: seedline fork /m);
  });

  it("refuses a turn that does not exist, naming the closed turns", async () => {
    const run = await cli(["fork", PARENT, "--at-turn", "3", "--store", store], { env: ENV });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^seedline fork: INVALID_BOUNDARY: .*\b1 to 2\b/);
    expect((await cli(["fork", PARENT, "--at-turn", "x", "--store", store])).status).toBe(2);
  });

  it("refuses a turn that has not ended", async () => {
    // The parent cut before its last step/end and turn/end: turn 2 is open at the end of the log.
    const lines = readFileSync(join(CORPUS, "subagent-fork", "session.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const file = join(temp, "open.jsonl");
    writeFileSync(file, `${lines.slice(0, -2).join("\n")}\n`);
    const openStore = `jsonl:${join(temp, "open")}`;
    expect((await cli(["import", file, "--store", openStore], { env: ENV })).status).toBe(0);
    const run = await cli(["fork", PARENT, "--at-turn", "2", "--store", openStore], { env: ENV });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^seedline fork: INVALID_BOUNDARY: .*closed turn is 1\b.*still open/,
    );
  });
});

describe("OPEN_TURN on the command line", () => {
  it("names the nearest valid boundaries around a seq inside a turn", async () => {
    const run = await cli(["fork", PARENT, "--at", "60", "--store", store], { env: ENV });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^seedline fork: OPEN_TURN: /);
    // Turn 2 runs from seq 38 to its turn/end at 188.
    expect(run.stderr).toMatch(/\bseq 37\b.*\bseq 188\b.*\bgot 60\b/);
  });
});
