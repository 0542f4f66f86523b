// `npm run doc-sync`: checks docs/ and README.md against the schema and the package; `--write` rewrites the generated regions.
import { parseArgs } from "node:util";
import { runDocSync, writeDocRegions } from "./doc-sync/check.js";
import { formatReport } from "./doc-sync/problem.js";

const HELP = `Usage: doc-sync [--write]

Checks docs/persistence.md, docs/*.md and README.md against the schema and the package:
type-equiv blocks are type-equal to the package's types, the manifest's blocks and regions exist,
generated regions equal what scripts/render-docs.ts renders, ts examples compile, and
generated/types.gen.ts matches the schema. Exit 1 when anything differs.
  --write   first rewrite the generated regions from the schema, then check
`;

/** The command-line entry: returns the exit code. */
async function main(argv: readonly string[]): Promise<number> {
  let values: { write?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { write: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    process.stderr.write(`doc-sync: ${(error as Error).message}\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const root = process.cwd();
  const options = { docsRoot: root, packageRoot: root };
  const started = performance.now();
  if (values.write) {
    for (const file of writeDocRegions(options)) {
      process.stdout.write(`doc-sync: rewrote the generated regions of ${file}\n`);
    }
  }
  const { problems, counts } = await runDocSync(options);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (problems.length > 0) {
    process.stderr.write(formatReport(problems));
    return 1;
  }
  process.stdout.write(
    `doc-sync: ${counts.documents} documents, ${counts.typeEquivBlocks} type-equiv blocks, ` +
      `${counts.examples} ts examples, ${counts.regions} generated regions in sync (${seconds} s)\n`,
  );
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
