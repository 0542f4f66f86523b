// `seedline export --format md` (run in this process: only its output is under test) over recorded corpus sessions: turns, tool calls with results, the seed boundary, and text that stays text.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../helpers/cli-in-process.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
const ENV = { NO_COLOR: "1" };
const _CHILD = "906f1eac-a457-4eb9-828b-1ba537552524";
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";

interface Logged {
  readonly header: { id: string };
  readonly events: { type: string; seq: number; data: Record<string, unknown> }[];
}

function readLog(path: string): Logged {
  const [header, ...lines] = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "");
  return { header: JSON.parse(header as string), events: lines.map((l) => JSON.parse(l)) };
}

/** The lines of a Markdown text, each with whether it lies inside a fenced code block. */
function fencedLines(markdown: string): { line: string; fenced: boolean }[] {
  const out: { line: string; fenced: boolean }[] = [];
  let open: number | undefined;
  for (const line of markdown.split("\n")) {
    if (open === undefined) {
      const opening = /^(`{3,})[^`]*$/.exec(line);
      out.push({ line, fenced: false });
      if (opening) open = (opening[1] as string).length;
      continue;
    }
    // CommonMark: a closing fence is a run of at least as many backticks, and nothing else.
    const closing = /^(`+)\s*$/.exec(line);
    if (closing && (closing[1] as string).length >= open) {
      out.push({ line, fenced: false });
      open = undefined;
    } else {
      out.push({ line, fenced: true });
    }
  }
  expect(open, "every fence is closed").toBeUndefined();
  return out;
}

let temp: string;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "seedline-export-md-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

/** Imports a folder of logs into a store of its own and exports each as Markdown. */
async function exportFolder(folder: string, files: readonly string[]) {
  const store = `jsonl:${join(temp, folder)}`;
  const imported = await cli(["import", ...files, "--store", store], { env: ENV });
  expect(imported.status).toBe(0);
  const exported: { log: Logged; markdown: string }[] = [];
  for (const file of files) {
    const log = readLog(file);
    const run = await cli(["export", log.header.id, "--format", "md", "--store", store], {
      env: ENV,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    exported.push({ log, markdown: run.stdout });
  }
  return exported;
}

const FOLDERS = [
  "subagent-fork",
  "tool-call-turn",
  "multi-turn",
  "error-finish",
  "cancel",
  "fs-edit",
  "fs-policy-reject",
  "hook-cc-pretool-deny",
  "todo-plan",
  "handshake",
];

describe("seedline export --format md", () => {
  it.each(FOLDERS)(
    "renders every session of %s: a turn heading per turn, each tool call with its result",
    async (folder) => {
      const files = readdirSync(join(CORPUS, folder))
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => join(CORPUS, folder, f));
      for (const { log, markdown } of await exportFolder(folder, files)) {
        const lines = fencedLines(markdown);
        const outside = lines.filter((l) => !l.fenced).map((l) => l.line);
        expect(outside[0]).toMatch(/^# \S/);
        const turns = log.events.filter((e) => e.type === "turn/start").map((e) => e.data.turn);
        expect(outside.filter((l) => /^## Turn \d+$/.test(l))).toEqual(
          turns.map((t) => `## Turn ${t}`),
        );
        const results = new Set(
          log.events.filter((e) => e.type === "tool/result").map((e) => e.data.callId),
        );
        for (const call of log.events.filter((e) => e.type === "tool/call")) {
          const id = call.data.callId as string;
          const callAt = outside.findIndex(
            (l) => l.startsWith("#### Tool call ") && l.includes(`\`${id}\``),
          );
          expect(callAt, `the call ${id}`).toBeGreaterThan(0);
          if (!results.has(id)) continue;
          const resultAt = outside.findIndex(
            (l) => l.startsWith("#### Tool result ") && l.includes(`\`${id}\``),
          );
          expect(resultAt, `the result of ${id}`).toBeGreaterThan(callAt);
        }
        const errors = log.events.filter(
          (e) =>
            (e.type === "tool/result" && e.data.isError === true) ||
            (e.type === "turn/end" && (e.data.reason as { kind: string }).kind === "error"),
        );
        expect(outside.filter((l) => l.includes("⚠")).length).toBeGreaterThanOrEqual(errors.length);
      }
    },
  );

  it("marks a fork's header facts and where its inherited events end", async () => {
    const [, child] = await exportFolder("fork-boundary", [
      join(CORPUS, "subagent-fork", "session.jsonl"),
      join(CORPUS, "subagent-fork", "session.1.jsonl"),
    ]);
    const lines = (child?.markdown ?? "").split("\n");
    // The heading is the session's title (the child's derived title, its first user prompt).
    expect(lines[0]).toMatch(/^# Remember this fact for later/);
    expect(lines).toContain(
      `- **Forked from:** \`${PARENT}\` (seedLength 38: seqs 0–37 inherited)`,
    );
    const boundary = lines.indexOf("**— inherited from parent up to seq 37 —**");
    const ended = lines.findIndex((l) => l.startsWith("*Turn 1 completed · seq 37*"));
    const next = lines.indexOf("## Turn 2");
    expect(ended).toBeGreaterThan(0);
    expect(boundary).toBeGreaterThan(ended);
    expect(next).toBeGreaterThan(boundary);
  });

  it("keeps a tool output holding ``` inside its fence, and message text out of markup", async () => {
    const log = readLog(join(CORPUS, "tool-call-turn", "session.jsonl"));
    const hostile = "before\n```\n## Not a heading\n<script>alert(1)</script>\n````\nafter";
    for (const e of log.events) {
      if (e.type === "tool/result") e.data.content = [{ type: "text", text: hostile }];
      if (e.type === "user/message") {
        e.data.content = [
          {
            type: "text",
            text: "# Not a title\n<img src=x onerror=alert(1)>\n[x](javascript:alert(1))",
          },
        ];
      }
    }
    const file = join(temp, "hostile.jsonl");
    const header = readFileSync(join(CORPUS, "tool-call-turn", "session.jsonl"), "utf8").split(
      "\n",
    )[0];
    writeFileSync(file, `${[header, ...log.events.map((e) => JSON.stringify(e))].join("\n")}\n`);
    const [{ markdown } = { markdown: "" }] = await exportFolder("hostile", [file]);
    const lines = fencedLines(markdown);
    const result = lines.findIndex((l) => l.line.startsWith("#### Tool result "));
    expect(result).toBeGreaterThan(0);
    for (const text of hostile.split("\n")) {
      const at = lines.findIndex((l, i) => i > result && l.line === text);
      expect(at, `the line ${JSON.stringify(text)}`).toBeGreaterThan(0);
      expect(lines[at]?.fenced, `the line ${JSON.stringify(text)} is fenced`).toBe(true);
    }
    const outside = lines.filter((l) => !l.fenced).map((l) => l.line);
    expect(outside.filter((l) => /^#{1,6} Not/.test(l))).toEqual([]);
    // Escaped with a backslash, `<` and `[` are text: no tag, no link.
    expect(outside.filter((l) => /(^|[^\\])<(img|script)/.test(l))).toEqual([]);
    expect(outside.filter((l) => /(^|[^\\])\[x\]\(javascript/.test(l))).toEqual([]);
    expect(outside).toContain("\\# Not a title\\");
  });

  it("keeps JSONL the default and refuses a format of no known kind", async () => {
    const store = `jsonl:${join(temp, "tool-call-turn")}`;
    const id = readLog(join(CORPUS, "tool-call-turn", "session.jsonl")).header.id;
    const run = await cli(["export", id, "--store", store], { env: ENV });
    expect(run.stdout).toBe(readFileSync(join(CORPUS, "tool-call-turn", "session.jsonl"), "utf8"));
    expect((await cli(["export", id, "--format", "pdf", "--store", store])).status).toBe(2);
  });
});
