// The built `seedline completion`: the bash script run in a real bash completes commands, options and choices; zsh and fish scripts parse.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedline } from "../helpers/cli-harness.js";

const ENV = { NO_COLOR: "1" };

/** Whether a shell is installed here. */
function has(shell: string): boolean {
  return spawnSync(shell, ["-c", "exit 0"]).status === 0;
}

let temp: string;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "seedline-completion-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

/** The script for `shell`, written to a file. */
function script(shell: string): string {
  const run = seedline(["completion", shell], { env: ENV });
  expect(run.status).toBe(0);
  expect(run.stderr).toBe("");
  const file = join(temp, `seedline.${shell}`);
  writeFileSync(file, run.stdout);
  return file;
}

/** What the bash completion function offers for a command line whose last word is being typed. */
function complete(file: string, words: readonly string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const run = spawnSync(
    "bash",
    [
      "--norc",
      "-c",
      `source "$1"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _seedline; printf '%s\\n' "\${COMPREPLY[@]}"`,
      "bash",
      file,
    ],
    { encoding: "utf8", cwd: temp },
  );
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return run.stdout.split("\n").filter((l) => l !== "");
}

describe("seedline completion bash", () => {
  it.skipIf(!has("bash"))("completes commands, options and choices in a real bash", () => {
    const file = script("bash");
    expect(complete(file, ["seedline", "sh"])).toEqual(["show"]);
    expect(complete(file, ["seedline", "co"])).toEqual(["continue", "completion"]);
    expect(complete(file, ["seedline", "fork", "x", "--at"])).toEqual(["--at", "--at-turn"]);
    expect(complete(file, ["seedline", "serve", "--framing", ""])).toEqual([
      "ndjson",
      "content-length",
    ]);
    expect(complete(file, ["seedline", "export", "x", "--format", ""])).toEqual([
      "jsonl",
      "md",
      "html",
    ]);
    expect(complete(file, ["seedline", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
    expect(complete(file, ["seedline", "show", "x", "-"])).toContain("--follow");
    expect(complete(file, ["seedline", "help", "v"])).toEqual(["validate"]);
    // A value with no choices offers nothing; a file argument offers paths.
    expect(complete(file, ["seedline", "fork", "x", "--at", ""])).toEqual([]);
    writeFileSync(join(temp, "log-a.jsonl"), "");
    expect(complete(file, ["seedline", "validate", "log-"])).toEqual(["log-a.jsonl"]);
  });
});

describe("seedline completion zsh and fish", () => {
  it.skipIf(!has("zsh"))(
    `zsh -n parses the zsh script${has("zsh") ? "" : " — skipped: zsh is not installed here"}`,
    () => {
      const run = spawnSync("zsh", ["-n", script("zsh")], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
    },
  );

  it.skipIf(!has("fish"))(
    `fish -n parses the fish script${has("fish") ? "" : " — skipped: fish is not installed here"}`,
    () => {
      const run = spawnSync("fish", ["-n", script("fish")], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
    },
  );

  it("lists every command, and the choices of options, in each script", () => {
    for (const shell of ["zsh", "fish"]) {
      const run = seedline(["completion", shell], { env: ENV });
      expect(run.status).toBe(0);
      for (const name of ["serve", "fork", "export", "completion"])
        expect(run.stdout).toContain(name);
      expect(run.stdout).toContain("ndjson content-length");
      expect(run.stdout).toContain("at-turn");
    }
    expect(seedline(["completion", "tcsh"], { env: ENV }).status).toBe(2);
  });
});
