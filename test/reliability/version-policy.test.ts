// R4 (docs/performance.md): stores and logs of other versions are refused with FORMAT_UNSUPPORTED and the direction, in the SDK and by the spawned server, and left byte for byte as they were.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { RpcResponseError } from "../../src/client/rpc-response-error.js";
import { SeedlineClient } from "../../src/client/seedline-client.js";
import { SQLITE_DDL, SQLITE_LAYOUT_VERSION } from "../../src/generated.js";
import { JsonlBackend, openBackend, SessionStore, StorageError } from "../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import { balancedLog, testHeader } from "../helpers/builders.js";

const ROOT = join(import.meta.dirname, "..", "..");
const root = mkdtempSync(join(tmpdir(), "seedline-r4-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The server entry: the build the global setup made, else the source through tsx. */
function serverArgs(): string[] {
  const built = join(ROOT, "dist", "src", "rpc", "stdio-main.js");
  return existsSync(built)
    ? [built]
    : ["--import", "tsx", join(ROOT, "src", "rpc", "stdio-main.ts")];
}

/** Every file under `dir` with its bytes' hash: what "unchanged" is checked against. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const path = join(dir, name);
    // A refused write may leave its writer lock's file: empty, kept by design, never data.
    if (name.endsWith(".lck")) {
      expect(statSync(path).size, name).toBe(0);
      continue;
    }
    try {
      out[relative(dir, path)] = createHash("sha256").update(readFileSync(path)).digest("hex");
    } catch {
      out[relative(dir, path)] = "(folder)";
    }
  }
  return out;
}

const OLD_SESSIONS = `CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL,
  created_at INTEGER NOT NULL, cwd TEXT, parent_session TEXT`;
const OLD_EVENTS = `CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data TEXT NOT NULL`;
const KEY = ", PRIMARY KEY (session_id, seq))";
const OLDER = /older layout|ambiguous|no upgrade path/;
const MOVE = /layout 5 .*seedline export .*seedline import/;
const NEWER = /newer seedline.*upgrade seedline/;

/** The layouts that shipped before 4, both sibling 3s, the 5 that kept summaries in the layout, and a 6 from the future (also in WAL mode). */
const SQLITE_CASES: {
  name: string;
  sql: string;
  found: number;
  direction: RegExp;
  wal: boolean;
}[] = [
  {
    name: "user_version 1",
    sql: "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL); PRAGMA user_version = 1;",
    found: 1,
    direction: OLDER,
    wal: false,
  },
  {
    name: "user_version 2",
    sql: `${OLD_SESSIONS});\n${OLD_EVENTS}${KEY};\nPRAGMA user_version = 2;`,
    found: 2,
    direction: OLDER,
    wal: false,
  },
  {
    name: "user_version 3 (the sibling that added seed_length)",
    sql: `${OLD_SESSIONS}, seed_length INTEGER) STRICT;\n${OLD_EVENTS}${KEY} STRICT;\nPRAGMA user_version = 3;`,
    found: 3,
    direction: OLDER,
    wal: false,
  },
  {
    name: "user_version 3 (the sibling that added source_event_seqs and surface_op)",
    sql: `${OLD_SESSIONS}) STRICT;\n${OLD_EVENTS}, source_event_seqs TEXT, surface_op TEXT${KEY} STRICT;\nPRAGMA user_version = 3;`,
    found: 3,
    direction: OLDER,
    wal: true,
  },
  {
    name: "user_version 5 (the layout that kept summaries in it)",
    sql: `${SQLITE_DDL}\nCREATE TABLE session_summaries (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, updated_at INTEGER NOT NULL, title TEXT, derived_title TEXT, PRIMARY KEY (session_id)) STRICT;\nPRAGMA user_version = 5;`,
    found: 5,
    direction: MOVE,
    wal: true,
  },
  {
    name: "user_version 6",
    sql: `${SQLITE_DDL}\nPRAGMA user_version = 6;`,
    found: 6,
    direction: NEWER,
    wal: false,
  },
  {
    name: "user_version 6 in WAL mode",
    sql: `${SQLITE_DDL}\nPRAGMA user_version = 6;`,
    found: 6,
    direction: NEWER,
    wal: true,
  },
];

describe("R4 version policy: reject, never migrate", () => {
  for (const [i, c] of SQLITE_CASES.entries()) {
    it(`refuses a SQLite store at ${c.name} with FORMAT_UNSUPPORTED and its direction, in the SDK and the server, bytes unchanged`, async () => {
      const dir = join(root, `sqlite-${i}`);
      mkdirSync(dir);
      const path = join(dir, "store.db");
      const db = new Database(path);
      if (c.wal) db.pragma("journal_mode = WAL");
      db.exec(c.sql);
      db.close();
      const before = snapshot(dir);

      let refusal: unknown;
      try {
        await (await openBackend(`sqlite:${path}`)).close();
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(StorageError);
      const error = refusal as StorageError;
      expect(error.code).toBe("FORMAT_UNSUPPORTED");
      expect(error.details).toMatchObject({ found: c.found, supported: SQLITE_LAYOUT_VERSION });
      expect(error.message).toMatch(c.direction);
      expect(snapshot(dir)).toEqual(before);

      // The server refuses to start on it, saying why, and touches nothing either.
      const server = await promisify(execFile)(
        process.execPath,
        [...serverArgs(), "--store", `sqlite:${path}`],
        { cwd: ROOT, timeout: 30_000 },
      ).then(
        () => ({ code: 0, stderr: "" }),
        (failure: { code?: number; stderr?: string }) => ({
          code: failure.code ?? -1,
          stderr: failure.stderr ?? "",
        }),
      );
      expect(server.code).not.toBe(0);
      expect(server.stderr).toMatch(new RegExp(`found ${c.found}`));
      expect(server.stderr).toMatch(c.direction);
      expect(snapshot(dir)).toEqual(before);
      console.log(
        `R4 sqlite ${c.name}: refused by the SDK (FORMAT_UNSUPPORTED, found ${c.found}, supported 4) and by the server (exit ${server.code}); ${Object.keys(before).length} file(s) byte-identical`,
      );
    });
  }

  for (const version of [1, -1]) {
    it(`refuses a JSONL log at format version ${version} with FORMAT_UNSUPPORTED and its direction, in the SDK and over the wire, bytes unchanged`, async () => {
      const dir = join(root, `jsonl-v${version}`);
      const id = `v${version}`;
      mkdirSync(join(dir, "sessions"), { recursive: true });
      const events = balancedLog(2);
      const header = formatHeaderLine({ ...testHeader(id), version } as never);
      writeFileSync(
        join(dir, "sessions", logFileName(id)),
        header + events.map(formatEventLine).join(""),
      );
      const before = snapshot(dir);
      const direction = version > 0 ? /newer: upgrade seedline/ : /no upgrade path/;

      const store = new SessionStore({ backend: new JsonlBackend(dir) });
      const codes: string[] = [];
      for (const attempt of [
        () => store.load(id),
        () => store.append(id, balancedLog(1)),
        () => store.fork(id, { boundary: 0, childSessionId: "child" }),
        () => store.exportLog(id),
      ]) {
        try {
          await attempt();
          codes.push("accepted");
        } catch (error) {
          expect(error).toBeInstanceOf(StorageError);
          expect((error as StorageError).message).toMatch(direction);
          codes.push((error as StorageError).code);
        }
      }
      await store.close();
      expect(codes).toEqual(Array(4).fill("FORMAT_UNSUPPORTED"));
      expect(snapshot(dir)).toEqual(before);

      const client = SeedlineClient.spawn({
        command: process.execPath,
        args: [...serverArgs(), "--store", `jsonl:${dir}`],
        cwd: ROOT,
        stderr: "ignore",
      });
      const wire: { code: number; dataCode: string | undefined; found: unknown }[] = [];
      for (const call of [
        () => client.sessionRead({ sessionId: id }),
        () => client.sessionAppend({ sessionId: id, events: balancedLog(1) }),
        () => client.sessionFork({ sessionId: id, boundary: 0 }),
        () => client.sessionExport({ sessionId: id }),
        () => client.sessionMessages({ sessionId: id }),
      ]) {
        try {
          await call();
          wire.push({ code: 0, dataCode: undefined, found: undefined });
        } catch (error) {
          expect(error).toBeInstanceOf(RpcResponseError);
          const response = error as RpcResponseError;
          expect(response.message).toMatch(direction);
          wire.push({
            code: response.code,
            dataCode: response.dataCode,
            found: (response.data as { found?: unknown } | undefined)?.found,
          });
        }
      }
      await client.close();
      expect(wire).toEqual(
        Array(5).fill({ code: -32015, dataCode: "FORMAT_UNSUPPORTED", found: version }),
      );
      expect(snapshot(dir)).toEqual(before);
      console.log(
        `R4 jsonl version ${version}: 4 SDK calls and 5 requests over the wire refused with FORMAT_UNSUPPORTED (-32015, found ${version}); the log is byte-identical`,
      );
    });
  }
});
