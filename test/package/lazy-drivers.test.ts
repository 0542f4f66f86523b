// The built package loads its database drivers late: `import "seedline"` loads neither pg nor better-sqlite3, a store of their kind does.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const ENTRY = pathToFileURL(join(ROOT, "dist", "src", "index.js")).href;

const dir = mkdtempSync(join(tmpdir(), "seedline-lazy-drivers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a process has loaded of the drivers: their packages' modules, and the native SQLite library. */
interface Loaded {
  readonly packages: string[];
  readonly native: boolean;
}

/**
 * Runs `steps` (the body of an async function given the package as `seedline` and a folder as
 * `dir`) in a fresh Node process that imports the built package, and returns what it had loaded
 * of the drivers after the import and after each `await mark()` in `steps`. Both ways a module can
 * be loaded are looked at: the CommonJS cache (which every `import` of a CommonJS package such as
 * pg or better-sqlite3 goes through) and the shared libraries of the process (the native addon).
 */
function loadedAlong(steps: string): Loaded[] {
  const script = `
    const drivers = /[\\\\/]node_modules[\\\\/](pg|pg-pool|better-sqlite3)[\\\\/]/;
    const seen = [];
    const mark = () => {
      const packages = new Set();
      for (const path of Object.keys(require.cache)) {
        const match = drivers.exec(path);
        if (match !== null) packages.add(match[1]);
      }
      const native = process.report.getReport().sharedObjects.some((o) => o.endsWith("better_sqlite3.node"));
      seen.push({ packages: [...packages].sort(), native });
    };
    const [entry, dir] = process.argv.slice(1);
    import(entry)
      .then(async (seedline) => {
        mark();
        ${steps}
      })
      .then(() => console.log(JSON.stringify(seen)), (error) => { console.error(error); process.exit(1); });
  `;
  const run = spawnSync(process.execPath, ["-e", script, ENTRY, dir], {
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as Loaded[];
}

const NOTHING: Loaded = { packages: [], native: false };

describe("the package's drivers", () => {
  // Seen failing (all three cases) before the backends loaded late: the import alone loaded pg,
  // pg-pool, better-sqlite3 and its native library, through src/index.ts and open-backend.ts.
  it("are not loaded by importing the package, nor by memory and JSONL stores that were not written", () => {
    const seen = loadedAlong(`
      const memory = new seedline.SessionStore();
      await memory.create({ id: "m" });
      await memory.close();
      const files = new seedline.SessionStore({ backend: await seedline.openBackend("jsonl:" + dir + "/logs") });
      await files.list();
      await files.close();
      mark();
    `);
    expect(seen).toEqual([NOTHING, NOTHING]);
  });

  it("load better-sqlite3 when a SQLite store is opened, and pg still not", () => {
    const seen = loadedAlong(`
      const store = new seedline.SessionStore({ backend: await seedline.openBackend("sqlite:" + dir + "/a.db") });
      mark();
      await store.create({ id: "s" });
      await store.close();
      const backend = await seedline.SqliteBackend.open(dir + "/b.db");
      await backend.close();
      mark();
    `);
    const sqlite: Loaded = { packages: ["better-sqlite3"], native: true };
    expect(seen).toEqual([NOTHING, sqlite, sqlite]);
  });

  // No server is needed: pg is loaded to connect, and the refused connection is the answer.
  it("load pg when a PostgreSQL store is opened, and better-sqlite3 still not", () => {
    const seen = loadedAlong(`
      const answer = await seedline.openBackend("postgres://nobody@127.0.0.1:1/none?connect_timeout=5").then(
        () => "opened",
        (error) => error.code,
      );
      if (answer !== "STORAGE_UNAVAILABLE") throw new Error("expected STORAGE_UNAVAILABLE, got " + answer);
      mark();
    `);
    expect(seen[0]).toEqual(NOTHING);
    expect(seen[1]?.packages).toEqual(["pg", "pg-pool"]);
    expect(seen[1]?.native).toBe(false);
  });
});
