// The README's quick start, spawned as written: the server's stdout carries protocol messages from its first byte on.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * The serve command of the README's quick start: the first `sh` line of the section that runs
 * `serve` (after an install step such as `npm ci && …`, which the test run has done already) —
 * the command the README gives a client to spawn. `npm start` names no `serve`: the README says
 * it is for a person at a terminal, since npm prints its banner on stdout first.
 */
function quickStartServe(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Quick start");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(([, b = ""]) =>
    b.split("\n"),
  );
  const line = lines.find((l) => / serve\b/.test(l.split("#")[0] ?? ""));
  if (line === undefined) throw new Error("expected a serve line in the README's quick start");
  const command = (line.split("#")[0] ?? "").split("&&").at(-1) ?? "";
  return command.trim().split(/\s+/);
}

describe("the README's quick start", () => {
  // When the quick start told clients to spawn `npm start`, the first line on stdout was npm's
  // banner ("> seedline@0.1.0 start"), not a protocol message: this test failed on it.
  it("spawns a server whose first byte on stdout is {", async () => {
    const [command, ...args] = quickStartServe();
    expect(command).toBe("node");
    // A folder of its own for the default store; dist/ is the repository's build.
    const dir = mkdtempSync(join(tmpdir(), "seedline-quick-start-"));
    dirs.push(dir);
    symlinkSync(join(ROOT, "dist"), join(dir, "dist"), "dir");
    const child = spawn(process.execPath, args, { cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
    const first = new Promise<string>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")));
      child.once("error", reject);
      child.once("exit", (code) =>
        reject(new Error(`expected a response, the server exited ${code}`)),
      );
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } })}\n`,
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/list", params: {} })}\n`,
    );
    try {
      const text = await first;
      expect(text[0]).toBe("{");
      expect(JSON.parse(text.split("\n")[0] ?? "")).toMatchObject({ jsonrpc: "2.0", id: 1 });
    } finally {
      child.stdin.end();
      child.kill();
    }
  });
});
