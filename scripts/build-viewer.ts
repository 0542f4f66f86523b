// `npm run build` step: bundles the viewer's browser app (src/viewer/app) into dist/viewer/{index.html,app.js,app.css}.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = join(import.meta.dirname, "..");
const APP = join(ROOT, "src", "viewer", "app");

/** Where the bundle goes: the server serves it from `<package root>/dist/viewer/`. */
export const VIEWER_DIST = join(ROOT, "dist", "viewer");

/** The files a built viewer holds, relative to {@link VIEWER_DIST}. */
export const VIEWER_FILES = ["index.html", "app.js", "app.css"] as const;

/**
 * Bundles `src/viewer/app/main.ts` (with the CSS it imports) into `outDir` as one minified script
 * and one style sheet, no source maps (they would ship in the package), and copies `index.html`.
 * The script is an IIFE, not a module, so that the HTML export can inline it in a plain `<script>`;
 * esbuild escapes `</script` inside its strings, so inlining cannot end the element early.
 * @throws Error when esbuild reports an error (a type error is `npm run typecheck`'s to report).
 */
export async function buildViewer(outDir: string = VIEWER_DIST): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(APP, "main.ts") },
    outdir: outDir,
    bundle: true,
    minify: true,
    format: "iife",
    platform: "browser",
    target: ["chrome110", "firefox115", "safari16"],
    sourcemap: false,
    legalComments: "none",
    logLevel: "silent",
    metafile: false,
  });
  if (result.errors.length > 0) {
    throw new Error(`expected the viewer app to build, got ${result.errors.length} errors`);
  }
  copyFileSync(join(APP, "index.html"), join(outDir, "index.html"));
  const html = readFileSync(join(outDir, "index.html"), "utf8");
  for (const asset of ["/assets/app.js", "/assets/app.css", '<div id="app">']) {
    if (!html.includes(asset)) throw new Error(`expected index.html to hold ${asset}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await buildViewer();
}
