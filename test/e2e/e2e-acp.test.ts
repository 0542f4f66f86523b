// Drives the built server with the official Agent Client Protocol SDK: its own method names and shapes, unchanged.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, describe, expect, it } from "vitest";
import { balancedLog } from "../helpers/builders.js";
import { STDIO_MAIN, spawnedClient, tempDir } from "../helpers/rpc-fixtures.js";

const temp = tempDir("seedline-acp-");
afterAll(() => temp.remove());

/** Runs `op` as an ACP client of a fresh built server on `store`, then ends the server's input. */
async function asAcpClient<T>(store: string, op: (agent: acp.ClientContext) => Promise<T>) {
  const child = spawn(process.execPath, [STDIO_MAIN, "--store", store], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  try {
    return await acp.client({ name: "seedline-e2e" }).connectWith(stream, op);
  } finally {
    child.stdin.end();
    expect(await exited).toBe(0);
  }
}

describe("an ACP client (the official SDK)", () => {
  it("initializes, lists and forks sessions with ACP's own methods and shapes", async () => {
    const store = `sqlite:${temp.dir}/acp.db`;
    // A recorded session with a cwd, stored through seedline's own client first.
    const seeded = spawnedClient(store, "ndjson").client;
    const log = balancedLog(2);
    await seeded.sessionCreate({ sessionId: "recorded", cwd: "/work/project", seed: log });
    await seeded.sessionCreate({ sessionId: "no-cwd", seed: log });
    await seeded.close();

    const seen = await asAcpClient(store, async (agent) => {
      const init = await agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        clientInfo: { name: "seedline-e2e", version: "1.0.0" },
      });
      const created = await agent.request(acp.methods.agent.session.new, {
        cwd: "/work/project",
        mcpServers: [],
      });
      const listed = await agent.request(acp.methods.agent.session.list, { cwd: "/work/project" });
      const fork = await agent.request(acp.methods.agent.session.fork, {
        sessionId: "recorded",
        cwd: "/work/fork",
        mcpServers: [],
      });
      const afterFork = await agent.request(acp.methods.agent.session.list, {});
      return { init, created, listed, fork, afterFork };
    });

    expect(seen.init).toMatchObject({
      protocolVersion: 1,
      agentInfo: { name: "seedline" },
      agentCapabilities: {
        loadSession: true,
        sessionCapabilities: { list: {}, fork: {}, delete: {} },
        _meta: { seedline: { store: "sqlite", formatVersion: 0 } },
      },
    });
    expect(seen.created.sessionId).toEqual(expect.any(String));
    // The new session is stored at once, so it is listed (newest first, no events yet).
    expect(seen.listed.sessions.map((s) => s.sessionId)).toEqual([
      seen.created.sessionId,
      "recorded",
    ]);
    expect(seen.listed.sessions[0]).toMatchObject({ cwd: "/work/project", eventCount: 0 });
    const listed = seen.listed.sessions[1];
    expect(listed?.cwd).toBe("/work/project");
    expect(listed?.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(seen.fork.sessionId).toEqual(expect.any(String));
    const child = seen.afterFork.sessions.find((s) => s.sessionId === seen.fork.sessionId);
    expect(child?.cwd).toBe("/work/fork");
    // A session stored without a cwd is listed too (ACP clients that require cwd cannot use it).
    expect(seen.afterFork.sessions.map((s) => s.sessionId)).toEqual(
      expect.arrayContaining(["recorded", "no-cwd", seen.fork.sessionId]),
    );

    const check = spawnedClient(store, "ndjson").client;
    const forked = await check.sessionRead({ sessionId: seen.fork.sessionId });
    expect(forked.header).toMatchObject({ parentSession: "recorded", seedLength: log.length });
    expect(forked.events).toEqual(log);
    await check.close();
  });

  it("gets ACP's resource-not-found code for an unknown session", async () => {
    const error = await asAcpClient(`jsonl:${temp.dir}/acp-missing`, (agent) =>
      agent
        .request(acp.methods.agent.session.fork, { sessionId: "nope", cwd: "/w", mcpServers: [] })
        .then(
          () => undefined,
          (e: unknown) => e,
        ),
    );
    expect(error).toMatchObject({
      code: -32002,
      data: { code: "SESSION_NOT_FOUND", sessionId: "nope" },
    });
  });
});
