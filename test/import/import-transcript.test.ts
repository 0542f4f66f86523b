// Importing Claude Code transcripts into real stores: every session stored, valid and forkable; importing again changes nothing; a grown transcript appends only its new events; a rewritten one is reported; over RPC too.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RPC_METHODS, type SessionEvent } from "../../src/generated.js";
import { mapClaudeCodeTranscript } from "../../src/import/claude-code.js";
import { importTranscript, TranscriptImporter } from "../../src/import/import-transcript.js";
import {
  lastCompletedTurnBoundary,
  RpcResponseError,
  SeedlineClient,
  SessionStore,
  serve,
} from "../../src/index.js";
import { openBackend } from "../../src/store/open/open-backend.js";
import { runCliHere } from "../helpers/cli-in-process.js";
import {
  CLAUDE_CODE_FIXTURES,
  claudeCodeTranscripts,
  HAVE_CLAUDE_CODE_FIXTURES,
  lineEnds,
} from "../helpers/import-claude-code-harness.js";

const SKIP = `(skipped: ${CLAUDE_CODE_FIXTURES} is absent)`;
if (!HAVE_CLAUDE_CODE_FIXTURES) console.log(`import-transcript: real transcripts ${SKIP}`);
const transcripts = HAVE_CLAUDE_CODE_FIXTURES ? claudeCodeTranscripts() : [];

const STDIO_MAIN = join(import.meta.dirname, "..", "..", "dist", "src", "rpc", "stdio-main.js");

let temp: string;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "seedline-import-"));
});
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
});

async function storeAt(url: string): Promise<SessionStore> {
  return new SessionStore({ backend: await openBackend(url) });
}

function fixture(name: string) {
  const found = transcripts.find((t) => t.name === name);
  if (found === undefined) throw new Error(`expected the fixture ${name}`);
  return found;
}

/** The latest boundary a fork of `events` may take: the end, or just before a turn left open. */
function forkBoundary(events: readonly SessionEvent[]): number | undefined {
  const last = events.findLast((e) => e.type === "turn/start" || e.type === "turn/end");
  if (last?.type !== "turn/start") return events.length - 1;
  return last.seq > 0 ? last.seq - 1 : lastCompletedTurnBoundary(events);
}

