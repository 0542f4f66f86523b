// seedline/testing as a user imports it: through the package's exports map, run by node:test, not vitest.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** A project of its own in a temporary folder, with node_modules/seedline linked to this package. */
function consumerProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-consumer-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules", "seedline"), "dir");
  writeFileSync(join(dir, "package.json"), '{ "name": "consumer", "type": "module" }\n');
  return dir;
}

/** A backend author's test file: the memory backend proving itself under node:test. */
const CONSUMER_TEST = `
import { describe, it } from "node:test";
import { MemoryBackend } from "seedline";
import { defineBackendContract } from "seedline/testing";

defineBackendContract({ describe, it }, {
  name: "memory under node:test",
  harness: async () => {
    const backend = new MemoryBackend();
    return { open: async () => backend, cleanup: async () => {} };
  },
  limits: { noTamper: "nothing stored to damage", oneWriter: "one shared instance" },
  corpus: [{
    name: "tiny.jsonl",
    text: '{"type":"session","version":0,"id":"tiny","createdAt":1}\\n',
  }],
});
`;

/** A backend author's TypeScript, type-checked against the declarations the exports map names. */
const CONSUMER_TYPES = `
import { MemoryBackend } from "seedline";
import { type ContractHarness, defineBackendContract, type TestFunctions } from "seedline/testing";

declare const test: TestFunctions;
const harness = async (): Promise<ContractHarness> => {
  const backend = new MemoryBackend();
  return { open: async () => backend, cleanup: async () => {} };
};
defineBackendContract(test, { name: "typed", harness, limits: { noTamper: "none" } });
`;

describe("the seedline/testing package entry", () => {
  const dir = consumerProject();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Seen failing (ERR_PACKAGE_PATH_NOT_EXPORTED) before package.json exported "./testing".
  it("resolves through the exports map, with its declarations built, and lists only the contract", () => {
    const entry = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports["./testing"];
    for (const target of [entry.types, entry.default]) {
      expect(existsSync(join(ROOT, target)), `${target} built`).toBe(true);
    }
    const run = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const m = await import("seedline/testing"); console.log(JSON.stringify(Object.keys(m)))',
      ],
      { cwd: dir, encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual(["defineBackendContract"]);
  });

  // Seen failing (ERR_PACKAGE_PATH_NOT_EXPORTED) before package.json exported "./testing".
  it("runs the contract under node:test: every case passes or is skipped with its reason", () => {
    writeFileSync(join(dir, "memory-contract.test.mjs"), CONSUMER_TEST);
    const run = spawnSync(process.execPath, ["--test", "memory-contract.test.mjs"], {
      cwd: dir,
      encoding: "utf8",
    });
    const count = (name: string) =>
      Number(new RegExp(`^# ${name} (\\d+)$`, "m").exec(run.stdout)?.[1]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(count("fail")).toBe(0);
    expect(count("pass")).toBeGreaterThan(25);
    expect(count("skipped")).toBeGreaterThan(0);
    expect(run.stdout).toContain("skipped: nothing stored to damage");
  });

  it("type-checks a consumer under NodeNext resolution", () => {
    writeFileSync(join(dir, "consumer.ts"), CONSUMER_TYPES);
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const flags = [
      "--noEmit",
      "--strict",
      "--module",
      "nodenext",
      "--moduleResolution",
      "nodenext",
    ];
    const run = spawnSync(
      process.execPath,
      [tsc, ...flags, "--skipLibCheck", "--types", "", "consumer.ts"],
      { cwd: dir, encoding: "utf8" },
    );
    expect(run.stdout + run.stderr).toBe("");
    expect(run.status).toBe(0);
  });
});
