// The packed tarball as a user installs it: strict type-checks of a consumer project, then the SDK and the binary run from it.
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

/** The consumer's code: a SQLite store, a session, one turn appended and read back, a typed error. */
const CONSUMER_SOURCE = `
import { errorCode, hasCode, openBackend, SessionStore, validateSessionEvent, type SessionEvent } from "seedline";
import { join } from "node:path";

const dir = process.argv[2];
if (dir === undefined) throw new Error("expected a folder argument");
const store = new SessionStore({ backend: await openBackend("sqlite:" + join(dir, "sessions.db")) });
const session = await store.create({ id: "consumer", meta: { cwd: "/work" } });
const turn: SessionEvent[] = [
  { type: "turn/start", seq: 0, time: 1, data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } } } },
  {
    type: "user/message",
    seq: 1,
    time: 2,
    data: { content: [{ type: "text", text: "hello" }], source: { kind: "user" } },
    surfaceOp: "append",
  },
  { type: "turn/end", seq: 2, time: 3, data: { turn: 1, reason: { kind: "completed" } } },
];
await session.append(turn);
const back = await session.readEvents();
if (!back.every((e) => validateSessionEvent(e))) throw new Error("expected stored events to validate");
let code = "none";
try {
  await store.create({ id: "consumer" });
} catch (error) {
  // hasCode narrows to an SDK error or the client's RpcResponseError (whose code member is the
  // JSON-RPC number); errorCode reads the string code of either.
  if (hasCode(error, "SESSION_ALREADY_EXISTS")) code = errorCode(error) ?? "none";
}
await store.close();
console.log(JSON.stringify({ events: back.length, types: back.map((e) => e.type), code }));
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    skipLibCheck: false,
    types: ["node"],
    outDir: "out",
  },
  include: ["main.ts"],
};

let dir = "";
let packed: { files: { path: string }[]; unpackedSize: number }[] = [];

/** Links a package of the repository's node_modules into the consumer's (no network at test time). */
function linkPackage(name: string): void {
  const target = join(dir, "node_modules", name);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", name), target, "dir");
}

function run(command: string, args: readonly string[], options: { input?: string } = {}) {
  return spawnSync(command, args, {
    cwd: dir,
    encoding: "utf8",
    timeout: 120_000,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

let typeScript5: ReturnType<typeof run> | undefined;
/** The consumer compiled into out/ by TypeScript 5 (`tsc -p tsconfig.json`), once for the file. */
function compileWithTypeScript5(): ReturnType<typeof run> {
  typeScript5 ??= run(join(ROOT, "node_modules", "typescript-5", "bin", "tsc"), [
    "-p",
    "tsconfig.json",
  ]);
  return typeScript5;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "seedline-consumer-pkg-"));
  // --ignore-scripts: the global setup built dist/ already; pack it as it is.
  const pack = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], {
    cwd: ROOT,
    encoding: "utf8",
  });
  expect(pack.status, pack.stderr).toBe(0);
  packed = JSON.parse(pack.stdout);
  const tarball = join(dir, (packed[0] as unknown as { filename: string }).filename);
  mkdirSync(join(dir, "node_modules"));
  const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", join(dir, "node_modules")]);
  expect(unpacked.status).toBe(0);
  renameSync(join(dir, "node_modules", "package"), join(dir, "node_modules", "seedline"));
  // The runtime dependencies only: json-schema-to-typescript (a devDependency) stays out.
  for (const name of Object.keys(PKG.dependencies)) linkPackage(name);
  linkPackage("@types/node");
  writeFileSync(join(dir, "package.json"), '{ "name": "consumer", "type": "module" }\n');
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(dir, "main.ts"), CONSUMER_SOURCE);
});

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("the packed package", () => {
  // Seen failing after `npm run bench`, which compiles the benchmarks into dist/scripts/bench,
  // until package.json's files left that folder (and doc-sync's) out.
  it("holds what users run and nothing of scripts' benchmark or doc-sync", () => {
    const paths = packed[0]?.files.map((f) => f.path) ?? [];
    expect(paths).toContain("dist/src/index.js");
    expect(paths).toContain("dist/src/index.d.ts");
    expect(paths).toContain("dist/scripts/pipeline.js");
    expect(paths.filter((p) => /^dist\/scripts\/(bench|doc-sync)\//.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith(".map"))).toEqual([]);
    expect(existsSync(join(dir, "node_modules", "json-schema-to-typescript"))).toBe(false);
  });

  // Before the fix, dist/generated/validators.gen.d.ts alone gave 144 errors here (parentData…).
  // A full compiler over the package's declarations takes a while on a small machine: 240 s each.
  // Under TypeScript 5 the check is the compile whose out/main.js the ESM test runs (emitting
  // checks every type the --noEmit run checks): one run of the slow compiler for both tests.
  it.each([
    ["TypeScript 5", compileWithTypeScript5],
    [
      "TypeScript 7",
      () => run(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json", "--noEmit"]),
    ],
  ])(
    "type-checks a strict consumer with skipLibCheck off under %s",
    (_name, typeCheck) => {
      const result = typeCheck();
      expect(`${result.stdout}${result.stderr}`).toBe("");
      expect(result.status).toBe(0);
    },
    240_000,
  );

  it("runs under Node's ESM loader: a SQLite store, a turn appended and read back", () => {
    const compiled = compileWithTypeScript5();
    expect(compiled.status, compiled.stdout).toBe(0);
    const result = run(process.execPath, [join("out", "main.js"), dir]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({
      events: 3,
      types: ["turn/start", "user/message", "turn/end"],
      code: "SESSION_ALREADY_EXISTS",
    });
  }, 240_000);

  it("exports no __validate* internals at run time", () => {
    const result = run(process.execPath, [
      "--input-type=module",
      "-e",
      'const m = await import("seedline"); console.log(JSON.stringify(Object.keys(m)));',
    ]);
    const names = JSON.parse(result.stdout) as string[];
    expect(names).toContain("validateSessionEvent");
    expect(names.filter((n) => n.startsWith("__"))).toEqual([]);
  });

  // pg is an optional peer dependency, not installed here: every other store opens without it (the
  // SQLite case above), and a PostgreSQL store says what to install. Seen failing with Node's own
  // ERR_MODULE_NOT_FOUND before PostgresBackend.open named the missing package.
  it("opens a PostgreSQL store only with pg installed, and says how to install it", () => {
    expect(existsSync(join(dir, "node_modules", "pg"))).toBe(false);
    const result = run(process.execPath, [
      "--input-type=module",
      "-e",
      `import { openBackend } from "seedline";
      const error = await openBackend("postgres://agent:secret@127.0.0.1:1/db").then(() => undefined, (e) => e);
      console.log(JSON.stringify({ code: error?.code, message: error?.message, details: error?.details }));`,
    ]);
    expect(result.stderr).toBe("");
    const answer = JSON.parse(result.stdout) as { code: string; message: string; details: object };
    expect(answer.code).toBe("STORAGE_UNAVAILABLE");
    expect(answer.message).toContain("run `npm install pg`");
    expect(answer.message).not.toContain("secret");
    expect(answer.details).toEqual({
      location: "postgres://agent@127.0.0.1:1/db",
      commitUnknown: false,
    });
  });

  it("serves from the binary without the generator installed", () => {
    const bin = join(dir, "node_modules", "seedline", "dist", "src", "cli", "main.js");
    const request = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} })}\n`;
    const result = run(process.execPath, [bin, "serve", "--store", `jsonl:${join(dir, "logs")}`], {
      input: request,
    });
    expect(result.stdout.startsWith("{")).toBe(true);
    const answer = JSON.parse(result.stdout.split("\n")[0] ?? "") as { id: number; result: object };
    expect(answer).toMatchObject({ id: 1, result: { sessions: [] } });
  });

  // The viewer finds its built app under the installed package's root (dist/viewer, in `files`).
  it("serves the viewer's app from the installed package", async () => {
    const bin = join(dir, "node_modules", "seedline", "dist", "src", "cli", "main.js");
    const store = `sqlite:${join(dir, "viewer.db")}`;
    expect(
      run(process.execPath, [bin, "import", "-", "--store", store], {
        input: '{"type":"session","version":0,"id":"viewer-consumer","createdAt":0}\n',
      }).status,
    ).toBe(0);
    const ui = spawn(process.execPath, [bin, "ui", "--store", store], { cwd: dir });
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let out = "";
        ui.stdout.setEncoding("utf8").on("data", (text: string) => {
          out += text;
          if (out.includes("\n")) resolve(out.replace("seedline ui: ", "").trim());
        });
        ui.on("close", (status) => reject(new Error(`expected the address, ui exited ${status}`)));
      });
      const url = new URL(address);
      const js = await fetch(`${url.origin}/assets/app.js${url.search}`);
      expect(js.status).toBe(200);
      expect((await js.text()).length).toBeGreaterThan(1000);
    } finally {
      ui.kill("SIGTERM");
    }
  });

  it("tells the user to install json-schema-to-typescript when generate needs it", () => {
    const bin = join(dir, "node_modules", "seedline", "dist", "src", "cli", "main.js");
    const schema = join(dir, "node_modules", "seedline", "schema");
    const result = run(process.execPath, [bin, "generate", "--schema", schema, "--out", "gen"]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("GENERATOR_MISSING");
    expect(result.stderr).toContain("npm install --save-dev json-schema-to-typescript");
  });
});
