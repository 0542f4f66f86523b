// `seedline import --from …` run in this process: a report per file and a summary, a second import changing nothing, --strict, the tool's folder under HOME, a bad file among good ones, and the command lines it refuses.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasScript, seedlineInTerminal } from "../helpers/cli-harness.js";
import { runCliHere } from "../helpers/cli-in-process.js";
import {
  CLAUDE_CODE_FIXTURES,
  HAVE_CLAUDE_CODE_FIXTURES,
} from "../helpers/import-claude-code-harness.js";

const SKIP = `(skipped: ${CLAUDE_CODE_FIXTURES} is absent)`;
if (!HAVE_CLAUDE_CODE_FIXTURES) console.log(`cli-import-transcripts: real transcripts ${SKIP}`);

const KFISCHER = join(CLAUDE_CODE_FIXTURES, "kfischer");
const SHORT = join(CLAUDE_CODE_FIXTURES, "spotter", "short.jsonl");
const MAIN = join(KFISCHER, "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");

let temp: string;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-transcripts-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

describe("seedline import with a command line it refuses", () => {
  it.each([
    [["import"], "expected FILE|DIR|-…, got nothing"],
    [["import", "--strict", "x.jsonl"], "expected --strict only with --from"],
    [["import", "--follow", "x.jsonl"], "expected --follow only with --from"],
    [
      ["import", "--from", "cursor", "x.jsonl"],
      "expected --from to be one of claude-code, codex, auto",
    ],
    [
      ["import", "--from", "claude-code", "--session-id", "a", "x.jsonl"],
      "expected no --session-id with --from",
    ],
    [
      ["import", "--from", "claude-code", "--skip-existing", "x.jsonl"],
      "expected no --skip-existing with --from",
    ],
    [
      ["import", "--from", "claude-code", "--follow", "-"],
      "expected files or folders with --follow",
    ],
  ])("%j is a usage error", async (args, message) => {
    const run = await runCliHere([...args, "--store", "memory:"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it("says where it looked when no path is given and the tool's folder is not there", async () => {
    const home = join(temp, "empty-home");
    mkdirSync(home, { recursive: true });
    const run = await runCliHere(["import", "--from", "codex", "--store", "memory:"], {
      HOME: home,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      `expected a transcript folder at ${join(home, ".codex", "sessions")}, found none`,
    );
  });
});

describe.skipIf(!HAVE_CLAUDE_CODE_FIXTURES)(
  `seedline import --from claude-code ${HAVE_CLAUDE_CODE_FIXTURES ? "" : SKIP}`,
  () => {
    it("reports each file and sums them up; importing again changes nothing", async () => {
      const store = `jsonl:${join(temp, "kfischer")}`;
      const first = await runCliHere([
        "import",
        "--from",
        "claude-code",
        KFISCHER,
        "--store",
        store,
      ]);
      expect(first.status).toBe(0);
      expect(first.stdout).toContain(
        `${MAIN}: claude-code, 3 created (211 events stored); 50 mapped, 10 verbatim, 0 refused\n`,
      );
      expect(first.stdout).toContain(
        `imported 5 transcripts into ${store}: 7 sessions (7 created); 63 lines mapped, 14 kept verbatim, 0 refused\n`,
      );
      const again = await runCliHere(["import", "--from", "auto", MAIN, "--store", store]);
      expect(again.status).toBe(0);
      expect(again.stdout).toBe(
        `${MAIN}: claude-code, 3 unchanged; 50 mapped, 10 verbatim, 0 refused\nimported 1 transcript into ${store}: 3 sessions (3 unchanged); 50 lines mapped, 10 kept verbatim, 0 refused\n`,
      );
      // The imported session reads like any other: its foreign records folded.
      const show = await runCliHere([
        "show",
        "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260",
        "--store",
        store,
      ]);
      expect(show.stdout).toContain("claude-code:1 file-history-snapshot");
      const md = await runCliHere([
        "export",
        "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260",
        "--format",
        "md",
        "--store",
        store,
      ]);
      expect(md.stdout).toContain(
        "*Foreign record · claude-code line 1 · `file-history-snapshot` · seq 0*",
      );
    });

    it.skipIf(!hasScript())(
      "draws a progress bar on a terminal, each file's report above it (script(1) gives it a terminal)",
      () => {
        const store = `jsonl:${join(temp, "terminal")}`;
        const run = seedlineInTerminal(
          ["import", "--from", "claude-code", KFISCHER, "--store", store],
          {
            env: { NO_COLOR: "1" },
          },
        );
        expect(run.status).toBe(0);
        expect(run.stdout).toMatch(/importing \[[█░]+\] 5\/5 transcripts/);
        expect(run.stdout).toContain(`${MAIN}: claude-code, 3 created (211 events stored)`);
        expect(run.stdout).toContain(
          `imported 5 transcripts into ${store}: 7 sessions (7 created)`,
        );
      },
    );

    it("with --strict stores nothing of a file with a line not mapped, and lists them", async () => {
      const store = `jsonl:${join(temp, "strict")}`;
      const run = await runCliHere([
        "import",
        "--from",
        "claude-code",
        "--strict",
        SHORT,
        "--store",
        store,
      ]);
      expect(run.status).toBe(1);
      expect(run.stdout).toContain(
        `${SHORT}:1: kept verbatim: no seedline event for a "file-history-snapshot" line\n`,
      );
      expect(run.stdout).toContain(
        `${SHORT}:14: kept verbatim: no seedline event for a "system" (local_command) line\n`,
      );
      expect(run.stdout).toContain(
        `${SHORT}: refused (--strict): 6 lines not mapped, nothing stored\n`,
      );
      const ls = await runCliHere(["ls", "--store", store]);
      expect(ls.stdout).not.toContain("claude-code-");
    });

    it("imports the tool's own folder under HOME when given no path, and goes past a file it cannot import", async () => {
      const home = join(temp, "home");
      const project = join(home, ".claude", "projects", "-home-user-project");
      mkdirSync(project, { recursive: true });
      copyFileSync(SHORT, join(project, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"));
      // A file that names no session, and a line of a record type no mapping knows.
      writeFileSync(join(project, "notes.jsonl"), '{"type":"file-history-snapshot"}\n');
      writeFileSync(
        join(project, "6dacb379-5820-4770-8afe-0123456789ab.jsonl"),
        '{"type":"user","sessionId":"6dacb379-5820-4770-8afe-0123456789ab","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}\n{"type":"hologram","sessionId":"6dacb379-5820-4770-8afe-0123456789ab"}\n',
      );
      const store = `jsonl:${join(temp, "home-store")}`;
      const run = await runCliHere(["import", "--from", "claude-code", "--store", store], {
        HOME: home,
      });
      expect(run.status).toBe(1);
      expect(run.stdout).toContain(
        "55604662-cf2a-4331-851a-ec234028f8ca.jsonl: claude-code, 1 created",
      );
      expect(run.stdout).toContain(
        `6dacb379-5820-4770-8afe-0123456789ab.jsonl:2: kept verbatim: unknown record type "hologram"\n`,
      );
      expect(run.stderr).toContain(
        `seedline import: ${join(project, "notes.jsonl")}: INVALID_PARAMS: expected a line naming the session (sessionId)`,
      );
      expect(run.stdout).toContain(`imported 3 transcripts into ${store}: 2 sessions (2 created)`);
      expect(run.stdout).toContain("1 failed");
    });
  },
);
