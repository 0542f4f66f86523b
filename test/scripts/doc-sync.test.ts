// The doc-sync check: each rule, broken on a temporary copy of the docs (and schema), fails with a message naming what differs.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DocSyncOptions, runDocSync, writeDocRegions } from "../../scripts/doc-sync/check.js";
import type { Problem } from "../../scripts/doc-sync/problem.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DOC = "docs/persistence.md";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder holding copies of docs/ and README.md (and of `extra` folders). */
function copy(extra: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), "seedline-doc-sync-test-"));
  made.push(dir);
  for (const name of ["docs", "README.md", ...extra]) {
    cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  }
  return dir;
}

/** Replaces the one occurrence of `from` in a copied file; returns the 1-based line where `to` starts. */
function edit(dir: string, file: string, from: string, to: string): number {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  const at = text.indexOf(from);
  expect(at, `expected ${JSON.stringify(from)} in ${file}`).toBeGreaterThanOrEqual(0);
  expect(text.indexOf(from, at + 1), `expected ${JSON.stringify(from)} once in ${file}`).toBe(-1);
  writeFileSync(path, text.slice(0, at) + to + text.slice(at + from.length));
  return text.slice(0, at).split("\n").length;
}

function check(dir: string, options: Partial<DocSyncOptions> = {}): Promise<Problem[]> {
  return runDocSync({ docsRoot: dir, packageRoot: ROOT, ...options }).then((r) => [...r.problems]);
}

describe("doc-sync on the project's docs", () => {
  it("finds nothing out of sync in docs/ and README.md", async () => {
    const result = await runDocSync({ docsRoot: ROOT, packageRoot: ROOT });
    expect(result.problems).toEqual([]);
    expect(result.counts.typeEquivBlocks).toBeGreaterThan(0);
    expect(result.counts.examples).toBeGreaterThan(0);
    expect(result.counts.regions).toBe(5);
  });
});

describe("type-equiv blocks", () => {
  it("reports a member whose optionality changed in a block, at the member's line", async () => {
    const dir = copy();
    const line = edit(
      dir,
      DOC,
      "  readonly seedLength?: number;\n}\n```\n\n- `id`",
      "  readonly seedLength: number;\n}\n```\n\n- `id`",
    );
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: "type-equiv", file: DOC, line });
    expect(problems[0]?.message).toBe(
      "type-equiv block SessionHeader: member seedLength is optional in the schema but required in the doc",
    );
    expect(problems[0]?.fix).toContain("npm run generate");
  });

  it("reports a member whose readonly was dropped", async () => {
    const dir = copy();
    const line = edit(
      dir,
      DOC,
      "interface CreateSessionMeta {\n  readonly cwd?: string;",
      "interface CreateSessionMeta {\n  cwd?: string;",
    );
    const problems = await check(dir);
    const problem = problems.find((p) => p.message.includes("block CreateSessionMeta"));
    expect(problem).toMatchObject({ rule: "type-equiv", file: DOC, line: line + 1 });
    expect(problem?.message).toContain("member cwd is readonly in the schema but not in the doc");
  });

  it("tells `any` from `unknown`", async () => {
    const dir = copy();
    const line = edit(dir, DOC, "  readonly meta?: unknown;", "  readonly meta?: any;");
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: "type-equiv", file: DOC, line });
    expect(problems[0]?.message).toContain("block ToolResultData: member meta has type any");
    expect(problems[0]?.message).toContain("unknown in the schema");
  });

  it("compares SDK exports too: a fork error code missing from the block", async () => {
    const dir = copy();
    edit(dir, DOC, '  | "SESSION_NOT_LIVE" //', "  //");
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain("block ForkErrorCode");
    expect(problems[0]?.message).toContain('src/index.ts has "SESSION_NOT_LIVE"');
  });

  it("accepts an intersection equal to the generated type's flattened form, also where another block names it", async () => {
    const dir = copy();
    edit(
      dir,
      DOC,
      "interface CreateSessionMeta {\n  readonly cwd?: string;\n  readonly parentSession?: string;\n",
      "type CreateSessionMeta = {\n  readonly cwd?: string;\n  readonly parentSession?: string;\n} & {\n",
    );
    edit(
      dir,
      DOC,
      "  readonly seedLength?: number;\n}\n```\n\n`SessionStore.create",
      "  readonly seedLength?: number;\n};\n```\n\n`SessionStore.create",
    );
    expect(await check(dir)).toEqual([]);
  });

  it("reports a block that declares a type the package does not have", async () => {
    const dir = copy();
    const line = edit(
      dir,
      DOC,
      'type Durability = "fsync" | "process";\n',
      'type Durability = "fsync" | "process";\n\ninterface SessionFooter {\n  readonly note: string;\n}\n',
    );
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: "unknown-type", file: DOC, line: line + 2 });
    expect(problems[0]?.message).toContain(
      "type-equiv block SessionFooter: SessionFooter is no type",
    );
  });
});

