// Each command's --help held to what the command does: every statement of behaviour checked here is quoted from the help and then done.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/store.js";
import { runCliHere } from "../helpers/cli-in-process.js";
import { pairingLog } from "../helpers/tool-pairing-log.js";

let temp: string;
let url: string;

/** A complete log, and one cut inside its first turn (after turn 1's first tool result). */
const whole = pairingLog("whole");
const open = pairingLog("open-turn");
const OPEN_LENGTH = 6;
const openText = `${open.jsonl
  .split("\n")
  .slice(0, OPEN_LENGTH + 1)
  .join("\n")}\n`;

/** A command's help with its line breaks and runs of spaces as single spaces. */
async function help(command: string): Promise<string> {
  const run = await runCliHere([command, "--help"]);
  expect(run.status).toBe(0);
  return run.stdout.replace(/\s+/g, " ");
}

/** The session ids `seedline ls --json` lists, each with its event count. */
async function listed(store: string): Promise<Record<string, number>> {
  const run = await runCliHere(["ls", "--store", store, "--json"]);
  expect(run.status, run.stderr).toBe(0);
  const counts: Record<string, number> = {};
  const walk = (nodes: { sessionId: string; eventCount: number; children: unknown[] }[]) => {
    for (const node of nodes) {
      counts[node.sessionId] = node.eventCount;
      walk(node.children as typeof nodes);
    }
  };
  walk(JSON.parse(run.stdout).sessions);
  return counts;
}

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "seedline-help-claims-"));
  url = `sqlite:${join(temp, "store.db")}`;
  for (const [name, text] of [
    ["whole.jsonl", whole.jsonl],
    ["open.jsonl", openText],
  ] as const) {
    writeFileSync(join(temp, name), text);
    const run = await runCliHere(["import", join(temp, name), "--store", url]);
    expect(run.status, run.stderr).toBe(0);
  }
});

afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

