// Event data nested past MAX_JSON_DEPTH is refused the same way on every way in: append, create, import, and a stored log.
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import {
  InvalidEventError,
  JsonlBackend,
  type SessionHeader,
  SessionStore,
  SqliteBackend,
  StorageError,
} from "../../src/index.js";
import { MAX_JSON_DEPTH } from "../../src/log/json-value.js";
import { formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { stepStart, TIME, toolCall, toolResult, turnStart } from "../helpers/builders.js";
import { expectCode, memoryServer, RawPeer } from "../helpers/rpc-fixtures.js";
import { rejectionOf } from "../helpers/store-builders.js";

// Regression for issue 14, finding 14. Before the fix an imported (or stored) event was only
// frozen in place, with no depth limit, so a line 200,000 deep passed the validator and then
// overflowed JSON.stringify when written. Seen failing before the fix:
// - importLog rejected with RangeError "Maximum call stack size exceeded" (from the backend's
//   JSON.stringify) and session/import answered INTERNAL (-32603);
// - at MAX_JSON_DEPTH + 1 the import resolved, although append refuses that event;
// - a stored JSONL or SQLite log holding such a line loaded without error ("expected the promise
//   to reject"), leaving the crash to whatever wrote it next.
// The exactly-at-the-limit import and the raw session/create and session/append cases passed
// before (copies were already held to the limit): they pin that every way in uses one limit.

/** The seed the deep event follows: a turn and step with one open call, answered at seq 3. */
const SEED = [turnStart(0, 1), stepStart(1, 1, 1), toolCall(2, 1, 1, "c")];

/**
 * The JSON text of the `tool/result` at seq 3 whose `meta` is `levels` arrays deep: the event
 * (1) and its data (2) come first, so the event nests `levels + 2` deep.
 */
function deepResultText(levels: number): string {
  const line = JSON.stringify(toolResult(3, 1, 1, "c", { sourceEventSeqs: [2], meta: 0 }));
  return line.replace('"meta":0', `"meta":${"[".repeat(levels)}0${"]".repeat(levels)}`);
}

/** The problem path of an event whose nesting passes the limit inside `meta`. */
const DEEP_PATH = `/data/meta${"/0".repeat(MAX_JSON_DEPTH - 2)}`;
const DEEP = 200_000;

function logText(id: string, lines: readonly string[]): string {
  const header: SessionHeader = { version: 0, id, createdAt: TIME };
  return formatHeaderLine(header) + lines.map((line) => `${line}\n`).join("");
}

const seedLines = SEED.map((event) => JSON.stringify(event));

describe("importing data nested deeper than MAX_JSON_DEPTH (SessionStore)", () => {
  it(`imports an event nested exactly ${MAX_JSON_DEPTH} deep and exports it byte for byte`, async () => {
    const store = new SessionStore();
    const text = logText("edge", [...seedLines, deepResultText(MAX_JSON_DEPTH - 2)]);
    await store.importLog(text);
    expect(await store.exportLog("edge")).toBe(text);
  });

  it.each([MAX_JSON_DEPTH + 1, DEEP])(
    "refuses an event nested %i deep as INVALID_EVENT (json-value), as append does, storing nothing",
    async (depth) => {
      const store = new SessionStore();
      const line = deepResultText(depth - 2);
      const imported = await rejectionOf(store.importLog(logText("deep", [...seedLines, line])));
      expect(imported).toBeInstanceOf(InvalidEventError);
      expect(imported).toMatchObject({
        code: "INVALID_EVENT",
        rule: "json-value",
        seq: 3,
        index: 3,
        details: { instancePath: DEEP_PATH },
      });
      expect(await store.get("deep")).toBeUndefined();

      // Append (a caller's value, copied) refuses the same event with the same rule and place.
      const session = await store.create({ id: "appended", seed: SEED });
      const appended = await rejectionOf(session.append([JSON.parse(line)]));
      expect(appended).toMatchObject({
        code: "INVALID_EVENT",
        rule: "json-value",
        details: { instancePath: DEEP_PATH },
      });
      expect(session.nextSeq).toBe(SEED.length);
    },
  );
});

describe("a stored log holding a line nested deeper than MAX_JSON_DEPTH", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "seedline-deep-"));
    dirs.push(dir);
    return dir;
  }

  /** Expects every read of session "s" in a fresh store to be CORRUPT_LOG naming json-value at seq 3. */
  async function expectCorrupt(open: () => Promise<SessionStore>): Promise<void> {
    const store = await open();
    try {
      // One at a time: a read started early could fail before anything awaits it (unhandled).
      for (const read of [
        () => store.load("s"),
        () => store.exportLog("s"),
        () => store.openForWriting("s"),
      ]) {
        const error = await rejectionOf(read());
        expect(error).toBeInstanceOf(StorageError);
        expect(error).toMatchObject({
          code: "CORRUPT_LOG",
          details: { seq: 3, rule: "json-value" },
        });
      }
    } finally {
      await store.close();
    }
  }

  it("is CORRUPT_LOG on load from JSONL, not a crash", async () => {
    const root = tempDir();
    const open = async () => new SessionStore({ backend: new JsonlBackend(root) });
    const writer = await open();
    await writer.create({ id: "s", seed: SEED });
    await writer.close();
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((name) =>
      name.endsWith(".jsonl"),
    );
    expect(files).toHaveLength(1);
    appendFileSync(join(root, files[0] as string), `${deepResultText(DEEP)}\n`);
    await expectCorrupt(open);
  });

  it("is CORRUPT_LOG on load from SQLite, not a crash", async () => {
    const path = join(tempDir(), "store.db");
    const open = async () => new SessionStore({ backend: await SqliteBackend.open(path) });
    const writer = await open();
    await writer.create({ id: "s", seed: SEED });
    await writer.close();
    const event = JSON.parse(deepResultText(1)) as { data: { meta: unknown } };
    const data = JSON.stringify(event.data).replace(
      '"meta":[0]',
      `"meta":${"[".repeat(DEEP)}0${"]".repeat(DEEP)}`,
    );
    const db = new Database(path);
    try {
      db.prepare(
        `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op)
         VALUES ('s', 3, 'tool/result', ?, ?, '[2]', '"append"')`,
      ).run(TIME, data);
    } finally {
      db.close();
    }
    await expectCorrupt(open);
  });
});

