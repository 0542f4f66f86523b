// The layers of src/ import only downward, and no module imports itself through a cycle.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");

/** The layers, lowest first: a module may import from its own layer and the ones before it. */
const LAYERS = [
  ["generated.ts"],
  ["errors.ts", "util/"],
  ["log/"],
  ["store/"],
  ["testing/"],
  ["replay/"],
  ["import/"],
  ["recorder/"],
  ["proxy/"],
  ["rpc/", "client/"],
  ["view/"],
  ["viewer/"],
  ["cli/"],
  ["index.ts"],
] as const;

function layerOf(file: string): number {
  const index = LAYERS.findIndex((prefixes) =>
    prefixes.some((p) => file === p || file.startsWith(p)),
  );
  if (index < 0) throw new Error(`expected ${file} to belong to a layer; add its folder to LAYERS`);
  return index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The relative imports of a module — static (`import … from`, `export … from`) and dynamic
 * (`import("…")`) — as paths relative to src/ (those that leave src/ start with `..`).
 */
function allImportsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const specs = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+["'](\.[^"']+)["']/g),
    ...text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g),
  ].map((m) => m[1] as string);
  return specs.map((spec) => relative(SRC, resolve(dirname(path), spec)).replace(/\.js$/, ".ts"));
}

/** The relative imports of a module inside src/, as paths relative to src/. */
function importsOf(path: string): string[] {
  return allImportsOf(path).filter((target) => !target.startsWith(".."));
}

/**
 * The imports that leave src/, each with its reason: src/generated.ts is the one door to the
 * generated code in generated/; the CLI's `generate` runs the generator pipeline of scripts/
 * (built beside src/ into dist/), loaded only when the command runs.
 */
const LEAVING_SRC: ReadonlyMap<string, (target: string) => boolean> = new Map([
  ["generated.ts", (target: string) => target.startsWith("../generated/")],
  ["cli/commands/generate.ts", (target: string) => target === "../scripts/pipeline.ts"],
]);

type Graph = ReadonlyMap<string, readonly string[]>;

function upwardImports(graph: Graph): string[] {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (layerOf(target) > layerOf(file)) upward.push(`${file} imports ${target}`);
    }
  }
  return upward;
}

function cyclesOf(graph: Graph): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, stack: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      cycles.push([...stack.slice(stack.indexOf(file)), file].join(" → "));
      return;
    }
    state.set(file, "open");
    for (const target of graph.get(file) ?? []) visit(target, [...stack, file]);
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

describe("src/ layers", () => {
  const graph: Graph = new Map(
    sourceFiles(SRC).map((path) => [relative(SRC, path), importsOf(path)]),
  );

  it("imports only from its own layer or lower ones", () => {
    expect(graph.size).toBeGreaterThan(20);
    expect(upwardImports(graph)).toEqual([]);
  });

  // Seen failing before: src/store/postgres/statements.ts and src/client/seedline-client.ts
  // imported generated/*.gen.js directly.
  it("reaches generated/ only through src/generated.ts", () => {
    const direct = sourceFiles(SRC)
      .filter((path) => relative(SRC, path) !== "generated.ts")
      .filter((path) => /from\s+["'](?:\.\.\/)+generated\//.test(readFileSync(path, "utf8")))
      .map((path) => relative(SRC, path));
    expect(direct).toEqual([]);
  });

  // Seen failing with `import type { PoolClient } from "pg"` planted in src/store/sql/core.ts.
  it("keeps the SQL core shared by the SQL backends free of database drivers", () => {
    const core = sourceFiles(join(SRC, "store", "sql"));
    expect(core.length).toBeGreaterThan(3);
    const drivers = core
      .filter((path) => /from\s+["'](?:better-sqlite3|pg)["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(SRC, path));
    expect(drivers).toEqual([]);
  });

  // With `import("../../rpc/server.js")` planted in src/store/open/open-backend.ts the first test above
  // failed ("store/open/open-backend.ts imports rpc/server.ts"); the static pattern alone missed it.
  it("sees dynamic imports: a module loaded on demand is held to the layers too", () => {
    const lazy = [...graph].filter(([file]) => file === "store/open/open-backend.ts");
    expect(lazy[0]?.[1]).toContain("store/sqlite/sqlite-backend.ts");
    expect(lazy[0]?.[1]).toContain("store/postgres/postgres-backend.ts");
  });

  it("leaves src/ only where a module says why (the CLI's generate reaching into scripts/)", () => {
    const leaving = sourceFiles(SRC).flatMap((path) => {
      const file = relative(SRC, path);
      const allowed = LEAVING_SRC.get(file) ?? (() => false);
      return allImportsOf(path)
        .filter((target) => target.startsWith("..") && !allowed(target))
        .map((target) => `${file} imports ${target}`);
    });
    expect(leaving).toEqual([]);
    // The declared exception is still there (else the list above is stale).
    const generate = allImportsOf(join(SRC, "cli", "commands", "generate.ts"));
    expect(generate).toContain("../scripts/pipeline.ts");
  });

  it("has no import cycle", () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it("reports a planted upward import and a planted cycle", () => {
    const planted: Graph = new Map([
      ["log/surface.ts", ["store/backend.ts"]],
      ["store/backend.ts", ["log/surface.ts"]],
    ]);
    expect(upwardImports(planted)).toEqual(["log/surface.ts imports store/backend.ts"]);
    expect(cyclesOf(planted)).toEqual(["log/surface.ts → store/backend.ts → log/surface.ts"]);
  });
});
