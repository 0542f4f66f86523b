// Finds this package's root and version wherever the code runs from (src/ under tsx or vitest, dist/ when built).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

interface PackageInfo {
  readonly root: string;
  readonly version: string;
}

let cached: PackageInfo | undefined;

/**
 * The folder of the nearest package.json named "seedline" above this module, and its version.
 * @throws Error when there is none (a broken install).
 */
export function packageInfo(): PackageInfo {
  if (cached) return cached;
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const path = join(dir, "package.json");
    if (existsSync(path)) {
      const pkg = JSON.parse(readFileSync(path, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "seedline" && typeof pkg.version === "string") {
        cached = { root: dir, version: pkg.version };
        return cached;
      }
    }
    if (dirname(dir) === dir) {
      throw new Error(`expected seedline's package.json above ${import.meta.dirname}, found none`);
    }
  }
}
