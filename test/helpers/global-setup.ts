// Vitest global setup: builds dist/ once (tsc -p tsconfig.build.json, then the viewer's bundle), so end-to-end tests spawn the real built server.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildViewer } from "../../scripts/build-viewer.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** The built files the end-to-end tests run (and the package entries they import). */
const REQUIRED = [
  "dist/src/rpc/stdio-main.js",
  "dist/src/index.js",
  "dist/src/testing/index.js",
  "dist/viewer/app.js",
];

export default async function setup(): Promise<void> {
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
      {
        cwd: ROOT,
        stdio: "pipe",
      },
    );
  } catch (error) {
    // tsc emits even when it reports type errors (which `npm run typecheck` catches); a build
    // that produced nothing the tests run is fatal.
    const output = String((error as { stdout?: unknown }).stdout ?? "");
    process.stderr.write(
      `global-setup: tsc -p tsconfig.build.json reported problems:\n${output}\n`,
    );
  }
  // The viewer's server serves dist/viewer; a stale bundle would test old browser code.
  await buildViewer();
  const missing = REQUIRED.filter((path) => !existsSync(join(ROOT, path)));
  if (missing.length > 0) throw new Error(`expected the build to produce ${missing.join(", ")}`);
}