describe("data nested deeper than MAX_JSON_DEPTH over the in-memory RPC server", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it("answers session/import with INVALID_EVENT (json-value), never INTERNAL, and stores nothing", async () => {
    const running = memoryServer();
    cleanups.push(async () => {
      await running.client.close();
      await running.server.closed;
    });
    const { client, logs } = running;
    const error = await expectCode(
      client.sessionImport({ log: logText("rpc", [...seedLines, deepResultText(DEEP)]) }),
      "INVALID_EVENT",
    );
    expect(error.data).toMatchObject({ rule: "json-value", seq: 3, index: 3 });
    await expectCode(client.sessionRead({ sessionId: "rpc" }), "SESSION_NOT_FOUND");
    expect(logs.join("\n")).not.toMatch(/RangeError|INTERNAL/);
  });

  it("answers session/create and session/append of such raw JSON text with INVALID_EVENT", async () => {
    const running = memoryServer({}, false);
    cleanups.push(async () => {
      running.toServer.end();
      await running.server.closed;
    });
    const peer = new RawPeer("ndjson", running.toClient, running.toServer);
    const deep = deepResultText(DEEP);
    const send = (id: number, method: string, params: string) =>
      peer.sendRaw(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}\n`);
    send(1, "session/create", `{"sessionId":"c","seed":[${[...seedLines, deep].join(",")}]}`);
    const created = await peer.next();
    expect(created.error).toMatchObject({
      code: RPC_ERROR_CODES.INVALID_EVENT,
      data: { code: "INVALID_EVENT", rule: "json-value", index: 3 },
    });
    expect(created.error?.data?.instancePath).toBe(`/seed/3${DEEP_PATH}`);
    send(2, "session/read", '{"sessionId":"c"}');
    expect((await peer.next()).error?.data).toMatchObject({ code: "SESSION_NOT_FOUND" });

    send(3, "session/create", `{"sessionId":"a","seed":[${seedLines.join(",")}]}`);
    expect((await peer.next()).error).toBeUndefined();
    send(4, "session/append", `{"sessionId":"a","events":[${deep}]}`);
    expect((await peer.next()).error).toMatchObject({
      code: RPC_ERROR_CODES.INVALID_EVENT,
      data: { code: "INVALID_EVENT", rule: "json-value", instancePath: `/events/0${DEEP_PATH}` },
    });
    send(5, "session/read", '{"sessionId":"a"}');
    expect((await peer.next()).result).toMatchObject({ nextSeq: SEED.length });
    expect(running.logs.join("\n")).not.toMatch(/RangeError|INTERNAL/);
  });
});
