import { existsSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const ROOT = dirname(fileURLToPath(import.meta.url));

// The reliability suite (test/reliability) is long: it runs only through `npm run test:reliability`.
const reliability = process.env.SEEDLINE_RELIABILITY === "1";

/**
 * The recorded corpus is another project's data, read from beside the repository (as test/helpers/corpus.ts
 * does). Where it is absent the test files that read it (through corpus.ts or rpc-fixtures.ts) are
 * skipped, saying why — unless CI is set, where its absence is a failure.
 */
function corpusSkips(): string[] {
  const corpus = process.env.SEEDLINE_CORPUS ?? join(ROOT, "..", "shared", "corpus");
  const ci = process.env.CI !== undefined && process.env.CI !== "";
  if (existsSync(corpus) || ci) return [];
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return files(path);
      return entry.name.endsWith(".test.ts") ? [path] : [];
    });
  const readers = files(join(ROOT, "test")).filter((path) =>
    /from "(?:\.\.\/)+helpers\/(?:corpus|rpc-fixtures|readers-processes-suite)\.js"/.test(
      readFileSync(path, "utf8"),
    ),
  );
  const names = readers.map((path) => relative(ROOT, path));
  console.warn(
    `skipped ${names.length} test files: they read the recorded corpus, expected at ${corpus} (set SEEDLINE_CORPUS), found none: ${names.join(", ")}`,
  );
  return names;
}

/**
 * The longest test files, longest first (seconds alone on a two-core machine): they start before
 * every other file, so that no long file starts near the end of the run with one worker idle
 * beside it. Vitest orders by the durations it cached on an earlier run, but without that cache (a
 * fresh clone, CI) it orders by file size: bench-quick (70 s) started 185 s into a 300 s run, and
 * the three four-line readers-processes files (60 s together) ran last.
 */
const LONGEST_FIRST = [
  "test/scripts/bench-quick.test.ts",
  "test/store/readers-processes-postgres.test.ts",
  "test/rpc/backpressure.test.ts",
  "test/scripts/doc-sync.test.ts",
  "test/store/readers-processes-sqlite.test.ts",
  "test/e2e/e2e-server.test.ts",
  "test/store/readers-processes-jsonl.test.ts",
  "test/scripts/generate.test.ts",
  "test/e2e/e2e-frame-limit.test.ts",
  "test/store/backend-contract-postgres.test.ts",
  "test/package/consumer-package.test.ts",
  "test/cli/cli-commands.test.ts",
];

/** The files of {@link LONGEST_FIRST} in its order, then the rest in vitest's own order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = LONGEST_FIRST.indexOf(relative(ROOT, spec.moduleId).split("\\").join("/"));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: reliability ? ["test/reliability/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: [...(reliability ? [] : ["test/reliability/**", "node_modules/**"]), ...corpusSkips()],
    // Most test files wait on processes, sockets and disks: one more file at a time than there are
    // cores. On a two-core machine two at once took 307 s where one at a time (vitest's default
    // there) took 537 s; with the workers' modules shared (below), three took 292 s where two took
    // 311 s. The reliability suite measures memory and timing: one file at a time.
    maxWorkers: reliability ? 1 : availableParallelism() + 1,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Test files share their worker's modules (each file's own code still runs afresh): importing
    // the SDK and its dependencies once per worker, not once per file, saves about a tenth of the
    // run. Helpers whose module holds a file's resources clean up through `atFileEnd`, not
    // `afterAll` at their top level (see test/helpers/file-end.ts).
    // The reliability suite keeps isolation: it measures memory, one file at a time.
    isolate: reliability,
    setupFiles: ["test/helpers/setup-file.ts"],
    sequence: { sequencer: LongestFirst },
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
