// The built `seedline` binary on a mistyped command or option: usage exit code 2 and the nearest name.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAIN, seedline } from "../helpers/cli-harness.js";

const ENV = { NO_COLOR: "1" };

describe("did you mean", () => {
  it.each([
    ["a command", ["shwo", "x"], "unknown command 'shwo'; did you mean 'show'?"],
    ["a command after help", ["help", "frok"], "did you mean 'fork'?"],
    ["an option", ["show", "x", "--folow"], "unknown option '--folow'; did you mean '--follow'?"],
    ["an option of another command", ["fork", "x", "--at-trun", "1"], "did you mean '--at-turn'?"],
    ["a top-level option", ["--verison"], "did you mean '--version'?"],
  ])("suggests the nearest name for %s, exiting 2", (_, args, said) => {
    expect(existsSync(MAIN)).toBe(true);
    const run = seedline(args, { env: ENV });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(said);
    expect(run.stderr).toMatch(/^usage: seedline /m);
  });

  it.each([
    ["a word near no command", ["frobnicate"]],
    ["two letters of noise", ["zz"]],
    ["an option near no option", ["ls", "--bogus"]],
  ])("suggests nothing for %s", (_, args) => {
    const run = seedline(args, { env: ENV });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/unknown (command|option)/);
    expect(run.stderr).not.toContain("did you mean");
  });
});
