// R5 (docs/performance.md): two processes on one store — different sessions never see SQLITE_BUSY; on one session one writer wins and lines never interleave.
// This file is also the second process: run with SEEDLINE_R5_CHILD=1 it plays one writer.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { type SyntheticShape, syntheticTurns } from "../../scripts/bench/synthetic-log.js";
import {
  JsonlBackend,
  type SessionBackend,
  type SessionEvent,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import { simpleTurn } from "../helpers/builders.js";

const CHILD_FLAG = "SEEDLINE_R5_CHILD";
const SESSIONS_PER_PROCESS = 4;
const TURNS_PER_SESSION = 12;
const SHAPE: SyntheticShape = {
  deltaChars: 30,
  resultChars: [50, 400],
  steps: [1, 2],
  chunks: [12, 30],
};
const SHARED = "shared";

type Kind = "jsonl" | "sqlite";

async function openBackend(kind: Kind, location: string): Promise<SessionBackend> {
  return kind === "sqlite" ? SqliteBackend.open(location) : new JsonlBackend(location);
}

/** What a writer process reports on its last stdout line. */
interface Outcome {
  readonly name: string;
  readonly role: "writer" | "read-only" | "n/a";
  readonly ok: number;
  readonly errors: Record<string, number>;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : String(error);
}

/** Waits for the parent's "go" line on stdin, so that both processes start together. */
function go(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.on("data", (chunk: Buffer) => {
      if (!chunk.toString("utf8").includes("go")) return;
      // An open stdin would keep this process alive after its work.
      process.stdin.destroy();
      resolve();
    });
  });
}