describe("the manifest", () => {
  it("reports each required type whose block was removed", async () => {
    const dir = copy();
    const text = readFileSync(join(dir, DOC), "utf8");
    const block = /```ts type-equiv\ninterface CreateSessionOptions \{[\s\S]*?\n```\n/.exec(text);
    expect(block).not.toBeNull();
    edit(dir, DOC, block?.[0] as string, "");
    const problems = await check(dir);
    expect(problems.map((p) => [p.rule, p.file, p.message])).toEqual([
      [
        "manifest",
        DOC,
        "no type-equiv block declares CreateSessionOptions, which scripts/doc-sync/manifest.ts requires",
      ],
      [
        "manifest",
        DOC,
        "no type-equiv block declares CreateSessionMeta, which scripts/doc-sync/manifest.ts requires",
      ],
    ]);
  });
});

describe("generated regions", () => {
  it("reports a region edited by hand, and --write puts it back", async () => {
    const dir = copy();
    const original = readFileSync(join(dir, DOC), "utf8");
    const line = edit(dir, DOC, "| `turn/start` | no |", "| `turn/start` | yes |");
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: "region", file: DOC, line });
    expect(problems[0]?.message).toContain("generated region event-catalogue differs");
    expect(problems[0]?.fix).toContain("npm run doc-sync -- --write");

    expect(writeDocRegions({ docsRoot: dir, packageRoot: ROOT })).toEqual([DOC]);
    expect(readFileSync(join(dir, DOC), "utf8")).toBe(original);
  });
});

describe("a schema change without npm run generate", () => {
  it("reports the stale generated types and the block member the schema now has", async () => {
    const dir = copy(["schema", "generated"]);
    const path = join(dir, "schema", "session", "session-header.schema.json");
    const schema = JSON.parse(readFileSync(path, "utf8")) as { properties: object };
    schema.properties = {
      ...schema.properties,
      label: { description: "A label.", type: "string" },
    };
    writeFileSync(path, `${JSON.stringify(schema, null, 2)}\n`);
    const docLine = readFileSync(join(dir, DOC), "utf8")
      .split("\n")
      .indexOf("interface SessionHeader {");

    const problems = await check(dir, {
      schemaDir: join(dir, "schema"),
      generatedDir: join(dir, "generated"),
    });
    expect(problems.map((p) => p.rule).sort()).toEqual(["generated-drift", "type-equiv"]);
    const drift = problems.find((p) => p.rule === "generated-drift");
    expect(drift?.file).toMatch(/generated\/types\.gen\.ts$/);
    expect(drift?.fix).toBe("run npm run generate");
    const member = problems.find((p) => p.rule === "type-equiv");
    expect(member).toMatchObject({ file: DOC, line: docLine + 1 });
    expect(member?.message).toBe(
      "type-equiv block SessionHeader: member label is in the schema but missing from the doc",
    );
  });
});

describe("ts examples", () => {
  it("reports an example in README.md that does not compile, at its file and line", async () => {
    const dir = copy();
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    const example = [
      "```ts",
      'import { SessionStore } from "seedline";',
      "",
      "const store = new SessionStore();",
      "await store.fork(42);",
      "```",
      "",
    ].join("\n");
    writeFileSync(join(dir, "README.md"), `${readme}\n${example}`);
    const line = readme.split("\n").length + 5;
    const problems = await check(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: "example", file: "README.md", line });
    expect(problems[0]?.message).toContain("TS2345");
  });
});
