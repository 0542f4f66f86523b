// The built CLI on an imported corpus store: titles in ls and show, ls --order, continue, id prefixes (plain and on a terminal).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStore, SqliteBackend } from "../../src/index.js";
import { titleFromContent } from "../../src/log/session-title.js";
import { displayWidth } from "../../src/util/text-width.js";
import { MAIN } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const SCENARIOS = ["subagent-fork", "text-turn", "tool-call-turn", "fs-read"];
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";
const PLAIN = { env: { NO_COLOR: "1" } };

interface Logged {
  readonly id: string;
  readonly cwd: string | undefined;
  readonly createdAt: number;
  readonly lastActive: number;
  readonly title: string | undefined;
  readonly eventCount: number;
}

/** What the imported corpus logs hold, read independently of the store. */
function corpusSessions(): Logged[] {
  return SCENARIOS.flatMap((scenario) =>
    readdirSync(join(CORPUS, scenario))
      .filter((name) => name.endsWith(".jsonl"))
      .map((name) => {
        const [head, ...lines] = readFileSync(join(CORPUS, scenario, name), "utf8")
          .split("\n")
          .filter((l) => l !== "");
        const header = JSON.parse(head as string) as {
          id: string;
          cwd?: string;
          createdAt: number;
        };
        const events = lines.map(
          (l) => JSON.parse(l) as { type: string; time: number; data: { content?: unknown } },
        );
        const first = events.find((e) => e.type === "user/message");
        return {
          id: header.id,
          cwd: header.cwd,
          createdAt: header.createdAt,
          lastActive: events.at(-1)?.time ?? header.createdAt,
          title: first === undefined ? undefined : titleFromContent(first.data.content),
          eventCount: events.length,
        };
      }),
  );
}

