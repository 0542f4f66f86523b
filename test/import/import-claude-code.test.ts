// Claude Code transcripts as seedline sessions: every real transcript mapped and checked against counts read from its raw lines and against the log rules; branches, sidechains, prefixes, and the lines no event expresses.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { mapClaudeCodeTranscript } from "../../src/import/claude-code.js";
import { detectTranscriptFormat } from "../../src/import/detect.js";
import type { MappedTranscript } from "../../src/import/transcript.js";
import {
  CLAUDE_CODE_FIXTURES,
  checkMapped,
  claudeCodeTranscripts,
  HAVE_CLAUDE_CODE_FIXTURES,
  lineEnds,
  mappedCounts,
  rawCounts,
} from "../helpers/import-claude-code-harness.js";

const SKIP = `(skipped: ${CLAUDE_CODE_FIXTURES} is absent)`;
if (!HAVE_CLAUDE_CODE_FIXTURES) console.log(`import-claude-code: real transcripts ${SKIP}`);
const transcripts = HAVE_CLAUDE_CODE_FIXTURES ? claudeCodeTranscripts() : [];

function fixture(name: string) {
  const found = transcripts.find((t) => t.name === name);
  if (found === undefined) throw new Error(`expected the fixture ${name}`);
  return { ...found, mapped: mapClaudeCodeTranscript(found.text, { path: found.path }) };
}

function foreignLines(mapped: MappedTranscript): Set<number> {
  const lines = new Set<number>();
  for (const session of mapped.sessions) {
    for (const e of session.events) if (e.type === "foreign/record") lines.add(e.data.line);
  }
  return lines;
}

