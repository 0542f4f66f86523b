// `seedline validate --replayable`: a log validate accepts but replay refuses is reported, by file and line, with exit 1.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const temp = mkdtempSync(join(tmpdir(), "seedline-replayable-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

type Event = {
  seq: number;
  type: string;
  data: { chunk?: { type: string } };
  sourceEventSeqs?: number[];
  surfaceOp?: "append" | { start: number; end: number };
};

/**
 * The corpus log fs-read without the `finish` chunk of its first step (turn 1, step 1): the
 * events after it renumbered and the seqs they name moved down, so the log stays valid while
 * the step no longer ends with a finish chunk.
 */
function withoutFirstFinish(): string {
  const [header, ...lines] = readFileSync(join(CORPUS, "fs-read", "session.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "");
  const events = lines.map((line) => JSON.parse(line) as Event);
  const cut = events.findIndex((e) => e.data.chunk?.type === "finish");
  expect(cut).toBeGreaterThan(0);
  const moved = (seq: number) => (seq > cut ? seq - 1 : seq);
  const kept = events
    .filter((_, i) => i !== cut)
    .map((e) => ({
      ...e,
      seq: moved(e.seq),
      ...(e.sourceEventSeqs === undefined
        ? {}
        : { sourceEventSeqs: e.sourceEventSeqs.filter((s) => s !== cut).map(moved) }),
      ...(e.surfaceOp === undefined || e.surfaceOp === "append"
        ? {}
        : { surfaceOp: { start: moved(e.surfaceOp.start), end: moved(e.surfaceOp.end) } }),
    }));
  const path = join(temp, "no-finish.jsonl");
  writeFileSync(path, `${[header, ...kept.map((e) => JSON.stringify(e))].join("\n")}\n`);
  return path;
}

describe("seedline validate --replayable", () => {
  const file = withoutFirstFinish();

  it("reports a step with no finish chunk that plain validate accepts and replay refuses", async () => {
    // The fixture is valid as a log, and replay refuses it: what --replayable must report.
    expect((await cli(["validate", file])).status).toBe(0);
    const replay = await cli(["replay", file]);
    expect(replay.status).toBe(1);
    expect(replay.stderr).toContain("expected step 1 of turn 1");

    // Seen failing before the option existed: exit 2 (an unknown option), nothing checked.
    const run = await cli(["validate", "--replayable", file]);
    expect(run.status).toBe(1);
    // Step 1 starts at seq 2: line 4 (the header is line 1).
    expect(run.stdout).toMatch(
      new RegExp(
        `^${file}:4: REPLAY_INCOMPLETE: expected step 1 of turn 1 .*\\n1 problem in 1 of 1 log\\n$`,
      ),
    );
  });

  it("gives the problem with --json", async () => {
    const run = await cli(["validate", "--replayable", "--json", file]);
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      ok: false,
      files: 1,
      events: expect.any(Number),
      problems: [
        {
          file,
          line: 4,
          seq: 2,
          rule: "REPLAY_INCOMPLETE",
          message: expect.stringMatching(/^expected step 1 of turn 1 .* with a finish chunk/),
        },
      ],
    });
  });

  it("passes every log of the recorded corpus", async () => {
    const run = await cli(["validate", "--replayable", CORPUS]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^ok: 39 logs, \d+ events, no problems\n$/);
    expect(run.status).toBe(0);
  });
});
