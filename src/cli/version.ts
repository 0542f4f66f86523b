// The package's version, read from its package.json wherever the CLI runs from (src/ under tsx, dist/ when built).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The `version` of the nearest package.json named "seedline" above this module. */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "seedline" && typeof pkg.version === "string") return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error("expected seedline's package.json above the CLI, found none");
    dir = parent;
  }
}
