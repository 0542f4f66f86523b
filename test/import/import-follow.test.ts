// `seedline import --from claude-code --follow` against a transcript another process writes line by line: a watch of the store sees each new event once, in order, as the lines land.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { mapClaudeCodeTranscript } from "../../src/import/claude-code.js";
import { SessionStore } from "../../src/index.js";
import { openBackend } from "../../src/store/open/open-backend.js";
import { type BackgroundRun, startSeedline } from "../helpers/cli-harness.js";
import {
  CLAUDE_CODE_FIXTURES,
  HAVE_CLAUDE_CODE_FIXTURES,
} from "../helpers/import-claude-code-harness.js";
import { WAIT_MS, within } from "../helpers/waits.js";

/** Polls an asynchronous `predicate` until it holds; fails naming `what` after {@link WAIT_MS}. */
async function until(predicate: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`expected ${what} within ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const SKIP = `(skipped: ${CLAUDE_CODE_FIXTURES} is absent)`;
if (!HAVE_CLAUDE_CODE_FIXTURES) console.log(`import-follow: real transcripts ${SKIP}`);

const SOURCE = join(CLAUDE_CODE_FIXTURES, "kfischer", "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");
const SESSION = "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260";

/**
 * A process of its own that writes `source` into `target` a line at a time, every `ms`, the tenth
 * line in two writes (a line the tool is still writing when the follower reads it).
 */
function writeLineByLine(source: string, target: string, ms: number) {
  const script = `
    const fs = require("node:fs");
    const lines = fs.readFileSync(${JSON.stringify(source)}, "utf8").split(/(?<=\\n)/);
    const target = ${JSON.stringify(target)};
    const wait = (ms) => new Promise((r) => setTimeout(r, ms));
    (async () => {
      for (const [i, line] of lines.entries()) {
        if (i === 9) {
          fs.appendFileSync(target, line.slice(0, 40));
          await wait(${ms * 4});
          fs.appendFileSync(target, line.slice(40));
        } else {
          fs.appendFileSync(target, line);
        }
        await wait(${ms});
      }
    })();
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
  return new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
}

let temp: string;
let follower: BackgroundRun | undefined;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "seedline-follow-"));
});
afterAll(() => {
  follower?.child.kill("SIGKILL");
  rmSync(temp, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CLAUDE_CODE_FIXTURES)(
  `seedline import --follow ${HAVE_CLAUDE_CODE_FIXTURES ? "" : SKIP}`,
  () => {
    it("appends what another process writes, as it writes it, and stops cleanly on a signal", async () => {
      const folder = join(temp, "projects", "-Users-user-project");
      mkdirSync(folder, { recursive: true });
      // The session has just started: its file is there, still empty.
      const target = join(folder, "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");
      writeFileSync(target, "");
      const url = `sqlite:${join(temp, "follow.db")}`;
      const args = ["import", "--from", "claude-code", "--follow", folder, "--store", url];
      const run = startSeedline(args, { env: { NO_COLOR: "1" } });
      follower = run;
      await run.waitFor("that it follows the folder", (out) =>
        out.includes("following 1 transcript"),
      );
      const written = writeLineByLine(SOURCE, target, 50);
      const store = new SessionStore({ backend: await openBackend(url) });
      try {
        await until(
          async () => (await store.get(SESSION)) !== undefined,
          "the session to be stored",
        );
        const watch = store.watch(SESSION, { fromSeq: 0 });
        const expected = mapClaudeCodeTranscript(readFileSync(SOURCE, "utf8")).sessions;
        const main = expected[0]?.events ?? [];
        const seen: SessionEvent[] = [];
        let batches = 0;
        await within(
          (async () => {
            for await (const batch of watch) {
              batches++;
              seen.push(...batch.events);
              if (seen.length >= main.length) break;
            }
          })(),
          "every event of the main line to be watched",
          60_000,
        );
        expect(await written).toBe(0);
        // Each event once, in order: what the whole file maps to, appended as the lines came.
        expect(seen).toEqual(main);
        expect(batches).toBeGreaterThan(5);
        // The forks of the later branches appear too, once their lines are written.
        await until(
          async () =>
            (await store.get(`${SESSION}.branch-3`))?.nextSeq === expected[2]?.events.length,
          "the last branch to be stored whole",
        );
        expect(await store.readEvents(`${SESSION}.branch-2`)).toEqual(expected[1]?.events);
        expect(await store.title(`${SESSION}.branch-3`)).toBe(
          "Test file creation and agent thread handling",
        );
        // A transcript that appears in the folder (a subagent's) is imported too.
        const agent = join(CLAUDE_CODE_FIXTURES, "kfischer", "agent-a434715.jsonl");
        copyFileSync(agent, join(folder, "agent-a434715.jsonl"));
        await until(
          async () => (await store.get(`${SESSION}.agent-a434715`))?.nextSeq === 17,
          "the subagent's transcript to be imported",
        );
      } finally {
        await store.close();
      }
      expect(run.stdout()).toMatch(/: appended \d+ events? → claude-code-b3edadab/);
      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
      follower = undefined;
    });
  },
);
