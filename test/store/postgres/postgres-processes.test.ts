// Several processes on one PostgreSQL store: one writer per session, racing appends, sessions that never block each other.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import type { SessionHeader } from "../../../src/generated.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { simpleTurn, TIME } from "../../helpers/builders.js";
import {
  describePostgres,
  makePostgresHarness,
  POSTGRES_TEST_URL,
  type PostgresHarness,
} from "../../helpers/postgres-harness.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const TURN = simpleTurn(0, 1).length;
/** Events per batch a writer appends: one whole turn. */
const BATCH = 5;

interface Writer {
  send(command: string): void;
  next(): Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
}

// Modes: `store create|load ID BATCHES` appends through a SessionStore (writer locks and all);
// `race ID BATCHES TAG` appends through the bare backend, no lock, re-reading the next seq after
// each SEQ_CONFLICT, until BATCHES of its batches are stored.
const WRITER_SCRIPT = `
const [backendUrl, storeUrl, serializedUrl, url, schema, mode, ...args] = process.argv.slice(2);
const { PostgresBackend } = await import(backendUrl);
const { serializeEvents } = await import(serializedUrl);
const { SessionStore } = await import(storeUrl);
const commands = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
const backend = await PostgresBackend.open(url, { schema });
const turnAt = (seq, turn, text, time) => [
  { type: "turn/start", seq, time, data: { turn, trigger: { kind: "message", source: { kind: "user" } } } },
  { type: "user/message", seq: seq + 1, time, data: { content: [{ type: "text", text }], source: { kind: "user" } }, surfaceOp: "append" },
  { type: "step/start", seq: seq + 2, time, data: { turn, step: 1 } },
  { type: "step/end", seq: seq + 3, time, data: { turn, step: 1 } },
  { type: "turn/end", seq: seq + 4, time, data: { turn, reason: { kind: "completed" } } },
];
let appended = 0;
let conflicts = 0;
let error;
if (mode === "store") {
  const [how, sessionId, batches] = args;
  const store = new SessionStore({ backend });
  const session = how === "create" ? await store.create({ id: sessionId }) : await store.load(sessionId);
  let turn = (await session.readEvents()).filter((e) => e.type === "turn/start").length;
  send({ ready: true });
  await commands.next();
  try {
    for (let i = 0; i < Number(batches); i++) {
      turn++;
      await session.append(turnAt(session.nextSeq, turn, "p" + turn, Date.now()));
      appended++;
    }
  } catch (e) {
    error = { code: e.code ?? null, message: String(e.message) };
  }
  send({ done: true, appended, error });
  await commands.next();
  await store.close();
} else {
  const [sessionId, batches, tag] = args;
  send({ ready: true });
  await commands.next();
  try {
    while (appended < Number(batches)) {
      const next = (await backend.forkPoint(sessionId, undefined)).length;
      try {
        await backend.append(sessionId, next, serializeEvents(turnAt(next, next / 5 + 1, tag + ":" + appended, Date.now())));
        appended++;
      } catch (e) {
        if (e.code !== "SEQ_CONFLICT") throw e;
        conflicts++;
      }
    }
  } catch (e) {
    error = { code: e.code ?? null, message: String(e.message) };
  }
  send({ done: true, appended, conflicts, error });
  await commands.next();
  await backend.close();
}
process.exit(0);
`;

const temps: string[] = [];
const harnesses: PostgresHarness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.cleanup();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function spawnWriter(schema: string, args: string[]): Writer {
  const dir = mkdtempSync(join(tmpdir(), "seedline-pg-writer-"));
  temps.push(dir);
  const script = join(dir, "writer.mjs");
  writeFileSync(script, `import { createInterface } from "node:readline";\n${WRITER_SCRIPT}`);
  const modules = [
    "src/store/postgres/postgres-backend.ts",
    "src/store/session-store.ts",
    "src/log/serialized-event.ts",
  ].map((file) => pathToFileURL(join(ROOT, file)).href);
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", script, ...modules, POSTGRES_TEST_URL, schema, ...args],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[
    Symbol.asyncIterator
  ]();
  return {
    send: (command) => child.stdin?.write(`${command}\n`),
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error(`the writer ended early: ${stderr}`);
      return JSON.parse(line.value) as Record<string, unknown>;
    },
    exited: new Promise((resolve) => child.on("exit", resolve)),
  };
}

/** Starts writers, waits until each is ready, then lets them all go at once. */
async function runTogether(writers: Writer[]): Promise<Record<string, unknown>[]> {
  for (const writer of writers) expect(await writer.next()).toEqual({ ready: true });
  for (const writer of writers) writer.send("go");
  return Promise.all(writers.map((writer) => writer.next()));
}

