// The built `seedline` binary as a process: `serve` on stdio (end of input, signals) and `demo` end to end.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const MAIN = join(ROOT, "dist", "src", "cli", "main.js");

let temp: string;
beforeAll(() => {
  // test/global-setup.ts builds dist/ once for every end-to-end test.
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-demo-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ["NO_COLOR", "FORCE_COLOR", "SEEDLINE_STORE"]) {
    if (extra[name] === undefined) delete env[name];
  }
  return env;
}

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts `seedline serve`; `finish` resolves with its exit and output. */
function startServer(args: readonly string[]) {
  const child = spawn(process.execPath, [MAIN, "serve", ...args], { env: cleanEnv() });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
  /** Resolves with the first `count` lines of stdout. */
  const lines = async (count: number): Promise<string[]> => {
    for (let i = 0; i < 200; i++) {
      const got = stdout.split("\n").filter((l) => l !== "");
      if (got.length >= count) return got;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`expected ${count} lines from the server, got: ${stdout}`);
  };
  return { child, exited, lines };
}

const request = (id: number, method: string, params: object) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

describe("seedline serve", () => {
  it("answers requests on stdout only and exits 0 when stdin ends", async () => {
    const store = `jsonl:${join(temp, "serve-eof")}`;
    const server = startServer(["--store", store]);
    server.child.stdin.write(request(1, "initialize", { protocolVersion: 1 }));
    server.child.stdin.write(request(2, "session/create", { sessionId: "s1", cwd: temp }));
    server.child.stdin.end(request(3, "session/list", {}));
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    const answers = exit.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { id: number; result?: Record<string, unknown> });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    expect(answers.find((a) => a.id === 1)?.result).toMatchObject({
      agentInfo: { name: "seedline" },
      agentCapabilities: { _meta: { seedline: { store: "jsonl" } } },
    });
    expect(answers.find((a) => a.id === 2)?.result).toMatchObject({ sessionId: "s1" });
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "finishes and exits 0 on %s while stdin is still open",
    async (signal) => {
      const server = startServer(["--store", `sqlite:${join(temp, `serve-${signal}.db`)}`]);
      server.child.stdin.write(request(1, "session/list", {}));
      await server.lines(1);
      server.child.kill(signal);
      const exit = await server.exited;
      expect(exit.code).toBe(0);
      expect(JSON.parse(exit.stdout.split("\n")[0] as string)).toMatchObject({
        id: 1,
        result: { sessions: [] },
      });
    },
  );

  it("speaks Content-Length framing when asked", async () => {
    const server = startServer(["--store", "memory:", "--framing", "content-length"]);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "session/list", params: {} });
    server.child.stdin.end(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/^Content-Length: \d+\r\n\r\n\{"jsonrpc":"2.0","id":7,"result":/);
  });
});

describe("seedline demo", () => {
  it.each(["sqlite", "jsonl"])(
    "records, forks and replays through a spawned server on a %s store, then removes it",
    (backend) => {
      const run = spawnSync(process.execPath, [MAIN, "demo", "--backend", backend], {
        env: cleanEnv(),
        encoding: "utf8",
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const out = run.stdout;
      expect(out).toMatch(new RegExp(`^store: ${backend}:(.+) \\(temporary\\)$`, "m"));
      expect(out).toMatch(/→ session\/create /);
      expect(out).toMatch(/✓ created session demo$/m);
      expect(out).toMatch(/✓ appended 19 events to demo .*next seq 19$/m);
      expect(out).toMatch(/→ session\/fork \{"sessionId":"demo","boundary":33,/);
      expect(out).toMatch(/✓ forked demo at seq 33 into demo-fork \(34 inherited events/);
      expect(out).toMatch(/✓ appended \d+ events to demo-fork/);
      expect(out).toMatch(
        /✓ script of demo-fork: 2 model calls, derived after its 34 inherited events/,
      );
      expect(out.match(/✓ served replay entry \d+ of demo to /g)).toHaveLength(3);
      expect(out.match(/✓ served replay entry \d+ of demo-fork to /g)).toHaveLength(2);
      expect(out).toMatch(/← error REPLAY_EXHAUSTED: /);
      expect(out).toMatch(/✓ replay entries served: 5$/m);
      const dir = /^removed the temporary store (.+)$/m.exec(out)?.[1];
      expect(dir).toBeDefined();
      expect(existsSync(dir as string)).toBe(false);
      expect(out).not.toContain("\u001b[");
    },
  );
});