describe.skipIf(!HAVE_CLAUDE_CODE_FIXTURES)(
  `importing every real transcript ${HAVE_CLAUDE_CODE_FIXTURES ? "" : SKIP}`,
  () => {
    for (const kind of ["sqlite", "jsonl"] as const) {
      it(`stores every session on ${kind}: valid, forkable, and the same again on a second import`, async () => {
        const url =
          kind === "sqlite" ? `sqlite:${join(temp, "all.db")}` : `jsonl:${join(temp, "all")}`;
        const store = await storeAt(url);
        try {
          const ids: string[] = [];
          for (const { path, text } of transcripts) {
            const result = await importTranscript(store, text, { format: "auto", path });
            const mapped = mapClaudeCodeTranscript(text, { path });
            expect(result.sessions.map((s) => [s.sessionId, s.outcome, s.events])).toEqual(
              mapped.sessions.map((s) => [s.header.id, "created", s.events.length]),
            );
            for (const session of mapped.sessions) {
              ids.push(session.header.id);
              expect(await store.readEvents(session.header.id)).toEqual(session.events);
            }
          }
          // Every stored log passes `seedline validate`.
          const exported = join(temp, `exported-${kind}`);
          rmSync(exported, { recursive: true, force: true });
          mkdirSync(exported);
          for (const id of ids)
            writeFileSync(join(exported, `${id}.jsonl`), await store.exportLog(id));
          const validated = await runCliHere(["validate", exported]);
          expect(validated.stdout).toMatch(new RegExp(`^ok: ${ids.length} logs`));
          expect(validated.status).toBe(0);
          // Each can be forked, at its end or before a turn it leaves open.
          for (const id of ids) {
            const events = await store.readEvents(id);
            const boundary = forkBoundary(events);
            if (boundary === undefined) continue;
            const child = await store.fork(id, { boundary, childSessionId: `${id}.fork` });
            expect(child.seedLength ?? 0).toBe(boundary + 1);
          }
          // Importing again stores nothing.
          const before = await Promise.all(ids.map((id) => store.exportLog(id)));
          for (const { path, text } of transcripts) {
            const again = await importTranscript(store, text, { format: "claude-code", path });
            expect(again.sessions.every((s) => s.outcome === "unchanged" && s.events === 0)).toBe(
              true,
            );
          }
          expect(await Promise.all(ids.map((id) => store.exportLog(id)))).toEqual(before);
        } finally {
          await store.close();
        }
      });
    }

    it("appends only the new events of a transcript that grew", async () => {
      const { path, text } = fixture("session-share/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl");
      const store = await storeAt(`sqlite:${join(temp, "grown.db")}`);
      try {
        // One importer, as --follow holds it: the turn it leaves open goes on.
        const importer = new TranscriptImporter(store, { keepLoaded: true });
        const ends = lineEnds(text);
        const half = text.slice(0, ends[Math.floor(ends.length / 2)]);
        const first = await importer.import(half, { format: "claude-code", path });
        const main = first.sessions[0]?.sessionId as string;
        const stored = await store.readEvents(main);
        const grown = await importer.import(text, { format: "claude-code", path });
        const full = mapClaudeCodeTranscript(text, { path }).sessions[0]?.events ?? [];
        expect(grown.sessions[0]).toMatchObject({
          outcome: "appended",
          events: full.length - stored.length,
        });
        const after = await store.readEvents(main);
        expect(after.slice(0, stored.length)).toEqual(stored);
        expect(after).toEqual(full);
        // The fork that begins in the second half is created.
        expect(grown.sessions.map((s) => s.outcome)).toEqual(["appended", "created"]);
      } finally {
        await store.close();
      }
    });

    it("stores anew a grown session whose stored log ended inside a turn another importer left", async () => {
      const { path, text } = fixture("spotter/short.jsonl");
      const url = `jsonl:${join(temp, "replaced")}`;
      const cut = lineEnds(text)[7] as number; // inside turn 1, after an answer line
      let store = await storeAt(url);
      const first = await importTranscript(store, text.slice(0, cut), {
        format: "claude-code",
        path,
      });
      const id = first.sessions[0]?.sessionId as string;
      const before = await store.readEvents(id);
      expect(await store.openTurn(id)).toBe(1);
      await store.close();
      // Another process: appending would close turn 1 as interrupted first.
      store = await storeAt(url);
      try {
        const grown = await importTranscript(store, text, { format: "claude-code", path });
        expect(grown.sessions[0]?.outcome).toBe("replaced");
        const after = await store.readEvents(id);
        expect(after.slice(0, before.length)).toEqual(before);
        expect(after).toEqual(mapClaudeCodeTranscript(text, { path }).sessions[0]?.events);
      } finally {
        await store.close();
      }
    });

    it("reports a rewritten transcript as diverged and leaves the stored session as it was", async () => {
      const { path, text } = fixture("kfischer/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");
      const store = await storeAt("memory:");
      try {
        await importTranscript(store, text, { format: "claude-code", path });
        const id = "claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260";
        const before = await store.exportLog(id);
        const rewritten = text.replace("Hello Okarin!", "Hello, Okarin!");
        const result = await importTranscript(store, rewritten, { format: "claude-code", path });
        expect(result.sessions[0]).toMatchObject({ sessionId: id, outcome: "diverged", events: 0 });
        expect(result.sessions[0]?.reason).toMatch(/^stored event seq \d+ \(assistant\/message\)/);
        const cut = await importTranscript(store, text.slice(0, lineEnds(text)[20]), {
          format: "claude-code",
          path,
        });
        expect(cut.sessions[0]?.outcome).toBe("diverged");
        expect(await store.exportLog(id)).toBe(before);
      } finally {
        await store.close();
      }
    });

    it("stores nothing of a transcript with a line not mapped when strict", async () => {
      const { path, text } = fixture("spotter/short.jsonl");
      const store = await storeAt("memory:");
      try {
        const result = await importTranscript(store, text, {
          format: "claude-code",
          path,
          strict: true,
        });
        expect(result.sessions.map((s) => s.outcome)).toEqual(["refused"]);
        expect(result.problems.length).toBe(result.counts.verbatim + result.counts.refused);
        expect((await store.list()).sessions).toEqual([]);
      } finally {
        await store.close();
      }
    });

    describe("over RPC (session/import with a format)", () => {
      const { path, text } = HAVE_CLAUDE_CODE_FIXTURES
        ? fixture("kfischer/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl")
        : { path: "", text: "" };

      async function scenario(client: SeedlineClient): Promise<void> {
        const result = await client.sessionImport({ log: text, format: "claude-code", path });
        expect(RPC_METHODS["session/import"].validateResult(result)).toBe(true);
        expect(result.format).toBe("claude-code");
        expect(result.sessions.map((s) => s.outcome)).toEqual(["created", "created", "created"]);
        expect(result.sessions[2]?.title).toBe("Test file creation and agent thread handling");
        const again = await client.sessionImport({ log: text, format: "auto" });
        expect(again.sessions.map((s) => s.outcome)).toEqual([
          "unchanged",
          "unchanged",
          "unchanged",
        ]);
        const refused = await client
          .sessionImport({ log: text, format: "claude-code", sessionId: "x" })
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(RpcResponseError);
        expect((refused as RpcResponseError).dataCode).toBe("INVALID_PARAMS");
        const unknown = await client
          .sessionImport({ log: '{"hello":1}\n', format: "auto" })
          .catch((e: unknown) => e);
        expect((unknown as RpcResponseError).dataCode).toBe("INVALID_PARAMS");
      }

      it("imports over an in-memory stream pair", async () => {
        const toServer = new PassThrough();
        const toClient = new PassThrough();
        const store = new SessionStore();
        serve({ store, input: toServer, output: toClient, log: () => {} });
        const client = SeedlineClient.connect(toClient, toServer);
        try {
          await scenario(client);
          expect(
            await store.title("claude-code-b3edadab-bca0-4054-9b41-f7ffa6941260.branch-3"),
          ).toBe("Test file creation and agent thread handling");
        } finally {
          await client.close();
        }
      });

      it("imports through the spawned server", async () => {
        const client = SeedlineClient.spawn({
          command: process.execPath,
          args: [STDIO_MAIN, "--store", `jsonl:${join(temp, "rpc")}`],
        });
        try {
          await scenario(client);
        } finally {
          await client.close();
        }
      });
    });
  },
);