let dir: string;
let store: string;
let logged: Logged[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "seedline-cli-titles-"));
  store = `sqlite:${join(dir, "sessions.db")}`;
  for (const scenario of SCENARIOS) {
    expect((await cli(["import", join(CORPUS, scenario), "--store", store])).status).toBe(0);
  }
  logged = corpusSessions();
  // Two sessions whose ids share a prefix, one titled explicitly, for the ambiguous-prefix cases.
  const sdk = new SessionStore({ backend: await SqliteBackend.open(join(dir, "sessions.db")) });
  await sdk.create({ id: "dupe-1", meta: { cwd: "/work/dupes" } });
  await sdk.create({ id: "dupe-2", meta: { cwd: "/work/dupes" } });
  await sdk.setTitle("dupe-2", "Second 漢字 🚀");
  const text = readFileSync(join(CORPUS, "text-turn", "session.jsonl"), "utf8");
  const [head, ...rest] = text.split("\n");
  const early = { ...(JSON.parse(head as string) as object), createdAt: 1 };
  await sdk.importLog([JSON.stringify(early), ...rest].join("\n"), { sessionId: "early" });
  await sdk.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("seedline ls with titles", () => {
  it("shows each session's title on its line, by last activity (the default) or by creation", async () => {
    const run = await cli(["ls", "--store", store], PLAIN);
    expect(run.status).toBe(0);
    for (const session of logged) {
      const line = run.stdout.split("\n").find((l) => l.includes(session.id));
      expect(line, session.id).toBeDefined();
      if (session.title !== undefined) expect(line).toContain(`  ${session.title}`);
    }
    type Tree = { sessionId: string; title?: string; updatedAt: string; children: Tree[] };
    const roots = async (args: string[]) =>
      (
        JSON.parse((await cli(["ls", "--json", ...args, "--store", store])).stdout) as {
          sessions: Tree[];
        }
      ).sessions;
    const byActivity = await roots([]);
    const times = byActivity.map((s) => Date.parse(s.updatedAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const parent = byActivity.find((s) => s.sessionId === PARENT);
    expect(parent?.title).toBe(logged.find((s) => s.id === PARENT)?.title);
    // "early" was created long before every other session but was active as late as its log.
    const created = (await roots(["--order", "created"])).map((s) => s.sessionId);
    expect(created.at(-1)).toBe("early");
    expect(byActivity.map((s) => s.sessionId).indexOf("early")).toBeLessThan(created.length - 1);
    expect(new Set(created)).toEqual(new Set(byActivity.map((s) => s.sessionId)));
    expect((await cli(["ls", "--order", "newest", "--store", store])).status).toBe(2);
  });

  it("keeps whole lines in a pipe: each title as stored, cut by grapheme and display width to 80 columns", async () => {
    const run = await cli(["ls", "--store", store], { env: { NO_COLOR: "1", COLUMNS: "40" } });
    expect(run.status).toBe(0);
    // Pipes are never cut to a width (COLUMNS included): grep and less -S get whole rows.
    for (const session of logged.filter((s) => s.title !== undefined)) {
      const line = run.stdout.split("\n").find((l) => l.includes(session.id)) as string;
      expect(line.endsWith(session.title as string), line).toBe(true);
      expect(displayWidth(session.title as string)).toBeLessThanOrEqual(80);
    }
  });

  it("cuts titles to the terminal's width under a pseudo-terminal, coloured", async () => {
    const command = `stty cols 140; ${process.execPath} ${MAIN} ls --store ${store}`;
    const run = spawnSync("script", ["-qec", command, "/dev/null"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "", COLUMNS: "" },
    });
    expect(run.status).toBe(0);
    const lines = run.stdout.split(/\r?\n/).filter((l) => l.includes("event"));
    expect(lines.length).toBeGreaterThan(3);
    expect(run.stdout).toContain("\u001b[1m"); // bold ids: the output is a terminal's
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what is removed
    const plain = lines.map((line) => line.replace(/\u001b\[[0-9;]*m/g, ""));
    const cut = plain.filter((line) => line.endsWith("…"));
    expect(cut.length).toBeGreaterThan(0);
    for (const line of cut) expect(displayWidth(line), line).toBe(140);
  });
});

describe("seedline show, export and fork by id prefix", () => {
  it("shows a session by a unique prefix, its title in the header line", async () => {
    const run = await cli(["show", PARENT.slice(0, 8), "--store", store], PLAIN);
    expect(run.status).toBe(0);
    const title = logged.find((s) => s.id === PARENT)?.title as string;
    expect(run.stdout.split("\n")[0]).toBe(`session ${PARENT}  ${title}`);
  });

  it("exports and forks by a prefix as by the full id", async () => {
    const full = await cli(["export", PARENT, "--store", store]);
    const short = await cli(["export", PARENT.slice(0, 6), "--store", store]);
    expect(short.status).toBe(0);
    expect(short.stdout).toBe(full.stdout);
    const fork = await cli(["fork", PARENT.slice(0, 6), "--json", "--store", store]);
    expect(fork.status).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({ header: { parentSession: PARENT } });
  });

  it("lists the candidates of an ambiguous prefix with their titles and exits 1", async () => {
    for (const command of ["show", "export", "fork"]) {
      const run = await cli([command, "dupe", "--store", store], PLAIN);
      expect(run.status, command).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^seedline ${command}: AMBIGUOUS_ID: `));
      expect(run.stderr).toContain("  dupe-1\n");
      expect(run.stderr).toContain("  dupe-2  Second 漢字 🚀");
    }
  });

  it("says SESSION_NOT_FOUND for a prefix shorter than 4 characters or one that matches nothing", async () => {
    for (const arg of [PARENT.slice(0, 3), "zzzzzz"]) {
      const run = await cli(["show", arg, "--store", store], PLAIN);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/^seedline show: SESSION_NOT_FOUND: /);
    }
  });
});

describe("seedline continue", () => {
  it("prints the most recently active session of a folder, as JSON too", async () => {
    // A folder the other cases do not fork into (a fork inherits its source's folder). Excluding
    // only PARENT itself was not enough: a corpus session in PARENT's folder could be picked, and
    // the fork made by the prefix case (a random id, PARENT's last activity) then tied with it and
    // won about half the runs.
    const parentCwd = logged.find((s) => s.id === PARENT)?.cwd;
    const cwd = logged.find((s) => s.cwd !== parentCwd && s.cwd?.startsWith("/tmp/"))
      ?.cwd as string;
    const inFolder = logged.filter((s) => s.cwd === cwd);
    // Equal last activity is ordered by session id, descending (the listing's tie-break).
    const latest = [...inFolder].sort(
      (a, b) => b.lastActive - a.lastActive || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
    )[0] as Logged;
    const json = await cli(["continue", "--cwd", cwd, "--json", "--store", store]);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      sessionId: latest.id,
      title: latest.title ?? null,
      updatedAt: new Date(latest.lastActive).toISOString(),
      cwd,
      eventCount: latest.eventCount,
    });
    const named = await cli(["continue", "--cwd", cwd, "--store", store], PLAIN);
    expect(named.stdout.split("\n")[0]).toBe(
      `${latest.id}${latest.title === undefined ? "" : `  ${latest.title}`}`,
    );
  });

  it("defaults to the current directory and exits 1 with a message when it has no session", async () => {
    const run = await cli(["continue", "--store", store], { ...PLAIN, cwd: dir });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`no session in ${dir}`);
  });
});
