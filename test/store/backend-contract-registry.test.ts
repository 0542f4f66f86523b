// The backend contract's own checks: valid events, distinct titles, skips by title that must name a case.
import { describe, expect, it } from "vitest";
import { interruptedTurnClosers, MemoryBackend, SessionStore } from "../../src/index.js";
import { balancedLog, closers, header, openTurn, TURN_LENGTH } from "../../src/testing/events.js";
import { defineBackendContract } from "../../src/testing/index.js";
import type { BackendContractOptions, ContractBody } from "../../src/testing/types.js";

/** Registers the contract with recording test functions: the titles it runs and skips. */
function register(options: Partial<BackendContractOptions> = {}) {
  const run: string[] = [];
  const skipped: string[] = [];
  const it = Object.assign((title: string, _body: ContractBody) => run.push(title), {
    skip: (title: string, _body: ContractBody) => skipped.push(title),
  });
  defineBackendContract(
    { describe: (_title, body) => body(), it },
    {
      name: "recorded",
      harness: async () => ({ open: async () => new MemoryBackend(), cleanup: async () => {} }),
      ...options,
    },
  );
  return { run, skipped };
}

describe("the backend contract", () => {
  it("builds events the store accepts, and closers equal to crash repair's", async () => {
    const store = new SessionStore({ backend: new MemoryBackend() });
    const open = [...balancedLog(2), ...openTurn(2 * TURN_LENGTH, 3)];
    await store.create({ id: "valid", seed: [...open, ...closers(2 * TURN_LENGTH, 3)] });
    expect(closers(2 * TURN_LENGTH, 3)).toEqual(interruptedTurnClosers(open));
    expect(header("h", { cwd: "/w" })).toMatchObject({ version: 0, id: "h", cwd: "/w" });
    await store.close();
  });

  it("registers every case under a title of its own", () => {
    const { run, skipped } = register({ corpus: [{ name: "a.jsonl", text: "" }] });
    expect(skipped).toEqual([]);
    expect(run.length).toBeGreaterThan(30);
    expect(new Set(run).size).toBe(run.length);
  });

  it("skips the cases a limit or the skip list names, with the reason in the title", () => {
    const title = "fork at boundary -1 stores a header-only child";
    const { run, skipped } = register({
      limits: { oneWriter: "one writer" },
      skip: { [title]: "a known bug" },
    });
    expect(skipped).toContain(`${title} — skipped: a known bug`);
    expect(skipped.filter((t) => t.endsWith("— skipped: one writer")).length).toBe(4);
    expect(run).not.toContain(title);
  });

  it("refuses a skip list title that names no case", () => {
    expect(() => register({ skip: { "no such case": "stale" } })).toThrow(/"no such case"/);
  });
});