describe("what each command's --help says it does", () => {
  // Fails without the fix: export's help said a log ending inside a turn "is repaired first (its
  // closers are stored), as every load does", but export (like every read) repairs nothing.
  it("export: a log that ends inside a turn is written as stored, its last turn open", async () => {
    const text = await help("export");
    expect(text).toContain(
      "A stored log that ends inside a turn is written as stored, its last turn open: export only reads, and no read repairs a log",
    );
    expect(text).not.toContain("repaired first");
    const exported = await runCliHere(["export", "open-turn", "--store", url]);
    expect(exported.status, exported.stderr).toBe(0);
    // No closers: the events as imported, the last a tool result inside turn 1's step.
    expect(exported.stdout).toBe(openText);
    const shown = await runCliHere(["show", "open-turn", "--store", url, "--json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ eventCount: OPEN_LENGTH, openTurn: 1 });
    const md = await runCliHere(["export", "open-turn", "--format", "md", "--store", url]);
    expect(md.stdout).toContain("Turn 1 is still open at the end of the log.");
  });

  // Fails without the fix: import's help said such a log is "repaired when first opened", but a
  // read opens it without repairing it; its first writer closes it.
  it("import: a log ending inside a turn is stored as written, and closed by its first writer", async () => {
    const text = await help("import");
    expect(text).toContain(
      "a log ending inside a turn is stored as written (reads show its last turn open) and closed by its first writer (an append, or opening it for writing)",
    );
    const file = join(temp, "open-2.jsonl");
    writeFileSync(file, openText.replace('"id":"open-turn"', '"id":"open-2"'));
    expect((await runCliHere(["import", file, "--store", url])).status).toBe(0);
    const before = await runCliHere(["export", "open-2", "--store", url]);
    expect(before.stdout.trim().split("\n")).toHaveLength(OPEN_LENGTH + 1);
    const store = await openStore(url);
    try {
      await store.openForWriting("open-2");
    } finally {
      await store.close();
    }
    const after = await runCliHere(["show", "open-2", "--store", url, "--json"]);
    const shown = JSON.parse(after.stdout) as { openTurn?: number; eventCount: number };
    expect(shown.openTurn).toBeUndefined();
    expect(shown.eventCount).toBeGreaterThan(OPEN_LENGTH);
  });

  // Fails without the fix: ls's help said "Sessions created but never appended to are not
  // stored, so not listed", but a created session is stored and listed with 0 events.
  it("ls: a session created and never appended to is listed, with 0 events", async () => {
    const text = await help("ls");
    expect(text).toContain(
      "A session is stored, and listed, from its creation: one never appended to is listed with 0 events.",
    );
    expect(text).not.toContain("are not stored");
    const store = await openStore(url);
    try {
      await store.create({ id: "never-appended" });
    } finally {
      await store.close();
    }
    expect(await listed(url)).toMatchObject({ "never-appended": 0, whole: whole.events.length });
  });

  it("ls and search: a store that does not exist lists and finds nothing, and is not created", async () => {
    expect(await help("ls")).toContain(
      "A store that does not exist lists nothing (and is not created).",
    );
    expect(await help("search")).toContain(
      "A store that does not exist finds nothing (and is not created).",
    );
    const path = join(temp, "absent.db");
    const ls = await runCliHere(["ls", "--store", `sqlite:${path}`]);
    expect(ls.status).toBe(0);
    expect(ls.stdout).toContain("no sessions");
    const search = await runCliHere(["search", "plants", "--store", `sqlite:${path}`, "--json"]);
    expect(search.status).toBe(0);
    expect(JSON.parse(search.stdout)).toMatchObject({ results: [] });
    expect(existsSync(path)).toBe(false);
  });

  it("search: --limit takes 1–100 (a usage error past them)", async () => {
    expect(await help("search")).toContain("--limit N the most sessions to show (1–100; 20)");
    for (const limit of ["0", "101"]) {
      const run = await runCliHere(["search", "plants", "--limit", limit, "--store", url]);
      expect(run.status, limit).toBe(2);
    }
    const run = await runCliHere(["search", "plants", "--limit", "100", "--store", url, "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const found = JSON.parse(run.stdout) as { results: { sessionId: string }[] };
    expect(found.results.map((r) => r.sessionId)).toContain("whole");
  });

  it("fork: without --at the whole log is copied", async () => {
    expect(await help("fork")).toContain("Without --at the whole log is copied.");
    const run = await runCliHere(["fork", "whole", "--store", url, "--json"]);
    expect(run.status, run.stderr).toBe(0);
    const { header } = JSON.parse(run.stdout) as { header: { seedLength: number } };
    expect(header.seedLength).toBe(whole.events.length);
  });

  it("rm --force: missing ids are passed over in silence (exit 0)", async () => {
    expect(await help("rm")).toContain(
      "with --force missing ids are passed over in silence (exit 0)",
    );
    const run = await runCliHere(["rm", "no-such-session", "--force", "--store", url]);
    expect(run).toMatchObject({ status: 0, stderr: "" });
  });

  it("continue: exits 1 with a message when the folder has no session", async () => {
    expect(await help("continue")).toContain(
      "Exits 1 with a message when the folder has no session.",
    );
    const run = await runCliHere(["continue", "--cwd", temp, "--store", url]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("no session in");
  });

  // Fails without the fix: the usage line read "generate --schema DIR --out DIR [--check]", as
  // if both were required, while each has a default (schema, generated).
  it("generate: --schema and --out are optional, with their defaults", async () => {
    const text = await help("generate");
    expect(text).toContain("Usage: seedline generate [--schema DIR] [--out DIR] [--check]");
    expect(text).toContain("the schema folder (default: schema)");
    expect(text).toContain("the output folder (default: generated)");
    // In the package's own folder: the defaults name its schema/ and generated/, in sync.
    const run = await runCliHere(["generate", "--check"]);
    expect(run.status, run.stderr).toBe(0);
  });
});
