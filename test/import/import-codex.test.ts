// Codex rollouts as seedline sessions: every real rollout mapped, checked against counts read from its raw lines and against the log rules; prefixes, torn and bad lines.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { mapCodexRollout } from "../../src/import/codex.js";
import { importedSessionId } from "../../src/import/transcript.js";
import { replayProblems } from "../../src/replay/derive.js";
import {
  CODEX_FIXTURES,
  checkMapped,
  codexRollouts,
  foreignRecords,
  HAVE_CODEX_FIXTURES,
  lineEnds,
  mappedCounts,
  rawCounts,
  withoutForeignRecords,
} from "../helpers/import-codex-harness.js";

const SKIP = `(skipped: ${CODEX_FIXTURES} is absent)`;
if (!HAVE_CODEX_FIXTURES) console.log(`import-codex: real rollouts ${SKIP}`);
const rollouts = HAVE_CODEX_FIXTURES ? codexRollouts() : [];

/** The single session a rollout maps to. */
function sessionOf(text: string) {
  const mapped = mapCodexRollout(text);
  expect(mapped.sessions).toHaveLength(1);
  return { mapped, session: mapped.sessions[0] as (typeof mapped.sessions)[number] };
}

describe.skipIf(!HAVE_CODEX_FIXTURES)(
  `every real Codex rollout ${HAVE_CODEX_FIXTURES ? "" : SKIP}`,
  () => {
    it("finds the seven rollouts SOURCES.md lists", () => {
      expect(rollouts).toHaveLength(7);
    });

    for (const { name, text } of rollouts) {
      describe(name, () => {
        const { mapped, session } = sessionOf(text);
        const raw = rawCounts(text);

        it("maps every line, consumes the whole file and reports no problem", () => {
          expect(mapped.problems).toEqual([]);
          expect(mapped.counts).toEqual({ mapped: raw.lines, verbatim: 0, refused: 0 });
          expect(mapped.consumed).toBe(text.length);
          const meta = JSON.parse(text.slice(0, text.indexOf("\n"))).payload;
          expect(session.header.id).toBe(importedSessionId("codex", meta.id));
          expect(session.header.cwd).toBe(meta.cwd);
          expect(session.header.createdAt).toBe(Date.parse(meta.timestamp));
        });

        it("holds the prompts, answers, reasoning, tool calls, results and turns of its raw lines", () => {
          const { lines: _, ...expected } = raw;
          expect(mappedCounts(session.events)).toEqual(expected);
          // Every tool call block of an answered step is a tool/call event too.
          expect(session.events.filter((e) => e.type === "tool/call")).toHaveLength(raw.toolCalls);
        });

        it("gives each model call the usage of the token count that reported it, in order", () => {
          // A count whose total moved reports one model call; a repeated total only rate limits.
          const reported: unknown[] = [];
          let total = "";
          for (const line of text.split("\n")) {
            const info = line === "" ? undefined : JSON.parse(line).payload?.info;
            if (info?.total_token_usage === undefined) continue;
            if (JSON.stringify(info.total_token_usage) === total) continue;
            total = JSON.stringify(info.total_token_usage);
            const u = info.last_token_usage;
            reported.push({
              inputTokens: u.input_tokens,
              outputTokens: u.output_tokens,
              cacheReadTokens: u.cached_input_tokens,
              reasoningTokens: u.reasoning_output_tokens,
            });
          }
          const usages = session.events.flatMap((e) =>
            e.type === "assistant/message" ? [e.data.usage] : [],
          );
          expect(usages).toEqual(reported);
        });

        it("passes seedline validate", () => {
          expect(checkMapped(session, name)).toEqual([]);
        });

        it("gives each answered step the content its chunks streamed", () => {
          const blocks = new Map<string, unknown[]>();
          for (const e of session.events) {
            if (e.type === "assistant/chunk" && e.data.chunk.type === "block-end") {
              const key = `${e.data.turn}.${e.data.step}`;
              blocks.set(key, [...(blocks.get(key) ?? []), e.data.chunk.block]);
            }
            if (e.type === "assistant/message") {
              expect(e.data.content).toEqual(blocks.get(`${e.data.turn}.${e.data.step}`) ?? []);
            }
          }
        });

        it("replays every step that ended, as the proxy's recordings do", () => {
          const events = withoutForeignRecords(session.events);
          const open = events.findLastIndex((e) => e.type === "turn/start");
          const closed = events.findLastIndex((e) => e.type === "turn/end");
          // A rollout that stops inside a turn leaves that turn open: its steps may have no finish.
          const settled = closed > open ? events : events.slice(0, open);
          expect(replayProblems(settled)).toEqual([]);
        });

        it("keeps whole, as foreign records of the agreed shape, every line its events do not carry", () => {
          // The agreed shape: data {source, line (1-based), record (the parsed line)}. This test
          // stays as it is when foreign/record lands in the schema.
          const lines = text.split("\n");
          const records = foreignRecords(session.events);
          for (const r of records) {
            expect(Object.keys(r)).toEqual(["type", "seq", "time", "data"]);
            expect(Object.keys(r.data)).toEqual(["source", "line", "record"]);
            expect(r.data.source).toBe("codex");
            expect(Number.isSafeInteger(r.data.line) && r.data.line >= 1).toBe(true);
            expect(r.data.record).toEqual(JSON.parse(lines[r.data.line - 1] as string));
            expect(session.events[r.seq]).toBe(r as unknown as SessionEvent);
          }
          const kept = new Set(records.map((r) => r.data.line));
          expect(kept.size).toBe(records.length);
          lines.forEach((line, i) => {
            if (line === "") return;
            const record = JSON.parse(line);
            const p = record.payload;
            const mustKeep =
              ["session_meta", "turn_context"].includes(record.type) ||
              ["token_count", "task_started", "task_complete"].includes(p.type) ||
              (p.type === "reasoning" && p.encrypted_content != null) ||
              (p.type === "message" && p.phase !== undefined);
            if (mustKeep) expect(kept.has(i + 1), `line ${i + 1} kept`).toBe(true);
            if (["user_message", "agent_message", "agent_reasoning"].includes(p.type)) {
              // Codex's copies of items mapped already: kept only when they say more.
              const more = (p.local_images ?? []).length > 0 || p.memory_citation != null;
              expect(kept.has(i + 1), `line ${i + 1} kept`).toBe(more);
            }
          });
        });

        it("maps each prefix of the file to a prefix of the whole file's events", () => {
          const ends = lineEnds(text);
          const n = ends.length;
          const ks =
            n <= 80
              ? ends.map((_, i) => i + 1)
              : [1, 2, 3, 5, 8, 13, 21, 34, Math.floor(n / 3), Math.floor(n / 2), n - 2, n - 1];
          let last = { events: 0, consumed: 0 };
          for (const k of ks) {
            const prefix = text.slice(0, ends[k - 1]);
            const part = mapCodexRollout(prefix);
            const events = part.sessions[0]?.events ?? [];
            expect(events, `first ${k} lines`).toEqual(session.events.slice(0, events.length));
            expect(part.sessions[0]?.header ?? session.header).toEqual(session.header);
            expect(part.consumed).toBeLessThanOrEqual(prefix.length);
            expect(events.length).toBeGreaterThanOrEqual(last.events);
            expect(part.consumed).toBeGreaterThanOrEqual(last.consumed);
            last = { events: events.length, consumed: part.consumed };
          }
        });
      });
    }

    it("leaves a torn last line for the next import, neither consumed nor counted", () => {
      const { text } = rollouts.find((r) => r.name.includes("20-34-25")) as { text: string };
      const ends = lineEnds(text);
      const start = ends[39] as number; // line 41 starts here
      const torn = text.slice(0, start + Math.floor(((ends[40] as number) - start) / 2));
      const whole = mapCodexRollout(text.slice(0, start));
      const cut = mapCodexRollout(torn);
      expect(cut.consumed).toBe(start);
      expect(cut.counts).toEqual(whole.counts);
      expect(cut.problems).toEqual([]);
      expect(cut.sessions).toEqual(whole.sessions);
    });

    it("reports bad lines by number, keeps unknown records whole and maps the rest as before", () => {
      const { text } = rollouts.find((r) => r.name.includes("20-34-25")) as { text: string };
      const lines = text.split("\n");
      const time = '"timestamp":"2026-02-23T19:34:39.000Z"';
      const unknownRecord = `{${time},"type":"future_record","payload":{"x":1}}`;
      const unknownEvent = `{${time},"type":"event_msg","payload":{"type":"future_event"}}`;
      const bad = [
        "// a comment someone added",
        ...lines.slice(0, 20),
        "{not json",
        unknownRecord,
        ...lines.slice(20, 40),
        unknownEvent,
        ...lines.slice(40),
      ].join("\n");
      const mapped = mapCodexRollout(bad);
      expect(mapped.problems).toEqual([
        { line: 1, outcome: "refused", message: expect.stringContaining("expected a JSON object") },
        { line: 22, outcome: "refused", message: expect.stringContaining('"{not json"') },
        { line: 23, outcome: "verbatim", message: 'unknown record type "future_record"' },
        { line: 44, outcome: "verbatim", message: 'unknown event_msg type "future_event"' },
      ]);
      const good = mapCodexRollout(text);
      expect(mapped.counts).toEqual({ ...good.counts, verbatim: 2, refused: 2 });
      const session = mapped.sessions[0] as (typeof mapped.sessions)[number];
      const kept = foreignRecords(session.events).filter((r) => [23, 44].includes(r.data.line));
      expect(kept.map((r) => r.data.record)).toEqual([
        JSON.parse(unknownRecord),
        JSON.parse(unknownEvent),
      ]);
      expect(checkMapped(session, "bad.jsonl")).toEqual([]);
      const known = (events: readonly SessionEvent[]) =>
        withoutForeignRecords(events).map((e) => ({ ...e, time: 0 }));
      expect(known(session.events)).toEqual(known(good.sessions[0]?.events ?? []));
    });

    it("leaves a rollout that stops inside a turn with that turn open", () => {
      for (const part of ["13-19-38", "codex-session-view"]) {
        const { text } = rollouts.find((r) => r.name.includes(part)) as { text: string };
        const events = sessionOf(text).session.events.filter(
          (e) => e.type === "turn/start" || e.type === "turn/end",
        );
        expect(events.at(-1)?.type, part).toBe("turn/start");
      }
    });

    it("maps a compaction as a replace of the whole surface, and prompts typed mid-task as steering", () => {
      const { text } = rollouts.find((r) => r.name.includes("12-54-34")) as { text: string };
      const { session } = sessionOf(text);
      const events = session.events;
      const summary = events.find((e) => e.type === "compact/summary");
      const replace = events.find(
        (e) => e.type === "context/message" && typeof e.surfaceOp === "object",
      ) as (SessionEvent & { type: "context/message" }) | undefined;
      expect(summary?.type).toBe("compact/summary");
      expect(replace?.sourceEventSeqs).toEqual(
        summary?.type === "compact/summary" ? summary.data.shadowedSeqs : undefined,
      );
      expect(events[(summary?.seq ?? 0) - 1]?.type).toBe("compact/start");
      expect(events[(replace?.seq ?? 0) + 1]?.type).toBe("compact/end");
      expect(events.filter((e) => e.type === "steering/message")).toHaveLength(5);
    });
  },
);
