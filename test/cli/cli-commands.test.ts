// The built `seedline` binary, command by command: validate, replay, import/ls/export/show/fork, generate, usage, colour.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIN, ROOT, type Run } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";
const CHILD = "906f1eac-a457-4eb9-828b-1ba537552524";
const PROBLEM_LINE = /^(.+):(\d+): ([a-z-]+): (.+)$/;

let temp: string;
beforeAll(async () => {
  // test/global-setup.ts builds dist/ once for every end-to-end test.
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

function tempDir(name: string): string {
  const dir = join(temp, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A copy of a corpus log with one event line (0-based index among events) changed. */
function brokenCopy(
  dir: string,
  name: string,
  change: (events: Record<string, unknown>[]) => void,
): string {
  const [header, ...lines] = readFileSync(join(CORPUS, "tool-call-turn", "session.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "");
  const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  change(events);
  const path = join(dir, name);
  writeFileSync(path, `${[header, ...events.map((e) => JSON.stringify(e))].join("\n")}\n`);
  return path;
}

describe("seedline validate", () => {
  it("passes every log of the recorded corpus", async () => {
    const dir = join(tempDir("valid"), "corpus");
    cpSync(CORPUS, dir, { recursive: true });
    const run = await cli(["validate", dir]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^ok: 39 logs, \d+ events, no problems\n$/);
  });

  it("reports a bad seq, an unknown field, a missing surfaceOp and a turn order break by file and line", async () => {
    const dir = tempDir("broken");
    brokenCopy(dir, "bad-seq.jsonl", (events) => {
      (events[2] as { seq: number }).seq = 99;
    });
    brokenCopy(dir, "unknown-field.jsonl", (events) => {
      (events[3] as { data: Record<string, unknown> }).data.colour = "red";
    });
    brokenCopy(dir, "no-surface-op.jsonl", (events) => {
      delete (events[1] as { surfaceOp?: unknown }).surfaceOp;
    });
    brokenCopy(dir, "turn-order.jsonl", (events) => {
      // A second turn/start while turn 1 is open.
      (events[2] as Record<string, unknown>).type = "turn/start";
      (events[2] as Record<string, unknown>).data = {
        turn: 2,
        trigger: { kind: "message", source: { kind: "user" } },
      };
    });
    const run = await cli(["validate", dir]);
    expect(run.status).toBe(1);
    const problems = run.stdout
      .split("\n")
      .filter((line) => PROBLEM_LINE.test(line))
      .map((line) => {
        const [, file, number, rule] = PROBLEM_LINE.exec(line) as RegExpExecArray;
        return { file: (file as string).slice(dir.length + 1), line: Number(number), rule };
      });
    expect(problems).toEqual([
      { file: "bad-seq.jsonl", line: 4, rule: "seq-contiguous" },
      { file: "no-surface-op.jsonl", line: 3, rule: "surface-marker" },
      { file: "turn-order.jsonl", line: 4, rule: "turn-order" },
      { file: "unknown-field.jsonl", line: 5, rule: "schema" },
    ]);
    expect(run.stdout).toMatch(/4 problems in 4 of 4 logs\n$/);
  });

  it("checks the header and reports non-JSON lines", async () => {
    const dir = tempDir("header");
    writeFileSync(
      join(dir, "log.jsonl"),
      '{"type":"session","version":0,"id":"x","createdAt":0,"seedLength":3}\nnot json\n',
    );
    writeFileSync(
      join(dir, "future.jsonl"),
      '{"type":"session","version":7,"id":"x","createdAt":0}\n',
    );
    const run = await cli(["validate", "--json", dir]);
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      problems: { file: string; line: number; rule: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.file.slice(dir.length + 1), p.line, p.rule])).toEqual([
      ["future.jsonl", 1, "format-version"],
      ["log.jsonl", 2, "json"],
      ["log.jsonl", 1, "seed-length"],
    ]);
  });

  it("gives machine output with --json", async () => {
    const run = await cli(["validate", "--json", join(CORPUS, "subagent-fork")]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, files: 2, problems: [] });
  });

  it("fails on a folder without logs and on a missing path", async () => {
    expect((await cli(["validate", tempDir("empty")])).status).toBe(1);
    const missing = await cli(["validate", join(temp, "no-such-file.jsonl")]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^seedline validate: ENOENT/);
  });
});

interface Script {
  sessionId: string;
  primary: boolean;
  seedLength: number;
  entries: { kind: string; chunks: { type: string; text?: string }[] }[];
}

function scriptsOf(run: Run): Script[] {
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return (JSON.parse(run.stdout) as { scripts: Script[] }).scripts;
}

function streamedText(entry: Script["entries"][number]): string {
  return entry.chunks.map((c) => (c.type === "text-delta" ? c.text : "")).join("");
}

describe("seedline replay", () => {
  it("turns the cancelled stream of a fixture folder into a hang entry", async () => {
    const scripts = scriptsOf(await cli(["replay", join(CORPUS, "cancel")]));
    expect(scripts).toHaveLength(1);
    expect(scripts[0]?.entries.map((e) => e.kind)).toEqual(["hang"]);
  });

  it("turns a provider error into a throw entry", async () => {
    const scripts = scriptsOf(await cli(["replay", join(CORPUS, "error-finish")]));
    expect(scripts[0]?.entries.some((e) => e.kind === "throw")).toBe(true);
  });

  it("slices a fork child at its seed boundary, so it never replays its parent's calls", async () => {
    const [parent, child] = scriptsOf(await cli(["replay", join(CORPUS, "subagent-fork")]));
    expect(parent).toMatchObject({ sessionId: PARENT, primary: true, seedLength: 0 });
    expect(child).toMatchObject({ sessionId: CHILD, primary: false, seedLength: 38 });
    expect(child?.entries).toHaveLength(1);
    expect(streamedText(child?.entries[0] as Script["entries"][number])).toContain("MARMALADE");
    expect(child?.entries[0]).not.toEqual(parent?.entries[0]);
  });

  it("gives the one script of a file, sliced at its own header's seedLength", async () => {
    const [script] = scriptsOf(
      await cli(["replay", join(CORPUS, "subagent-fork", "session.1.jsonl")]),
    );
    expect(script).toMatchObject({ sessionId: CHILD, primary: true, seedLength: 38 });
    expect(script?.entries).toHaveLength(1);
  });

  it("fails with the error code for a broken log, and for a folder that is no fixture", async () => {
    const path = brokenCopy(tempDir("replay-broken"), "bad.jsonl", (events) => {
      (events[2] as { seq: number }).seq = 99;
    });
    const run = await cli(["replay", path]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^seedline replay: CORRUPT_LOG: /);
    expect((await cli(["replay", CORPUS])).status).toBe(1);
  });
});

describe.each(["jsonl", "sqlite"])("import, ls, export, show and fork over a %s store", (kind) => {
  let store: string;
  beforeAll(async () => {
    const dir = tempDir(`store-${kind}`);
    store =
      kind === "jsonl" ? `jsonl:${join(dir, "sessions")}` : `sqlite:${join(dir, "sessions.db")}`;
  });

  it("imports a fixture folder with ids and headers preserved, progress on stderr", async () => {
    const run = await cli(["import", join(CORPUS, "subagent-fork"), "--store", store]);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^imported 1\/2 .*session\.jsonl → f2358dc0/m);
    expect(run.stderr).toMatch(/^imported 2\/2 .*session\.1\.jsonl → 906f1eac/m);
    expect(run.stdout).toMatch(/^imported 2 of 2 logs into /);
  });

  it("lists the lineage as a tree, the child under its parent", async () => {
    const run = await cli(["ls", "--store", store]);
    expect(run.status).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^${PARENT}  189 events  `));
    expect(lines[1]).toMatch(new RegExp(`^└─ ${CHILD}  88 events \\(38 inherited\\)  `));
    const json = JSON.parse((await cli(["ls", "--json", "--store", store])).stdout) as {
      sessions: { sessionId: string; eventCount: number; children: { sessionId: string }[] }[];
    };
    expect(json.sessions).toHaveLength(1);
    expect(json.sessions[0]).toMatchObject({ sessionId: PARENT, eventCount: 189 });
    expect(json.sessions[0]?.children.map((c) => c.sessionId)).toEqual([CHILD]);
  });

  it("exports the imported bytes back", async () => {
    for (const [id, file] of [
      [PARENT, "session.jsonl"],
      [CHILD, "session.1.jsonl"],
    ] as const) {
      const run = await cli(["export", id, "--store", store]);
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(readFileSync(join(CORPUS, "subagent-fork", file), "utf8"));
    }
  });

  it("shows a timeline with the seed boundary between the inherited turn and the child's own", async () => {
    const run = await cli(["show", CHILD, "--store", store]);
    expect(run.status).toBe(0);
    const lines = run.stdout.split("\n");
    const boundary = lines.indexOf("── seed boundary (38 inherited events) ──");
    expect(boundary).toBeGreaterThan(0);
    expect(lines[boundary - 1]).toMatch(/^37 +turn 1 end · completed$/);
    expect(lines[boundary + 1]).toMatch(/^38 +turn 2 · message from user$/);
    expect(run.stdout).toMatch(/assistant: MARMALADE/);
    expect(run.stdout).toMatch(/step 1 · 44 chunks/);
    const json = JSON.parse((await cli(["show", "--json", CHILD, "--store", store])).stdout) as {
      seedLength: number;
      rows: { kind: string }[];
    };
    expect(json.seedLength).toBe(38);
    expect(json.rows.filter((r) => r.kind === "seed-boundary")).toEqual([
      { kind: "seed-boundary", inherited: 38 },
    ]);
  });

  it("shows tool calls with their names", async () => {
    const dir = tempDir(`tools-${kind}`);
    const url = kind === "jsonl" ? `jsonl:${dir}` : `sqlite:${join(dir, "s.db")}`;
    expect((await cli(["import", join(CORPUS, "tool-call-turn"), "--store", url])).status).toBe(0);
    const run = await cli(["show", "7f13d6e6-f881-4a29-b399-b085fbaca9a3", "--store", url]);
    expect(run.stdout).toMatch(/^ *64 +→ bash \{"command": "echo SNAPSHOT_OK"/m);
    expect(run.stdout).toMatch(/^ *65 +← bash SNAPSHOT_OK$/m);
  });

  it("forks at a completed turn and refuses a boundary inside a turn", async () => {
    const run = await cli([
      "fork",
      PARENT,
      "--at",
      "37",
      "--child-id",
      "cli-child",
      "--store",
      store,
    ]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^forked .* at seq 37 into cli-child \(38 inherited events\)$/m);
    const exported = (await cli(["export", "cli-child", "--store", store])).stdout.split("\n");
    expect(JSON.parse(exported[0] as string)).toMatchObject({
      id: "cli-child",
      parentSession: PARENT,
      seedLength: 38,
    });
    expect((await cli(["ls", "--store", store])).stdout).toMatch(
      /├─ 906f1eac.*\n└─ cli-child {2}38 events/,
    );

    const inside = await cli(["fork", PARENT, "--at", "5", "--store", store]);
    expect(inside.status).toBe(1);
    expect(inside.stderr).toMatch(/^seedline fork: OPEN_TURN: /);
    const json = await cli(["fork", PARENT, "--json", "--store", store]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      header: { parentSession: PARENT, seedLength: 189 },
    });
  });

  it("names each failing file, goes on with the rest, and exits 1", async () => {
    const run = await cli([
      "import",
      join(CORPUS, "subagent-fork"),
      join(CORPUS, "text-turn"),
      "--store",
      store,
    ]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/seedline import: .*session\.jsonl: SESSION_ALREADY_EXISTS: /);
    expect(run.stderr).toMatch(/^imported 3\/3 .*text-turn/m);
    expect(run.stdout).toMatch(/imported 1 of 3 logs .*2 failed/);
  });

  it("reports a missing session with its code", async () => {
    for (const command of ["show", "export", "fork"]) {
      const run = await cli([command, "no-such-session", "--store", store]);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^seedline ${command}: SESSION_NOT_FOUND: `));
    }
  });
});

