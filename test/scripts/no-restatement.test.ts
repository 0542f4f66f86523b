// Guards the one-source-of-truth rule: src/ never restates what schema/ states.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

interface Facts {
  readonly methodNames: readonly string[];
  readonly errorNumbers: readonly number[];
  readonly snakeColumns: readonly string[];
  /** Generated interfaces with at least three members: name → member names. */
  readonly fieldLists: ReadonlyMap<string, readonly string[]>;
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(join(ROOT, path), "utf8"));
}

function collectStrings(value: unknown, key: string, out: Set<string | number>): void {
  if (Array.isArray(value)) for (const v of value) collectStrings(v, key, out);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && (typeof v === "string" || typeof v === "number")) out.add(v);
      else collectStrings(v, key, out);
    }
  }
}

function loadFacts(): Facts {
  const methods = new Set<string | number>();
  collectStrings(readJson("schema/rpc/methods.json"), "method", methods);
  const numbers = new Set<string | number>();
  collectStrings(readJson("schema/rpc/errors.json"), "jsonrpcCode", numbers);
  const columns = new Set<string | number>();
  for (const table of (
    readJson("schema/storage/sqlite-layout.json") as { tables: { columns: unknown }[] }
  ).tables) {
    collectStrings(table.columns, "name", columns);
  }
  const types = readFileSync(join(ROOT, "generated", "types.gen.ts"), "utf8");
  return {
    methodNames: [...methods].map(String),
    errorNumbers: [...numbers].map(Number),
    snakeColumns: [...columns].map(String).filter((c) => c.includes("_")),
    fieldLists: new Map([...memberLists(types)].filter(([, members]) => members.length >= 3)),
  };
}

/** Member names of each `interface X {…}` / `type X = {…}` block, at the block's top level. */
function memberLists(source: string): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  const head = /(?:interface\s+(\w+)[^{=]*|type\s+(\w+)(?:<[^>]*>)?\s*=\s*)\{/g;
  for (const m of source.matchAll(head)) {
    const name = (m[1] ?? m[2]) as string;
    let depth = 1;
    let i = (m.index ?? 0) + m[0].length;
    const start = i;
    for (; i < source.length && depth > 0; i++) {
      if (source[i] === "{") depth++;
      else if (source[i] === "}") depth--;
    }
    const body = source.slice(start, i - 1);
    const members: string[] = [];
    let level = 0;
    for (const line of body.split("\n")) {
      const member = /^\s*(?:readonly\s+)?(\w+)\??:/.exec(line);
      if (level === 0 && member) members.push(member[1] as string);
      for (const ch of line) level += ch === "{" ? 1 : ch === "}" ? -1 : 0;
    }
    lists.set(name, members);
  }
  return lists;
}

/** Files that speak a model provider's HTTP API, not seedline's storage. */
const PROVIDER_WIRE = /^src\/proxy\//;

/** What a source file restates, as readable findings. */
function restatements(file: string, source: string, facts: Facts): string[] {
  const found: string[] = [];
  const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "");
  for (const method of facts.methodNames) {
    if (
      code.includes(`"${method}"`) ||
      code.includes(`'${method}'`) ||
      code.includes(`\`${method}\``)
    ) {
      found.push(`${file}: method name ${method}`);
    }
  }
  for (const n of facts.errorNumbers) {
    if (new RegExp(`(?<![\\w.])${n}(?![\\w.])`).test(code))
      found.push(`${file}: error number ${n}`);
  }
  // The model proxy's adapters speak the providers' wire members (OpenAI's `created_at`), which
  // share names with some columns but are not ours to state once.
  if (!PROVIDER_WIRE.test(file)) {
    for (const column of facts.snakeColumns) {
      if (new RegExp(`\\b${column}\\b`).test(code)) found.push(`${file}: column ${column}`);
    }
  }
  for (const [name, members] of memberLists(code)) {
    for (const [generated, fields] of facts.fieldLists) {
      if (fields.every((f) => members.includes(f))) {
        found.push(`${file}: ${name} restates the members of ${generated} (${fields.join(", ")})`);
      }
    }
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("src/ restates nothing that the schema states", () => {
  const facts = loadFacts();

  it("knows what to look for", () => {
    expect(facts.methodNames).toContain("session/create");
    expect(facts.errorNumbers).toContain(-32013);
    expect(facts.snakeColumns).toEqual(
      expect.arrayContaining([
        "created_at",
        "parent_session",
        "seed_length",
        "session_id",
        "surface_op",
      ]),
    );
    expect(facts.fieldLists.get("SessionHeader")).toEqual(
      expect.arrayContaining(["version", "id", "createdAt", "cwd", "parentSession", "seedLength"]),
    );
  });

  it("finds each kind of restatement in a planted file", () => {
    const planted = [
      'const m = "session/append";',
      "const code = -32013;",
      'const sql = "SELECT seed_length FROM sessions";',
      "interface MyHeader {\n  version: 0;\n  id: string;\n  createdAt: number;\n  cwd?: string;\n  parentSession?: string;\n  seedLength?: number;\n}",
    ].join("\n");
    const found = restatements("planted.ts", planted, facts);
    expect(found).toEqual(
      expect.arrayContaining([
        "planted.ts: method name session/append",
        "planted.ts: error number -32013",
        "planted.ts: column seed_length",
        expect.stringContaining("planted.ts: MyHeader restates the members of SessionHeader"),
      ]),
    );
  });

  it("takes a provider's wire member in the model proxy for no column, and one elsewhere for one", () => {
    const code = 'const keep = ["id", "model", "created_at"];';
    expect(restatements("src/proxy/openai-responses-map.ts", code, facts)).toEqual([]);
    expect(restatements("src/store/x.ts", code, facts)).toEqual([
      "src/store/x.ts: column created_at",
    ]);
  });

  it("finds nothing in src/ (src/generated.ts, the one bridge, only re-exports)", () => {
    const found = sourceFiles(SRC).flatMap((path) =>
      restatements(relative(ROOT, path), readFileSync(path, "utf8"), facts),
    );
    expect(found).toEqual([]);
  });
});
