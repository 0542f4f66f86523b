import { existsSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

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

export default defineConfig({
  test: {
    include: reliability ? ["test/reliability/**/*.test.ts"] : ["test/**/*.test.ts"],
    exclude: [...(reliability ? [] : ["test/reliability/**", "node_modules/**"]), ...corpusSkips()],
    // Most test files wait on processes, sockets and disks: two of them at once on a two-core
    // machine took 307 s where one at a time (vitest's default there) took 537 s, and three no
    // less than two (318 s). The reliability suite measures memory and timing: one file at a time.
    maxWorkers: reliability ? 1 : Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
