// examples/python/record_turn.py against the real built server: what it prints, and the log it leaves in the store.
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkLogText } from "../../src/cli/validate-log.js";
import { deriveReplayScript, openBackend, SessionStore } from "../../src/index.js";
import { ROOT, tempDir } from "../helpers/rpc-fixtures.js";

const SCRIPT = join(ROOT, "examples", "python", "record_turn.py");
const SERVER = join(ROOT, "dist", "src", "cli", "main.js");

function pythonVersion(): string | undefined {
  try {
    return execFileSync("python3", ["--version"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}
const PYTHON = pythonVersion();

const temp = tempDir("seedline-python-example-");
afterAll(() => temp.remove());

describe.skipIf(PYTHON === undefined)("examples/python/record_turn.py (needs python3)", () => {
  it.each([
    ["SQLite", `sqlite:${temp.dir}/example.db`],
    ["JSONL", `jsonl:${temp.dir}/example-jsonl`],
  ])(
    "records a tool-call turn into a %s store that reads back valid and replayable",
    async (_name, store) => {
      const run = spawnSync("python3", [SCRIPT, "--store", store, "--server", SERVER], {
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout.split("\n")).toEqual([
        'pending tool calls: ["call-1 word_count"]',
        "recorded turn 1: nextSeq=17",
        "refused: RECORD_REFUSED expected an open turn (turn_start first)",
        "events: turn/start user/message step/start assistant/chunk assistant/chunk assistant/chunk " +
          "assistant/chunk assistant/message tool/call tool/result step/end step/start " +
          "assistant/chunk assistant/chunk assistant/message step/end turn/end",
        "messages: user assistant user assistant",
        "replay entries: chunks chunks",
        "",
      ]);

      const sessions = new SessionStore({ backend: await openBackend(store) });
      try {
        const text = await sessions.exportLog("python-example");
        expect(checkLogText(text, "python-example.jsonl").problems).toEqual([]);
        const events = await sessions.readEvents("python-example");
        expect(events).toHaveLength(17);
        expect(events[7]).toMatchObject({
          type: "assistant/message",
          sourceEventSeqs: [3, 4, 5, 6],
          data: {
            content: [
              { type: "text", text: "Let me count." },
              { type: "tool-call", id: "call-1", name: "word_count" },
            ],
            usage: { inputTokens: 21, outputTokens: 9 },
          },
        });
        expect(events[9]).toMatchObject({
          type: "tool/result",
          sourceEventSeqs: [8],
          data: { callId: "call-1", content: [{ type: "text", text: "4" }], isError: false },
        });
        expect(deriveReplayScript(events).map((e) => e.kind)).toEqual(["chunks", "chunks"]);
      } finally {
        await sessions.close();
      }
    },
  );
});
