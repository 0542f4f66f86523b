// `seedline show` as a pure reader of a store another process writes: a log as stored (an open turn too), and --follow.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBackend, type SessionEvent, SessionStore } from "../../src/index.js";
import {
  assistantChunk,
  assistantMessage,
  simpleTurn,
  stepEnd,
  stepStart,
  text,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { type BackgroundRun, MAIN, startSeedline } from "../helpers/cli-harness.js";
import { cli } from "../helpers/cli-in-process.js";
import { openTurnTail } from "../helpers/store-builders.js";

let temp: string;
beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`expected the built CLI at ${MAIN}`);
  temp = mkdtempSync(join(tmpdir(), "seedline-cli-show-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

const NO_COLOR = { env: { NO_COLOR: "1" } };

/** A store of its own for one test, as a URL the CLI opens and a `SessionStore` this process writes with. */
async function freshStore(
  kind: string,
  name: string,
): Promise<{ url: string; store: SessionStore }> {
  const url = kind === "jsonl" ? `jsonl:${join(temp, name)}` : `sqlite:${join(temp, `${name}.db`)}`;
  return { url, store: new SessionStore({ backend: await openBackend(url) }) };
}

/**
 * Turn 2 as a model streams it, in the order a writer appends it: the turn and step open, three
 * text chunks, then the message, one tool call and its result, and the closers.
 */
function streamedTurn(from: number): {
  opening: SessionEvent[];
  chunks: SessionEvent[];
  rest: SessionEvent[];
} {
  let seq = from;
  const opening = [
    turnStart(seq++, 2),
    userMessage(seq++, "list the files"),
    stepStart(seq++, 2, 1),
  ];
  const pieces = ["Let me ", "look at\n", "the files."];
  const chunkSeqs: number[] = [];
  const chunks = pieces.map((piece) => {
    chunkSeqs.push(seq);
    return assistantChunk(seq++, 2, 1, { type: "text-delta", index: 0, text: piece });
  });
  const message = assistantMessage(
    seq++,
    2,
    1,
    [text(pieces.join("")), { type: "tool-call", id: "ls-1", name: "ls", arguments: "{}" }],
    { sourceEventSeqs: chunkSeqs },
  );
  const call = toolCall(seq++, 2, 1, "ls-1", "ls", '{"path":"."}');
  const rest = [
    message,
    call,
    toolResult(seq++, 2, 1, "ls-1", { output: "README.md", sourceEventSeqs: [call.seq] }),
    stepEnd(seq++, 2, 1),
    turnEnd(seq++, 2),
  ];
  return { opening, chunks, rest };
}

/** How many lines of `stdout` match `pattern`. */
function count(stdout: string, pattern: RegExp): number {
  return stdout.split("\n").filter((line) => pattern.test(line)).length;
}

describe.each(["jsonl", "sqlite"])(
  "seedline show over a %s store another process writes",
  (kind) => {
    it("shows a log that ends inside a turn as stored, with a line saying the turn is open, and changes nothing", async () => {
      const { url, store } = await freshStore(kind, `open-turn-${kind}`);
      const first = simpleTurn(0, 1);
      const tail = openTurnTail(first.length, 2);
      const session = await store.create({ id: "open-turn" });
      await session.append([...first, ...tail]);
      const last = (tail.at(-1) as SessionEvent).seq;
      // Closing lets go of the writer lock without closing the turn: a writer that died inside it.
      await store.close();
      const before = await cli(["export", "open-turn", "--store", url]);
      expect(before.status).toBe(0);

      const run = await cli(["show", "open-turn", "--store", url], NO_COLOR);
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const lines = run.stdout.trimEnd().split("\n");
      expect(lines.at(-1)).toBe(
        "turn 2 still open (in progress, or interrupted: the next writer closes it)",
      );
      expect(lines.at(-2)).toMatch(new RegExp(`^${last} +← bash ok$`));
      expect(run.stdout).not.toMatch(/turn 2 end/);
      const json = JSON.parse(
        (await cli(["show", "open-turn", "--json", "--store", url])).stdout,
      ) as {
        eventCount: number;
        openTurn?: number;
      };
      expect(json).toMatchObject({ eventCount: last + 1, openTurn: 2 });
      // On the old code `show` loaded the session the way a writer does: it took the writer lock and
      // stored the closers of the open turn (an interrupted result for the unanswered call, `step/end`,
      // `turn/end` interrupted), so its timeline ended with "turn 2 end · interrupted" instead of the
      // open-turn line, its JSON had no `openTurn`, and this export had three more lines.
      expect((await cli(["export", "open-turn", "--store", url])).stdout).toBe(before.stdout);
    });

    describe("--follow", () => {
      let store: SessionStore;
      let url: string;
      let follower: BackgroundRun | undefined;
      beforeAll(async () => {
        ({ url, store } = await freshStore(kind, `follow-${kind}`));
      });
      afterAll(async () => {
        follower?.child.kill("SIGKILL");
        await store.close();
      });

      it("prints each turn, step, streamed text, tool call and result as it lands, and exits 0 on SIGINT", async () => {
        const session = await store.create({ id: "followed" });
        const first = simpleTurn(0, 1, { toolCallsPerStep: 1 });
        await session.append(first);
        const run = startSeedline(["show", "followed", "--follow", "--store", url], NO_COLOR);
        follower = run;
        await run.waitFor("the timeline as stored", (out) => /turn 1 end · completed\n/.test(out));

        const { opening, chunks, rest } = streamedTurn(first.length);
        await session.append(opening);
        await run.waitFor("the new turn and step", (out) =>
          /turn 2 · .*\n.*\n +\d+ +step 1\n/.test(out),
        );
        // Each chunk is a write of its own; its text joins the step's streaming line as it lands.
        await session.append([chunks[0] as SessionEvent]);
        await run.waitFor("the first chunk's text", (out) => out.includes("streaming: Let me "));
        await session.append([chunks[1] as SessionEvent]);
        // A line break in streamed text is written once text follows it.
        await run.waitFor("the second chunk on the same line", (out) =>
          out.endsWith("streaming: Let me look at"),
        );
        await session.append([chunks[2] as SessionEvent]);
        await run.waitFor("the third chunk, continuing under the text", (out) =>
          /streaming: Let me look at\n +the files\.$/.test(out),
        );
        await session.append(rest);
        await run.waitFor("the turn's end", (out) => /turn 2 end · completed\n/.test(out));

        const out = run.stdout();
        const turn2 = out.slice(out.indexOf("turn 2 ·"));
        expect(turn2).toMatch(/^ +\d+ +user: list the files$/m);
        expect(turn2).toMatch(/^ +\d+ +assistant: Let me look at the files\. {2}\[1 tool call\]$/m);
        expect(turn2).toMatch(/^ +\d+ +→ ls \{"path":"\."\}$/m);
        expect(turn2).toMatch(/^ +\d+ +← ls README\.md$/m);
        // Nothing was printed twice: the watch starts where the timeline's read ended.
        expect(count(out, /turn 1 · /)).toBe(1);
        expect(count(out, /turn 2 · /)).toBe(1);
        expect(count(out, /streaming:/)).toBe(1);
        expect(out).not.toContain("\u001b[");

        run.child.kill("SIGINT");
        expect(await run.exited).toBe(0);
        expect(run.stderr()).toBe("");
        follower = undefined;
      });

      it("ends with a line saying the session was deleted, and exits 0", async () => {
        const session = await store.create({ id: "deleted" });
        await session.append(simpleTurn(0, 1));
        const run = startSeedline(["show", "deleted", "--follow", "--store", url], NO_COLOR);
        follower = run;
        await run.waitFor("the timeline as stored", (out) => /turn 1 end · completed\n/.test(out));
        await session.append(simpleTurn(session.nextSeq, 2));
        await run.waitFor("the new turn", (out) => /turn 2 end · completed\n/.test(out));
        await store.delete("deleted");
        expect(await run.exited).toBe(0);
        expect(run.stdout().trimEnd().split("\n").at(-1)).toBe("session deleted was deleted");
        expect(run.stderr()).toBe("");
        follower = undefined;
      });

      it("prints NDJSON with --json: the timeline on one line, then one row per line as it lands", async () => {
        const session = await store.create({ id: "as-json" });
        await session.append(simpleTurn(0, 1));
        const run = startSeedline(["show", "as-json", "--follow", "--json", "--store", url]);
        follower = run;
        await run.waitFor("the timeline object", (out) => out.includes("\n"));
        const from = session.nextSeq;
        const { opening, chunks, rest } = streamedTurn(from);
        await session.append([...opening, ...chunks, ...rest]);
        await run.waitFor("the turn's end row", (out) => /\n\{"kind":"turn-end"/.test(out));
        await store.delete("as-json");
        expect(await run.exited).toBe(0);
        const [timeline, ...rows] = run
          .stdout()
          .trimEnd()
          .split("\n")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        expect(timeline).toMatchObject({ eventCount: from, seedLength: 0 });
        expect(timeline).not.toHaveProperty("openTurn");
        expect(rows.map((r) => r.kind)).toEqual([
          "turn",
          "message",
          "step",
          "chunk",
          "chunk",
          "chunk",
          "message",
          "tool-call",
          "tool-result",
          "step-end",
          "turn-end",
          "deleted",
        ]);
        expect(rows.map((r) => r.seq)).toEqual([
          ...Array.from({ length: 11 }, (_, i) => from + i),
          undefined,
        ]);
        expect(rows[2]).toEqual({ kind: "step", seq: from + 2, turn: 2, step: 1 });
        expect(rows[4]).toEqual({
          kind: "chunk",
          seq: from + 4,
          turn: 2,
          step: 1,
          stream: "text",
          text: "look at\n",
        });
        expect(rows.at(-1)).toEqual({ kind: "deleted", sessionId: "as-json" });
        follower = undefined;
      });
    });
  },
);
