// The viewer's built front end (dist/viewer under the package root): found once, read for each response.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageInfo } from "../../rpc/package-info.js";

/** The files `npm run build` writes to dist/viewer, which the server and the HTML export need. */
export const ASSET_FILES = ["index.html", "app.js", "app.css"] as const;

/** One of the built files. */
export type AssetFile = (typeof ASSET_FILES)[number];

/** The built front end's texts. */
export type ViewerAssets = Readonly<Record<AssetFile, string>>;

/** A viewer asked for before its front end was built. */
export class AssetsMissingError extends Error {
  override readonly name = "AssetsMissingError";
}

/** The folder the built front end lives in: `<package root>/dist/viewer`. */
export function assetsDir(): string {
  return join(packageInfo().root, "dist", "viewer");
}

/**
 * The built front end, read from `dir` (default {@link assetsDir}).
 * @throws AssetsMissingError naming the missing files: "viewer assets not built: run npm run build".
 */
export function readAssets(dir: string = assetsDir()): ViewerAssets {
  const missing = ASSET_FILES.filter((file) => !existsSync(join(dir, file)));
  if (missing.length > 0) {
    throw new AssetsMissingError(
      `viewer assets not built: run npm run build (expected ${missing.join(", ")} in ${dir})`,
    );
  }
  const read = (file: AssetFile) => readFileSync(join(dir, file), "utf8");
  return { "index.html": read("index.html"), "app.js": read("app.js"), "app.css": read("app.css") };
}