async function finish(writers: Writer[]): Promise<void> {
  for (const writer of writers) writer.send("exit");
  expect(await Promise.all(writers.map((w) => w.exited))).toEqual(writers.map(() => 0));
}

function header(id: string): SessionHeader {
  return { version: 0, id, createdAt: TIME };
}

describePostgres("processes sharing one PostgreSQL store", () => {
  const BATCHES = 100;

  async function harness(): Promise<PostgresHarness> {
    const h = await makePostgresHarness();
    harnesses.push(h);
    // The first open creates the layout, so that the writers all find the current one.
    await (await h.open()).close();
    return h;
  }

  const rowsOf = (h: PostgresHarness, id: string) =>
    h.sql<{ seq: number; text: string }>(
      `SELECT seq::int AS seq, data::json -> 'content' -> 0 ->> 'text' AS text
       FROM events WHERE session_id = $1 ORDER BY seq`,
      [id],
    );

  it("lets one process write a session; the other gets SESSION_BUSY (or SEQ_CONFLICT), and so does a delete", async () => {
    const h = await harness();
    const setup = await h.open();
    await setup.create(header("shared"), serializeEvents(simpleTurn(0, 1)));
    const writers = [0, 1].map(() =>
      spawnWriter(h.schema, ["store", "load", "shared", `${BATCHES}`]),
    );
    const results = await runTogether(writers);
    const winners = results.filter((r) => r.appended === BATCHES && r.error === undefined);
    const losers = results.filter((r) => r.appended === 0);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(losers[0]?.error).toMatchObject({
      code: expect.stringMatching(/SESSION_BUSY|SEQ_CONFLICT/),
    });
    // The winner still holds the writer lock: deleting from here is refused.
    await expect(setup.delete("shared")).rejects.toMatchObject({ code: "SESSION_BUSY" });
    await finish(writers);
    const seqs = (await rowsOf(h, "shared")).map((r) => r.seq);
    expect(seqs).toEqual(Array.from({ length: TURN + BATCHES * BATCH }, (_, i) => i));
    expect(await setup.delete("shared")).toBe(true);
    const lost = losers[0]?.error as { code?: string } | undefined;
    console.log(
      `same session: one process appended ${BATCHES} batches, the other got ${lost?.code}`,
    );
  });

  it("keeps racing appends to one session without locks contiguous: no duplicate or interleaved seq", async () => {
    const h = await harness();
    const setup = await h.open();
    await setup.create(header("raced"), []);
    const writers = ["a", "b", "c"].map((tag) =>
      spawnWriter(h.schema, ["race", "raced", `${BATCHES}`, tag]),
    );
    const results = await runTogether(writers);
    await finish(writers);
    for (const result of results) expect(result).toMatchObject({ done: true, appended: BATCHES });
    const rows = await rowsOf(h, "raced");
    expect(rows.map((r) => r.seq)).toEqual(
      Array.from({ length: writers.length * BATCHES * BATCH }, (_, i) => i),
    );
    // Each batch is one whole turn from one writer: its user message sits at seq 5k + 1.
    const owners = rows.filter((r) => r.seq % BATCH === 1).map((r) => r.text.split(":")[0]);
    for (const tag of ["a", "b", "c"]) {
      expect(
        owners.filter((o) => o === tag),
        tag,
      ).toHaveLength(BATCHES);
    }
    expect((await setup.load("raced"))?.tornTail).toBe(false);
    const conflicts = results.reduce((n, r) => n + Number(r.conflicts), 0);
    console.log(
      `racing appends: ${writers.length} processes, ${writers.length * BATCHES} batches stored once each, ${conflicts} SEQ_CONFLICT retries`,
    );
  });

  it("appends to different sessions from different processes: no error, every row present once", async () => {
    const h = await harness();
    const ids = ["left", "right", "middle"];
    const writers = ids.map((id) => spawnWriter(h.schema, ["store", "create", id, `${BATCHES}`]));
    const results = await runTogether(writers);
    await finish(writers);
    for (const result of results) expect(result).toEqual({ done: true, appended: BATCHES });
    for (const id of ids) {
      expect((await rowsOf(h, id)).map((r) => r.seq)).toEqual(
        Array.from({ length: BATCHES * BATCH }, (_, i) => i),
      );
    }
    console.log(
      `different sessions: ${ids.length} processes, ${ids.length * BATCHES} batches, no error`,
    );
  });
});