describe("a store that does not exist", () => {
  it("lists nothing and is not created by reading commands", async () => {
    const dir = tempDir("absent");
    const run = await cli(["ls"], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^no sessions in sqlite:\.seedline\/sessions\.db/);
    expect((await cli(["show", "x"], { cwd: dir })).status).toBe(1);
    expect(existsSync(join(dir, ".seedline"))).toBe(false);
  });

  it("is named by SEEDLINE_STORE when --store is absent", async () => {
    const url = `jsonl:${join(tempDir("env-store"), "s")}`;
    expect(
      (await cli(["import", join(CORPUS, "text-turn")], { env: { SEEDLINE_STORE: url } })).status,
    ).toBe(0);
    expect((await cli(["ls", "--store", url])).stdout).toMatch(/^1 session in jsonl:/m);
  });
});

describe("seedline generate", async () => {
  it("writes the files of generated/ from schema/, and --check passes on them", async () => {
    const out = tempDir("generated");
    const run = await cli(["generate", "--schema", "schema", "--out", out]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const expected = readdirSync(join(ROOT, "generated"))
      .filter((n) => /\.gen\.(ts|js|sql)$/.test(n))
      .sort();
    expect(readdirSync(out).sort()).toEqual(expected);
    for (const name of expected) {
      expect(readFileSync(join(out, name), "utf8"), name).toBe(
        readFileSync(join(ROOT, "generated", name), "utf8"),
      );
    }
    expect((await cli(["generate", "--check", "--schema", "schema", "--out", out])).status).toBe(0);
    writeFileSync(join(out, expected[0] as string), "// edited\n");
    const drift = await cli(["generate", "--check", "--schema", "schema", "--out", out]);
    expect(drift.status).toBe(1);
    expect(drift.stderr).toContain(expected[0]);
  });
});

const COMMAND_NAMES = [
  "serve",
  "validate",
  "replay",
  "import",
  "export",
  "ls",
  "show",
  "ui",
  "continue",
  "fork",
  "demo",
  "generate",
  "completion",
];

describe("usage", () => {
  it.each(COMMAND_NAMES)("prints help for %s --help and exits 0", async (name) => {
    const run = await cli([name, "--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: seedline ${name}\\b`));
    expect(run.stdout).toMatch(/-h, --help/);
  });

  it("lists every command in seedline --help", async () => {
    const run = await cli(["--help"]);
    expect(run.status).toBe(0);
    for (const name of COMMAND_NAMES)
      expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect((await cli(["help", "fork"])).stdout).toMatch(/^Usage: seedline fork ID/);
  });

  it("prints the package version", async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const run = await cli(["--version"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${pkg.version}\n`);
  });

  it.each([
    ["no command", []],
    ["an unknown command", ["frobnicate"]],
    ["an unknown option", ["ls", "--bogus"]],
    ["a missing argument", ["show"]],
    ["a missing option value", ["fork", "x", "--at"]],
    ["an extra argument", ["export", "a", "b"]],
    ["a boundary that is not a seq", ["fork", "x", "--at", "-1"]],
    ["a store URL of no known form", ["ls", "--store", "mysql://x"]],
    ["a framing of no known kind", ["serve", "--framing", "xml"]],
  ])("exits 2 with a usage line on stderr for %s", async (_, args) => {
    const run = await cli(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^usage: seedline /m);
  });
});

describe("colour", () => {
  let store: string;
  let args: string[];
  beforeAll(async () => {
    store = `jsonl:${tempDir("colour")}`;
    args = ["show", CHILD, "--store", store];
    await cli(["import", join(CORPUS, "subagent-fork"), "--store", store]);
  });

  it("is off when stdout is not a terminal", async () => {
    expect((await cli(args)).stdout).not.toContain("\u001b[");
  });

  it("is on with FORCE_COLOR, and NO_COLOR removes every escape code", async () => {
    const forced = await cli(args, { env: { FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain("\u001b[");
    const plain = await cli(args, { env: { FORCE_COLOR: "1", NO_COLOR: "1" } });
    expect(plain.stdout).not.toContain("\u001b[");
    expect(plain.stdout).toContain("── seed boundary (38 inherited events) ──");
    const failing = await cli(["show", "missing", "--store", store], {
      env: { FORCE_COLOR: "1", NO_COLOR: "1" },
    });
    expect(failing.stderr).not.toContain("\u001b[");
  });
});
