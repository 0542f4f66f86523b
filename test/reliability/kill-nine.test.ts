// R1 (docs/performance.md): a writer killed with SIGKILL at random moments loses nothing it acknowledged, on JSONL and on SQLite.
// This file is also the writer: run with SEEDLINE_R1_CHILD=1 it appends turns until it is killed.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { Prng, type SyntheticShape, syntheticTurns } from "../../scripts/bench/synthetic-log.js";
import {
  type Durability,
  JsonlBackend,
  type SessionBackend,
  type SessionEvent,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { logFileName } from "../../src/store/jsonl/layout.js";

const CHILD_FLAG = "SEEDLINE_R1_CHILD";
const KILLS_PER_BACKEND = 32;
/** Small turns, so that a kill often lands inside one. */
const SHAPE: SyntheticShape = {
  deltaChars: 20,
  resultChars: [20, 300],
  steps: [1, 3],
  chunks: [12, 40],
};

type Kind = "jsonl" | "sqlite";

async function openBackend(
  kind: Kind,
  location: string,
  durability: Durability,
): Promise<SessionBackend> {
  return kind === "sqlite"
    ? SqliteBackend.open(location, { durability })
    : new JsonlBackend(location, { durability });
}

/** What the writer reports of an acknowledged batch: where it starts, its length, its bytes' hash. */
interface Ack {
  readonly from: number;
  readonly count: number;
  readonly hash: string;
}

function hashOf(events: readonly SessionEvent[]): string {
  return createHash("sha256")
    .update(events.map((event) => JSON.stringify(event)).join("\n"))
    .digest("hex");
}

/**
 * The writer: opens the store (repairing what the last kill left), then appends generated turns
 * in random-sized batches forever, printing `ack FROM COUNT HASH` once each append resolved.
 * Acks are written straight to fd 1 with `writeSync`: the call returns once the line is in the
 * pipe, where it outlives the writer, so every printed ack reaches the parent. (Through
 * `process.stdout`, which buffers in the process when the pipe is full, a run counted 287,519
 * acknowledged events of a log of 928,067: the acks died with the writer.)
 */
async function writer(): Promise<void> {
  const [kind, location, id, durability, seedText] = process.argv.slice(2);
  const seed = Number(seedText);
  const backend = await openBackend(kind as Kind, location as string, durability as Durability);
  const store = new SessionStore({ backend });
  const session = (await store.get(id as string)) ?? (await store.create({ id: id as string }));
  let lastTurn = 0;
  for (const event of await session.readEvents())
    if (event.type === "turn/start") lastTurn = event.data.turn;
  printLine(`ready ${session.nextSeq}`);
  const rng = new Prng(seed ^ 0x5eed);
  for (const turn of syntheticTurns(seed, SHAPE, session.nextSeq, lastTurn + 1)) {
    for (let i = 0; i < turn.length; ) {
      const batch = turn.slice(i, i + rng.int(1, 12));
      await store.append(session, batch);
      printLine(`ack ${(batch[0] as SessionEvent).seq} ${batch.length} ${hashOf(batch)}`);
      i += batch.length;
    }
  }
}

/** Writes a line to fd 1 before returning, waiting while the pipe is full. */
function printLine(text: string): void {
  const bytes = Buffer.from(`${text}\n`, "utf8");
  for (let done = 0; done < bytes.length; ) {
    try {
      done += writeSync(1, bytes, done, bytes.length - done);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

if (process.env[CHILD_FLAG] === "1") {
  await writer();
} else {
  const root = mkdtempSync(join(tmpdir(), "seedline-r1-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** One writer's life: spawned, killed after `delayMs` (from its ready line, or from spawn). */
  async function runWriter(
    args: readonly string[],
    delayMs: number,
    fromReady: boolean,
  ): Promise<{ acks: Ack[]; readied: boolean; stderr: string; signal: string | null }> {
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", "tsx", import.meta.filename, ...args],
      { env: { ...process.env, [CHILD_FLAG]: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    const acks: Ack[] = [];
    let readied = false;
    let stderr = "";
    let pending = "";
    let timer: NodeJS.Timeout | undefined;
    const kill = () => child.kill("SIGKILL");
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const [word, a, b, hash] = line.split(" ");
        if (word === "ready") {
          readied = true;
          if (fromReady) timer = setTimeout(kill, delayMs);
        } else if (word === "ack") {
          acks.push({ from: Number(a), count: Number(b), hash: hash as string });
        }
      }
    });
    if (!fromReady) timer = setTimeout(kill, delayMs);
    // A writer that cannot start must not hang the test.
    const guard = setTimeout(kill, 30_000);
    // "close", not "exit": every ack that reached the pipe before the kill is read first.
    const signal = await new Promise<string | null>((resolve) =>
      child.once("close", (_code, sig) => resolve(sig)),
    );
    clearTimeout(timer);
    clearTimeout(guard);
    return { acks, readied, stderr, signal };
  }

  /** Rows of a SQLite session as stored: count, distinct seqs, min and max. */
  function sqliteRows(path: string, id: string): { n: number; distinct: number; max: number } {
    const db = new Database(path, { readonly: true });
    try {
      const row = db
        .prepare(
          "SELECT count(*) AS n, count(DISTINCT seq) AS distinct_, coalesce(max(seq), -1) AS max FROM events WHERE session_id = ?",
        )
        .get(id) as { n: number; distinct_: number; max: number };
      return { n: row.n, distinct: row.distinct_, max: row.max };
    } finally {
      db.close();
    }
  }

  /** The seqs of a JSONL log's lines, as stored (every line must parse). */
  function jsonlSeqs(path: string): { seqs: number[]; tornTail: boolean } {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return { seqs: [], tornTail: false };
    }
    const lines = text.split("\n");
    const tornTail = lines.pop() !== "";
    return {
      seqs: lines.slice(1).map((line) => (JSON.parse(line) as { seq: number }).seq),
      tornTail,
    };
  }

  async function killLoop(kind: Kind): Promise<void> {
    const dir = join(root, kind);
    const location = kind === "sqlite" ? join(dir, "store.db") : join(dir, "jsonl");
    mkdirSync(dir, { recursive: true });
    const id = `r1-${kind}`;
    const rng = new Prng(kind === "sqlite" ? 101 : 202);
    const acked: Ack[] = [];
    let kills = 0;
    let killedBeforeReady = 0;
    let interruptedClosed = 0;
    let tornTails = 0;
    const started = Date.now();
    for (let cycle = 0; cycle < KILLS_PER_BACKEND; cycle++) {
      const durability: Durability = cycle % 2 === 0 ? "fsync" : "process";
      // Most kills land while appending; every fifth at a random moment from spawn (while it
      // starts, opens the store or repairs the last kill's damage).
      const fromReady = cycle % 5 !== 4;
      // Kills from ready land within 80 ms: a writer appends tens of thousands of events a second
      // without fsync, and each reopen reads the whole log, so longer lives only slow the test.
      const delay = fromReady ? rng.int(0, 80) : rng.int(50, 700);
      const life = await runWriter(
        [kind, location, id, durability, String(1000 + cycle)],
        delay,
        fromReady,
      );
      expect(life.signal, `writer ${cycle} ended on its own: ${life.stderr}`).toBe("SIGKILL");
      kills++;
      if (!life.readied) killedBeforeReady++;
      acked.push(...life.acks);

      if (kind === "jsonl" && jsonlSeqs(join(location, "sessions", logFileName(id))).tornTail) {
        tornTails++;
      }
      // A reader first: it sees the log as stored, and changes nothing.
      const store = new SessionStore({ backend: await openBackend(kind, location, "fsync") });
      const read = await store.get(id);
      if (read === undefined) {
        expect(acked).toEqual([]);
        await store.close();
        continue;
      }
      const asRead = await read.readEvents();
      // Then the next writer: the log opens, repaired.
      const session = await store.openForWriting(id);
      const events = await session.readEvents();
      expect(events.slice(0, asRead.length)).toEqual(asRead);
      for (const [seq, event] of events.entries()) expect(event.seq).toBe(seq);
      for (const ack of acked) {
        expect(hashOf(events.slice(ack.from, ack.from + ack.count)), `ack at ${ack.from}`).toBe(
          ack.hash,
        );
      }
      let lastMarker: SessionEvent | undefined;
      let interrupted = 0;
      for (const event of events) {
        if (event.type === "turn/start" || event.type === "turn/end") lastMarker = event;
        if (event.type === "turn/end" && event.data.reason.kind === "interrupted") interrupted++;
      }
      if (lastMarker !== undefined) expect(lastMarker.type).toBe("turn/end");
      interruptedClosed = interrupted;
      await store.close();

      // The stored form agrees: no duplicate or missing seq, no torn line left.
      if (kind === "sqlite") {
        const rows = sqliteRows(location, id);
        expect(rows).toEqual({ n: events.length, distinct: events.length, max: events.length - 1 });
      } else {
        const stored = jsonlSeqs(join(location, "sessions", logFileName(id)));
        expect(stored.tornTail).toBe(false);
        expect(stored.seqs).toEqual(events.map((event) => event.seq));
      }
      // A second reopen sees the same log: the repair was stored.
      const again = new SessionStore({ backend: await openBackend(kind, location, "fsync") });
      expect(await (await again.load(id)).readEvents()).toEqual(events);
      await again.close();
    }
    const final = new SessionStore({ backend: await openBackend(kind, location, "fsync") });
    const length = (await final.load(id)).nextSeq;
    await final.close();
    console.log(
      `R1 ${kind}: ${kills} SIGKILLs (${killedBeforeReady} before the writer was ready), ` +
        `${acked.length} acknowledged batches (${acked.reduce((n, a) => n + a.count, 0)} events) all present, ` +
        `${interruptedClosed} interrupted turns closed by repair, ${tornTails} torn tails cut, ` +
        `final log ${length} events, no duplicate or missing seq, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(kills).toBeGreaterThanOrEqual(30);
  }

  describe.concurrent("R1 kill -9 while appending", () => {
    it(`keeps every acknowledged JSONL batch through ${KILLS_PER_BACKEND} SIGKILLs, closing interrupted turns`, async () => {
      await killLoop("jsonl");
    }, 300_000);
    it(`keeps every acknowledged SQLite batch through ${KILLS_PER_BACKEND} SIGKILLs, closing interrupted turns`, async () => {
      await killLoop("sqlite");
    }, 300_000);
  });
}
