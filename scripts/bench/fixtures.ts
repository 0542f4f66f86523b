// What several benchmarks share: the size presets, raw SQLite connections for the floors, and stores filled with a generated log.
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SQLITE_DDL, SQLITE_PRAGMAS, SQLITE_QUERIES } from "../../src/generated.js";
import {
  type Durability,
  JsonlBackend,
  type SessionBackend,
  type SessionEvent,
  type SessionHeader,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { logFileName } from "../../src/store/jsonl/layout.js";

/** The sizes of one run: docs/performance.md's in a full run, small ones with `--quick`. */
export interface Sizes {
  readonly rounds: number;
  /** Events appended by B1 and B2. */
  readonly appendEvents: number;
  /** Events of the session B3 loads, B4 forks and B9 resumes. */
  readonly logEvents: number;
  /** B5: sessions and requests in flight. */
  readonly rpcSessions: number;
  /** B5: 1-event appends per session per round. */
  readonly rpcAppendsPerSession: number;
  /** B6: events of the session read over stdio. */
  readonly readEvents: number;
  /** B7: sessions in the store. */
  readonly listSessions: number;
  /** B7 at scale: sessions in the JSONL store listed from its index. */
  readonly listScaleSessions: number;
  /** B8: events derived from. */
  readonly deriveEvents: number;
  /** M1: the size of the loaded JSONL log, in bytes. */
  readonly memoryLogBytes: number;
  /** M1: fresh child processes measured. */
  readonly memoryRuns: number;
  /** M2: sessions one server has just appended to. */
  readonly serverSessions: number;
  /** M2: events appended to each of them, in turn-sized batches. */
  readonly serverSessionEvents: number;
  /** M3: events of the session paged through with session/read. */
  readonly pagedReadEvents: number;
  /** W1, W2: alternating rounds (each a window of `watchWindowMs` / `idleWindowMs`). */
  readonly watchRounds: number;
  /** W1: how long each load shape is driven per measurement, in ms. */
  readonly watchWindowMs: number;
  /** W1: sessions watched at 1 append per second each. */
  readonly watchSessions: number;
  /** W2: idle watches (one per session) on one server. */
  readonly idleWatches: number;
  /** W2: the idle window whose CPU is measured, in ms. */
  readonly idleWindowMs: number;
  /** P1: SSE events of the stream sent through the proxy. */
  readonly proxyStreamEvents: number;
  /** P1: streams per measurement (their median is the round's figure). */
  readonly proxyStreamsPerRound: number;
  /** P2: calls of the session replayed. */
  readonly proxyReplayCalls: number;
  /** P3: calls through one proxy whose heap is measured after the first and the last tenth. */
  readonly proxyMemoryCalls: number;
}

export const FULL_SIZES: Sizes = {
  rounds: 7,
  appendEvents: 100_000,
  logEvents: 100_000,
  rpcSessions: 64,
  rpcAppendsPerSession: 50,
  readEvents: 10_000,
  listSessions: 10_000,
  listScaleSessions: 100_000,
  deriveEvents: 100_000,
  memoryLogBytes: 100 * 1024 * 1024,
  memoryRuns: 3,
  serverSessions: 1_000,
  serverSessionEvents: 2_000,
  pagedReadEvents: 1_000_000,
  watchRounds: 3,
  watchWindowMs: 6000,
  watchSessions: 500,
  idleWatches: 1000,
  idleWindowMs: 5000,
  proxyStreamEvents: 2_000,
  proxyStreamsPerRound: 20,
  proxyReplayCalls: 200,
  proxyMemoryCalls: 10_000,
};

export const QUICK_SIZES: Sizes = {
  rounds: 2,
  appendEvents: 3_000,
  logEvents: 3_000,
  rpcSessions: 16,
  rpcAppendsPerSession: 4,
  readEvents: 500,
  listSessions: 300,
  listScaleSessions: 1_000,
  deriveEvents: 3_000,
  memoryLogBytes: 4 * 1024 * 1024,
  memoryRuns: 1,
  serverSessions: 20,
  serverSessionEvents: 500,
  pagedReadEvents: 20_000,
  watchRounds: 1,
  // Short windows: a quick run proves the measures work, its figures are never read.
  watchWindowMs: 400,
  watchSessions: 20,
  idleWatches: 20,
  idleWindowMs: 300,
  proxyStreamEvents: 200,
  proxyStreamsPerRound: 2,
  proxyReplayCalls: 20,
  proxyMemoryCalls: 200,
};

/** The seed of every generated log: runs repeat. */
export const SEED = 20_250_601;

/**
 * A raw better-sqlite3 connection with the pragmas the SQLite backend sets (busy timeout,
 * foreign keys, WAL, `synchronous` for the durability mode), on a database that holds the
 * generated layout (created when new): the floors' connection.
 */
export function rawSqlite(path: string, durability: Durability = "fsync"): Database.Database {
  const db = new Database(path);
  db.pragma(`busy_timeout = ${SQLITE_PRAGMAS.busyTimeoutMs}`);
  if (Number(db.pragma("user_version", { simple: true })) === 0) db.exec(SQLITE_DDL);
  db.pragma(`foreign_keys = ${SQLITE_PRAGMAS.foreignKeys ? "ON" : "OFF"}`);
  db.pragma(`journal_mode = ${SQLITE_PRAGMAS.journalMode}`);
  db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous[durability]}`);
  return db;
}

/** The bound parameters of the backend's own insert statement for one event, written out by hand. */
export function rawEventRow(sessionId: string, event: SessionEvent): Record<string, unknown> {
  const e = event as SessionEvent & { sourceEventSeqs?: unknown; surfaceOp?: unknown };
  return {
    sessionId,
    seq: e.seq,
    type: e.type,
    time: e.time,
    data: JSON.stringify(e.data),
    sourceEventSeqs: e.sourceEventSeqs === undefined ? null : JSON.stringify(e.sourceEventSeqs),
    surfaceOp: e.surfaceOp === undefined ? null : JSON.stringify(e.surfaceOp),
  };
}

/** The bound parameters of the backend's session insert for a header. */
export function rawSessionRow(header: SessionHeader): Record<string, unknown> {
  return {
    id: header.id,
    version: header.version,
    createdAt: header.createdAt,
    cwd: header.cwd ?? null,
    parentSession: header.parentSession ?? null,
    seedLength: header.seedLength ?? null,
  };
}

/**
 * Writes sessions straight into a SQLite file with raw inserts in one transaction (no
 * validation, no fsync per session): for building large stores to read from quickly.
 */
export function fillSqlite(
  path: string,
  logs: Iterable<{ header: SessionHeader; events: readonly SessionEvent[] }>,
): void {
  const db = rawSqlite(path, "process");
  try {
    const insertSession = db.prepare(SQLITE_QUERIES.insertSession);
    const insertEvent = db.prepare(SQLITE_QUERIES.insertEvent);
    // The catalog is left to the backend: absent (a new file) or found stale, it is made from
    // the logs when the store is opened.
    db.transaction(() => {
      for (const { header, events } of logs) {
        insertSession.run(rawSessionRow(header));
        for (const event of events) insertEvent.run(rawEventRow(header.id, event));
      }
    })();
  } finally {
    db.close();
  }
}

/**
 * Writes sessions straight into a JSONL store folder, in exactly the backend's file format (its own
 * line formatters and file names), flushed once at the end.
 */
export function fillJsonl(
  root: string,
  logs: Iterable<{ header: SessionHeader; events: readonly SessionEvent[] }>,
): void {
  const dir = join(root, "sessions");
  mkdirSync(dir, { recursive: true });
  for (const { header, events } of logs) {
    const fd = openSync(join(dir, logFileName(header.id)), "wx");
    try {
      let pending = formatHeaderLine(header);
      for (const event of events) {
        pending += formatEventLine(event);
        if (pending.length >= 1 << 20) {
          writeSync(fd, pending);
          pending = "";
        }
      }
      writeSync(fd, pending);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/** The path of a session's log in a JSONL store folder. */
export function jsonlPath(root: string, id: string): string {
  return join(root, "sessions", logFileName(id));
}

/** The two durable backends, by name, over a folder. */
export type BackendKind = "sqlite" | "jsonl";

export async function openDurable(
  kind: BackendKind,
  dir: string,
  durability: Durability = "fsync",
): Promise<SessionBackend> {
  return kind === "sqlite"
    ? SqliteBackend.open(join(dir, "store.db"), { durability })
    : new JsonlBackend(join(dir, "jsonl"), { durability });
}

/** Fills the store of `kind` in `dir` with one session holding `events`. */
export function fillOne(
  kind: BackendKind,
  dir: string,
  header: SessionHeader,
  events: readonly SessionEvent[],
): void {
  if (kind === "sqlite") fillSqlite(join(dir, "store.db"), [{ header, events }]);
  else fillJsonl(join(dir, "jsonl"), [{ header, events }]);
}

/** A store over `backend` whose clock is fixed (createdAt values repeat across runs). */
export function storeOver(backend: SessionBackend): SessionStore {
  return new SessionStore({ backend, now: () => 1_760_000_000_000 });
}