describe.skipIf(!HAVE_CLAUDE_CODE_FIXTURES)(
  `every real Claude Code transcript ${HAVE_CLAUDE_CODE_FIXTURES ? "" : SKIP}`,
  () => {
    it("finds the sixteen transcripts SOURCES.md lists, each told as Claude Code's", () => {
      expect(transcripts).toHaveLength(16);
      for (const { name, text } of transcripts) {
        expect(detectTranscriptFormat(text), name).toBe("claude-code");
      }
    });

    for (const { name, path, text } of transcripts) {
      describe(name, () => {
        const mapped = mapClaudeCodeTranscript(text, { path });

        it("holds the prompts, answers, tool calls and results, reasoning, children and branches the file holds", () => {
          expect(mappedCounts(mapped)).toEqual(rawCounts(text));
        });

        it("gives sessions that pass seedline validate", () => {
          for (const session of mapped.sessions) {
            expect(checkMapped(session), session.header.id).toEqual([]);
          }
        });

        it("counts every line once, and keeps each line it does not map as a foreign record", () => {
          const nonBlank = text.split("\n").filter((l) => l.trim() !== "").length;
          const { mapped: m, verbatim, refused } = mapped.counts;
          expect(m + verbatim + refused).toBe(nonBlank);
          const kept = foreignLines(mapped);
          for (const problem of mapped.problems) {
            if (problem.outcome === "verbatim")
              expect(kept.has(problem.line), `line ${problem.line}`).toBe(true);
            else expect(kept.has(problem.line), `line ${problem.line}`).toBe(false);
          }
        });

        it("gives the events of any shorter version of the file as a prefix of its own", () => {
          const ends = lineEnds(text);
          const every = Math.max(1, Math.floor(ends.length / 12));
          const full = new Map(mapped.sessions.map((s) => [s.header.id, s]));
          for (let i = 0; i < ends.length; i += every) {
            // Cut after a line, and inside the next one (a line the tool is still writing).
            for (const cut of [ends[i] as number, (ends[i] as number) + 7]) {
              let shorter: MappedTranscript;
              try {
                shorter = mapClaudeCodeTranscript(text.slice(0, cut), { path });
              } catch {
                continue; // a start with no line naming the session yet (a snapshot alone)
              }
              expect(shorter.consumed).toBeLessThanOrEqual(cut);
              for (const session of shorter.sessions) {
                const longer = full.get(session.header.id);
                expect(longer, `${session.header.id} at ${cut}`).toBeDefined();
                expect(longer?.header.parentSession).toBe(session.header.parentSession);
                expect(longer?.header.seedLength).toBe(session.header.seedLength);
                expect(longer?.events.slice(0, session.events.length)).toEqual(session.events);
              }
            }
          }
        });
      });
    }

    it("cuts a file with checkpoint rewinds into the main line and a fork per later branch", () => {
      const { mapped } = fixture("kfischer/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");
      const [main, second, third] = mapped.sessions;
      const id = "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260";
      expect(mapped.sessions.map((s) => s.header.id)).toEqual([
        id,
        `${id}.branch-2`,
        `${id}.branch-3`,
      ]);
      // Three prompts continue from line 26 (the answer of turn 3): the first in file order stays
      // the main line; each later one forks it there, inheriting everything through that line.
      for (const fork of [second, third]) {
        expect(fork?.header.parentSession).toBe(id);
        const seed = fork?.header.seedLength as number;
        expect(fork?.events.slice(0, seed)).toEqual(main?.events.slice(0, seed));
        expect(main?.events[seed - 1]).toMatchObject({
          type: "assistant/message",
          data: { turn: 3 },
        });
      }
      const prompts = (events: readonly SessionEvent[] | undefined) =>
        (events ?? [])
          .filter((e) => e.type === "user/message")
          .map((e) =>
            e.type === "user/message" && e.data.content[0]?.type === "text"
              ? e.data.content[0].text.slice(0, 24)
              : "",
          );
      expect(prompts(main?.events).slice(3)).toEqual(["Ok make another addition"]);
      expect(prompts(second?.events).slice(3)).toEqual(["Ok I came from the futur"]);
      expect(prompts(third?.events).slice(3)).toEqual([
        "Ok in the future some ne",
        "Hi",
        "Ok ultrathink and come u",
        "Ok ultrathink and try ag",
      ]);
      // The summary names the leaf of the last branch: that fork is titled by it.
      expect(third?.title).toBe("Test file creation and agent thread handling");
      expect(main?.title).toBeUndefined();
    });

    it("makes subagent files and inline sidechains children of the session that ran them", () => {
      const agent = fixture(
        "spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl",
      ).mapped.sessions;
      expect(agent.map((s) => [s.header.id, s.header.parentSession])).toEqual([
        [
          "claude-code-258c7280-ae70-4798-800f-63464d01a85d.agent-a881341",
          "claude-code-258c7280-ae70-4798-800f-63464d01a85d",
        ],
      ]);
      const inline = fixture(
        "claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
      ).mapped;
      const main = "claude-code-fe5e1c67-53e7-4862-81ae-d0e013e3270b";
      expect(inline.sessions.map((s) => s.header.id)).toEqual([
        main,
        ...[1, 2, 3, 4, 5].map((n) => `${main}.sidechain-${n}`),
      ]);
      for (const child of inline.sessions.slice(1)) expect(child.header.parentSession).toBe(main);
    });

    it("ends a turn the user interrupted as aborted, and one after failed calls as completed once answered", () => {
      const { mapped } = fixture("session-share/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl");
      const [main, fork] = mapped.sessions;
      const failed = (main?.events ?? []).filter(
        (e) => e.type === "step/end" && e.data.response?.error !== undefined,
      );
      // Nine api_error lines (eight retries before an answer, one more later).
      expect(failed).toHaveLength(9);
      expect(fork?.events.at(-1)).toMatchObject({
        type: "turn/end",
        data: { reason: { kind: "aborted", reason: "[Request interrupted by user]" } },
      });
    });

    it("maps a compaction to a summary that replaces the whole surface", () => {
      const { mapped } = fixture("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
      const events = mapped.sessions[0]?.events ?? [];
      const start = events.findIndex((e) => e.type === "compact/start");
      expect(events.slice(start, start + 4).map((e) => e.type)).toEqual([
        "compact/start",
        "compact/summary",
        "context/message",
        "compact/end",
      ]);
      const summary = events[start + 1];
      const replacing = events[start + 2];
      expect(summary?.type === "compact/summary" && summary.data.shadowedTokenCount).toBe(167094);
      expect(replacing && "surfaceOp" in replacing && replacing.surfaceOp).toMatchObject({
        op: "replace",
      });
    });

    it("names pasted images in the message and keeps their line whole", () => {
      const { mapped } = fixture("session-share/images-in-user-messages.jsonl");
      const first = mapped.sessions[0]?.events ?? [];
      const prompt = first.find((e) => e.type === "user/message");
      expect(
        prompt?.type === "user/message" &&
          prompt.data.content.map((b) => b.type === "text" && b.text.slice(0, 24)),
      ).toEqual([
        "<ide_opened_file>The use",
        "[image: image/png, 32,02",
        "what's this an image of?",
      ]);
      const kept = first.find((e) => e.type === "foreign/record" && e.data.line === 5);
      expect(JSON.stringify(kept?.type === "foreign/record" && kept.data.record)).toContain(
        '"type":"image"',
      );
      // The two comment lines the sample's publisher added are refused, each named.
      expect(mapped.problems.filter((p) => p.outcome === "refused").map((p) => p.line)).toEqual([
        1, 2,
      ]);
      expect(mapped.problems[0]?.message).toMatch(/^expected a JSON object, found a \/\/ comment/);
    });
  },
);

describe("lines of a transcript", () => {
  const line = (record: object) => `${JSON.stringify(record)}\n`;
  const base = { sessionId: "s-1", cwd: "/w", version: "2.1.0", gitBranch: "main" };
  const prompt = (uuid: string, parentUuid: string | null, text: string, timestamp: string) =>
    line({
      ...base,
      type: "user",
      uuid,
      parentUuid,
      timestamp,
      message: { role: "user", content: text },
    });

  it("leaves a torn last line for the next import, and names an unknown record type", () => {
    const text = `${prompt("u1", null, "hi", "2026-01-01T00:00:00Z")}${line({ type: "mystery", sessionId: "s-1" })}{"type":"user","mes`;
    const mapped = mapClaudeCodeTranscript(text);
    expect(mapped.consumed).toBe(text.lastIndexOf("\n") + 1);
    expect(mapped.counts).toEqual({ mapped: 1, verbatim: 1, refused: 0 });
    expect(mapped.problems).toEqual([
      { line: 2, outcome: "verbatim", message: 'unknown record type "mystery"', unknown: true },
    ]);
  });

  it("keeps a line whole after what it mapped when a block has no seedline equivalent", () => {
    const content = [
      { type: "text", text: "look" },
      { type: "hologram", data: "…" },
    ];
    const text = line({
      ...base,
      type: "user",
      uuid: "u1",
      parentUuid: null,
      message: { role: "user", content },
    });
    const mapped = mapClaudeCodeTranscript(text);
    const events = mapped.sessions[0]?.events ?? [];
    expect(events.map((e) => e.type)).toEqual(["foreign/record", "turn/start", "user/message"]);
    expect(events[2]).toMatchObject({ data: { content: [{ type: "text", text: "look" }] } });
    // Kept once (the first line's context record holds it whole already), reported verbatim.
    expect(mapped.problems).toEqual([
      {
        line: 1,
        outcome: "verbatim",
        message:
          'content block type "hologram" has no seedline equivalent: the line is kept whole after what was mapped',
      },
    ]);
  });

  it("refuses a file whose lines name no session and whose name is no session id", () => {
    expect(() =>
      mapClaudeCodeTranscript(line({ type: "file-history-snapshot" }), { path: "/x/notes.jsonl" }),
    ).toThrow(expect.objectContaining({ code: "INVALID_PARAMS" }));
    const named = mapClaudeCodeTranscript(line({ type: "summary", summary: "t", leafUuid: "z" }), {
      path: "/x/6dacb379-5820-4770-8afe-0123456789ab.jsonl",
    });
    expect(named.sessions[0]?.header.id).toBe("claude-code-6dacb379-5820-4770-8afe-0123456789ab");
  });

  it("keeps the results of parallel tool calls in their step, and does not take them for branches", () => {
    const assistant = (uuid: string, parentUuid: string, content: object[]) =>
      line({
        ...base,
        type: "assistant",
        uuid,
        parentUuid,
        timestamp: "2026-01-01T00:00:01Z",
        message: { id: "m1", role: "assistant", content },
      });
    const result = (uuid: string, parentUuid: string, id: string) =>
      line({
        ...base,
        type: "user",
        uuid,
        parentUuid,
        timestamp: "2026-01-01T00:00:02Z",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, content: "ok" }],
        },
      });
    const text =
      prompt("u1", null, "go", "2026-01-01T00:00:00Z") +
      assistant("a1", "u1", [{ type: "tool_use", id: "t1", name: "Read", input: {} }]) +
      assistant("a2", "a1", [{ type: "tool_use", id: "t2", name: "Read", input: {} }]) +
      result("r1", "a1", "t1") +
      result("r2", "a2", "t2");
    const mapped = mapClaudeCodeTranscript(text);
    expect(mapped.sessions).toHaveLength(1);
    expect(mapped.sessions[0]?.events.map((e) => e.type)).toEqual([
      "foreign/record", // the first line's working directory, branch and version
      "turn/start",
      "user/message",
      "step/start",
      "assistant/message",
      "tool/call",
      "assistant/message",
      "tool/call",
      "tool/result",
      "tool/result",
    ]);
  });
});
