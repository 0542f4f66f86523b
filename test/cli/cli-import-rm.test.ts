// `seedline import` (taken ids skipped or renamed, stdin, errors by file and line, a progress bar on a terminal) and `seedline rm`, on the recorded corpus.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasScript, MAIN, seedlineInTerminal } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
/** Four corpus logs share ids with others ("{{sessionId}}" three times, a zero UUID). */
const CORPUS_LOGS = 39;
const TAKEN = 4;
const TEXT_TURN = join(CORPUS, "text-turn", "session.jsonl");
const TEXT_TURN_ID = "3a428d17-2f0d-4ecd-bac6-453c4d006bb4";
const NO_COLOR = { env: { NO_COLOR: "1" } };

let temp: string;
let count = 0;
beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-import-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

/** A new empty store's URL. */
function freshStore(): string {
  count += 1;
  return `sqlite:${join(temp, `store-${count}.db`)}`;
}

async function idsOf(store: string): Promise<string[]> {
  const listed = JSON.parse((await cli(["ls", "--json", "--store", store])).stdout) as {
    sessions: { sessionId: string; children?: { sessionId: string }[] }[];
  };
  const ids: string[] = [];
  type Listed = { sessionId: string; children?: Listed[] };
  const walk = (s: Listed) => {
    ids.push(s.sessionId);
    for (const child of s.children ?? []) walk(child);
  };
  for (const session of listed.sessions) walk(session);
  return ids.sort();
}

describe("seedline import", () => {
  // Before: four corpus logs were refused (SESSION_ALREADY_EXISTS) with no way round it.
  it("passes over logs whose id is taken with --skip-existing, naming each, and exits 0", async () => {
    const store = freshStore();
    const plain = await cli(["import", CORPUS, "--store", store], NO_COLOR);
    expect(plain.status).toBe(1);
    expect(plain.stderr.match(/: SESSION_ALREADY_EXISTS: /g)).toHaveLength(TAKEN);

    const again = await cli(["import", CORPUS, "--skip-existing", "--store", store], NO_COLOR);
    expect(again.status).toBe(0);
    expect(again.stderr.match(/^skipped .*\.jsonl: ".*" is already stored$/gm)).toHaveLength(
      CORPUS_LOGS,
    );
    expect(again.stdout).toBe(
      `imported 0 of ${CORPUS_LOGS} logs into ${store}; ${CORPUS_LOGS} skipped\n`,
    );
  });

  it("stores one log under a new id with --session-id, and refuses it with more than one log", async () => {
    const store = freshStore();
    expect((await cli(["import", TEXT_TURN, "--store", store])).status).toBe(0);
    const renamed = await cli(
      ["import", TEXT_TURN, "--session-id", "text-turn-copy", "--store", store],
      NO_COLOR,
    );
    expect(renamed.status).toBe(0);
    expect(renamed.stdout).toBe(`imported ${TEXT_TURN} as text-turn-copy into ${store}\n`);
    const original = readFileSync(TEXT_TURN, "utf8");
    expect((await cli(["export", "text-turn-copy", "--store", store])).stdout).toBe(
      original.replace(TEXT_TURN_ID, "text-turn-copy"),
    );
    const two = await cli(["import", CORPUS, "--session-id", "x", "--store", store], NO_COLOR);
    expect(two.status).toBe(2);
    expect(two.stderr).toMatch(/^seedline import: expected one log with --session-id, got 39$/m);
  });

  it("reads a log from stdin for -", async () => {
    const store = freshStore();
    const run = await cli(["import", "-", "--store", store], {
      ...NO_COLOR,
      input: readFileSync(TEXT_TURN, "utf8"),
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`imported stdin as ${TEXT_TURN_ID} into ${store}\n`);
    expect(await idsOf(store)).toEqual([TEXT_TURN_ID]);
  });

  it("names the file and the line of a broken log, and goes on with the rest", async () => {
    const store = freshStore();
    const [header, first, second] = readFileSync(TEXT_TURN, "utf8").split("\n");
    const bad = join(temp, "bad-line.jsonl");
    writeFileSync(bad, `${header}\n${first}\n${second}\n{not json\n`);
    // Turn 1 closed on line 4, then closed again on line 5: the second break the turn order.
    const outOfOrder = join(temp, "bad-event.jsonl");
    const turnEnd = (seq: number) =>
      JSON.stringify({
        type: "turn/end",
        seq,
        time: 1782094878372,
        data: { turn: 1, reason: { kind: "completed" } },
      });
    writeFileSync(outOfOrder, `${header}\n${first}\n${second}\n${turnEnd(2)}\n${turnEnd(3)}\n`);
    const run = await cli(["import", bad, outOfOrder, TEXT_TURN, "--store", store], NO_COLOR);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^seedline import: .*bad-line\.jsonl:4: CORRUPT_LOG: /m);
    expect(run.stderr).toMatch(/^seedline import: .*bad-event\.jsonl:5: INVALID_EVENT: /m);
    expect(run.stdout).toMatch(/^imported 1 of 3 logs .*; 2 failed$/m);
  });

  it.skipIf(!hasScript())(
    "draws a progress bar on stderr when it is a terminal (script(1) gives it one)",
    () => {
      const store = freshStore();
      const run = seedlineInTerminal(["import", CORPUS, "--skip-existing", "--store", store], {
        env: { NO_COLOR: "1" },
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/importing \[[█░]+\] 39\/39 logs/);
      // The lines written without a terminal are not among the bar's.
      expect(run.stdout).not.toMatch(/^imported 1\/39 /m);
      // Told above the bar (after the codes that clear its line).
      expect(run.stdout).toMatch(/skipped .*\/session\.jsonl: .* is already stored/);
      expect(run.stdout).toContain(
        `imported ${CORPUS_LOGS - TAKEN} of ${CORPUS_LOGS} logs into ${store}; ${TAKEN} skipped`,
      );
    },
  );
});

describe("seedline rm", () => {
  it("removes the sessions named, says so, and reports a missing id after removing the others", async () => {
    const store = freshStore();
    expect((await cli(["import", join(CORPUS, "subagent-fork"), "--store", store])).status).toBe(0);
    const [child, parent] = (await idsOf(store)).sort((a, b) => (a < b ? 1 : -1));
    expect(await idsOf(store)).toHaveLength(2);
    const run = await cli(["rm", parent as string, "no-such-session", "--store", store], NO_COLOR);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe(`removed ${parent}\n`);
    expect(run.stderr).toMatch(/^seedline rm: SESSION_NOT_FOUND: /);
    // The child keeps its own copy of what it inherited.
    expect(await idsOf(store)).toEqual([child]);
    expect((await cli(["show", child as string, "--store", store])).status).toBe(0);

    const forced = await cli(["rm", "--force", child as string, "gone", "--store", store]);
    expect(forced.status).toBe(0);
    expect(forced.stdout).toBe(`removed ${child}\n`);
    expect(forced.stderr).toBe("");
    expect(await idsOf(store)).toEqual([]);
  });

  it("does not create a store that is not there", async () => {
    const store = `sqlite:${join(temp, "absent.db")}`;
    const run = await cli(["rm", "x", "--store", store], NO_COLOR);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^seedline rm: SESSION_NOT_FOUND: /);
    expect((await cli(["rm", "-f", "x", "--store", store])).status).toBe(0);
    expect(readdirSync(temp)).not.toContain("absent.db");
  });
});