/** The turns a writer appends to a session: its own text, so two writers' events differ. */
function turnsFor(
  name: string,
  fromSeq: number,
  firstTurn: number,
  count: number,
): SessionEvent[][] {
  const seed = [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  const turns: SessionEvent[][] = [];
  for (const turn of syntheticTurns(seed, SHAPE, fromSeq, firstTurn)) {
    if (turns.length === count) break;
    turns.push(turn);
  }
  return turns;
}

/** Splits a turn into batches of 5 events. */
function batches(turn: readonly SessionEvent[]): SessionEvent[][] {
  const out: SessionEvent[][] = [];
  for (let i = 0; i < turn.length; i += 5) out.push(turn.slice(i, i + 5));
  return out;
}

async function child(): Promise<void> {
  const [mode, kind, location, name] = process.argv.slice(2) as [string, Kind, string, string];
  const store = new SessionStore({ backend: await openBackend(kind, location) });
  const errors: Record<string, number> = {};
  const note = (error: unknown) => {
    const code = codeOf(error);
    errors[code] = (errors[code] ?? 0) + 1;
  };
  let ok = 0;
  let role: Outcome["role"] = "n/a";
  if (mode === "different") {
    process.stdout.write("ready\n");
    await go();
    // Every session of this process appends at once: group commits race the other process's.
    await Promise.all(
      Array.from({ length: SESSIONS_PER_PROCESS }, async (_, k) => {
        try {
          const session = await store.create({ id: `${name}-${k}`, meta: { cwd: "/r5" } });
          for (const turn of turnsFor(`${name}-${k}`, 0, 1, TURNS_PER_SESSION)) {
            for (const batch of batches(turn)) {
              await store.append(session, batch);
              ok++;
            }
          }
        } catch (error) {
          note(error);
        }
      }),
    );
  } else {
    let session = await store.load(SHARED);
    // Taking the writer lock is what decides the winner; a loser holds a read-only view.
    const probe = await store.append(session, []).then(
      () => "writer" as const,
      () => "read-only" as const,
    );
    role = probe;
    process.stdout.write(`ready ${role}\n`);
    await go();
    let lastTurn = 0;
    for (const event of await session.readEvents())
      if (event.type === "turn/start") lastTurn = event.data.turn;
    // Computed from what this process saw before "go": stale for the loser once the winner wrote.
    const planned = turnsFor(name, session.nextSeq, lastTurn + 1, 2).flatMap(batches);
    const deadline = Date.now() + 20_000;
    let next = 0;
    while (next < planned.length && Date.now() < deadline) {
      try {
        await store.append(session, planned[next] as SessionEvent[]);
        ok++;
        next++;
        // The winner takes its time, so that the loser keeps finding the session busy.
        await new Promise((wait) => setTimeout(wait, 15));
      } catch (error) {
        note(error);
        if (codeOf(error) !== "SESSION_BUSY") break;
        await new Promise((wait) => setTimeout(wait, 25));
        await store.unload(SHARED);
        session = await store.load(SHARED);
      }
    }
  }
  await store.close();
  const outcome: Outcome = { name, role, ok, errors };
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}

if (process.env[CHILD_FLAG] === "1") {
  await child();
} else {
  const root = mkdtempSync(join(tmpdir(), "seedline-r5-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Starts two writer processes, releases them together, and returns what each reported. */
  async function twoWriters(args: (name: string) => string[]): Promise<{
    outcomes: Outcome[];
    ready: string[];
  }> {
    const names = ["a", "b"];
    const ready: string[] = [];
    const children: { child: ChildProcess; out: string[] }[] = names.map((name) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", import.meta.filename, ...args(name)],
        { env: { ...process.env, [CHILD_FLAG]: "1" }, stdio: ["pipe", "pipe", "inherit"] },
      );
      const out: string[] = [];
      let pending = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        pending += chunk.toString("utf8");
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        out.push(...lines);
      });
      return { child, out };
    });
    const readyAll = children.map(
      ({ child, out }) =>
        new Promise<void>((resolve, reject) => {
          const timer = setInterval(() => {
            const line = out.find((l) => l.startsWith("ready"));
            if (line !== undefined) {
              clearInterval(timer);
              ready.push(line);
              resolve();
            }
          }, 10);
          child.once("exit", (code) => {
            clearInterval(timer);
            reject(new Error(`writer exited with ${code} before it was ready`));
          });
        }),
    );
    await Promise.all(readyAll);
    for (const { child } of children) child.stdin?.end("go\n");
    const outcomes = await Promise.all(
      children.map(
        ({ child, out }) =>
          new Promise<Outcome>((resolve, reject) => {
            child.once("exit", (code) => {
              const last = out.at(-1);
              if (code !== 0 || last === undefined) reject(new Error(`writer exited with ${code}`));
              else resolve(JSON.parse(last) as Outcome);
            });
          }),
      ),
    );
    return { outcomes, ready };
  }

  /** The stored seqs of a session, read below the SDK: SQLite rows, or every JSONL line parsed. */
  function storedSeqs(kind: Kind, location: string, id: string): number[] {
    if (kind === "sqlite") {
      const db = new Database(location, { readonly: true });
      try {
        return (
          db.prepare("SELECT seq FROM events WHERE session_id = ? ORDER BY seq").all(id) as {
            seq: number;
          }[]
        ).map((r) => r.seq);
      } finally {
        db.close();
      }
    }
    const text = readFileSync(join(location, "sessions", logFileName(id)), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    return text
      .split("\n")
      .slice(1, -1)
      .map((line) => (JSON.parse(line) as { seq: number }).seq);
  }

  function locationOf(kind: Kind, label: string): string {
    const dir = join(root, `${kind}-${label}`);
    mkdirSync(dir, { recursive: true });
    return kind === "sqlite" ? join(dir, "store.db") : join(dir, "jsonl");
  }

  /**
   * A backend whose `loadFrom` lets `between` run after it has read the log and before it returns:
   * the moment another process may still append and let go of the session.
   */
  function pausingLoad(backend: SessionBackend, between: () => Promise<void>): SessionBackend {
    return new Proxy(backend, {
      get(target, prop) {
        if (prop === "loadFrom") {
          return async (id: string, fromSeq: number) => {
            const read = await target.loadFrom(id, fromSeq);
            await between();
            return read;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  describe("R5 two writers, one session, deterministic interleaving", () => {
    for (const kind of ["sqlite", "jsonl"] as Kind[]) {
      // Two stores over two backend instances hold locks apart, as two processes do; the pause
      // puts the other writer's last append exactly between this process's read (which takes no
      // lock) and its opening the session for writing. The read saw an open turn; repairing that
      // read would cut the acknowledged batch: the writer must read again under its lock.
      it(`never repairs away a ${kind} batch another writer acknowledged between a reader's read and its lock`, async () => {
        const location = locationOf(kind, "interleaved");
        const turn = simpleTurn(0, 1, { steps: 2, toolCallsPerStep: 1 });
        const first = new SessionStore({ backend: await openBackend(kind, location) });
        const writing = await first.create({ id: "interleaved" });
        await writing.append(turn.slice(0, 5));
        let acknowledged = 5;
        const second = new SessionStore({
          backend: pausingLoad(await openBackend(kind, location), async () => {
            if (acknowledged !== 5) return;
            acknowledged = await writing.append(turn.slice(5));
            await first.unload("interleaved");
          }),
        });
        const seen = await second.load("interleaved");
        expect(seen.openTurn).toBe(1);
        const opened = await second.openForWriting("interleaved");
        expect(opened.openTurn).toBeUndefined();
        await second.close();
        await first.close();
        const reopened = new SessionStore({ backend: await openBackend(kind, location) });
        const stored = await (await reopened.load("interleaved")).readEvents();
        await reopened.close();
        console.log(
          `R5 ${kind} interleaved: the writer acknowledged ${acknowledged} events; the reader's read returned ${seen.nextSeq} and the store now holds ${stored.length}`,
        );
        expect(acknowledged).toBe(turn.length);
        expect(stored.slice(0, acknowledged)).toEqual(turn);
      }, 60_000);
    }
  });

  describe.concurrent("R5 two processes, one store", () => {
    for (const kind of ["sqlite", "jsonl"] as Kind[]) {
      it(`lets two processes append to different ${kind} sessions at once with no error reaching a caller`, async () => {
        const location = locationOf(kind, "different");
        // Stamp the store first, so that both processes open an existing one.
        await (await openBackend(kind, location)).close();
        const { outcomes } = await twoWriters((name) => ["different", kind, location, name]);
        for (const outcome of outcomes) expect(outcome.errors, outcome.name).toEqual({});
        const store = new SessionStore({ backend: await openBackend(kind, location) });
        let events = 0;
        for (const name of ["a", "b"]) {
          for (let k = 0; k < SESSIONS_PER_PROCESS; k++) {
            const id = `${name}-${k}`;
            const expected = turnsFor(id, 0, 1, TURNS_PER_SESSION).flat();
            const session = await store.load(id);
            expect(await session.readEvents()).toEqual(expected);
            expect(storedSeqs(kind, location, id)).toEqual(expected.map((e) => e.seq));
            events += expected.length;
          }
        }
        await store.close();
        const appends = outcomes.reduce((n, o) => n + o.ok, 0);
        console.log(
          `R5 ${kind} different sessions: 2 processes × ${SESSIONS_PER_PROCESS} sessions, ${appends} concurrent appends (${events} events), 0 errors reached a caller${kind === "sqlite" ? " (no SQLITE_BUSY)" : ""}; every log complete, seqs contiguous`,
        );
      }, 120_000);

      it(`lets one of two processes write the same ${kind} session; the other gets SESSION_BUSY or SEQ_CONFLICT and nothing interleaves`, async () => {
        const location = locationOf(kind, "same");
        const seed = turnsFor("seed", 0, 1, 1).flat();
        const setup = new SessionStore({ backend: await openBackend(kind, location) });
        await setup.create({ id: SHARED, seed, meta: { cwd: "/r5" } });
        await setup.close();
        const { outcomes, ready } = await twoWriters((name) => ["same", kind, location, name]);
        const winners = outcomes.filter((o) => o.ok > 0);
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        const winner = winners[0] as Outcome;
        const loser = outcomes.find((o) => o !== winner) as Outcome;
        expect(winner.errors).toEqual({});
        expect(loser.ok).toBe(0);
        const loserCodes = Object.keys(loser.errors);
        expect(loserCodes.length).toBeGreaterThan(0);
        for (const code of loserCodes) expect(["SESSION_BUSY", "SEQ_CONFLICT"]).toContain(code);
        expect(ready.filter((line) => line === "ready writer")).toHaveLength(1);

        const expected = [
          ...seed,
          ...turnsFor(winner.name, seed.length, 2, 2).flatMap(batches).slice(0, winner.ok).flat(),
        ];
        const store = new SessionStore({ backend: await openBackend(kind, location) });
        expect(await (await store.load(SHARED)).readEvents()).toEqual(expected);
        await store.close();
        expect(storedSeqs(kind, location, SHARED)).toEqual(expected.map((e) => e.seq));
        console.log(
          `R5 ${kind} same session: writer ${winner.name} appended ${winner.ok} batches; ${loser.name} got ${JSON.stringify(loser.errors)} and wrote nothing; ${expected.length} events, no interleaved line, no duplicate seq`,
        );
      }, 120_000);
    }
  });
}
