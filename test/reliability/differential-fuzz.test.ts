// R6 (docs/performance.md): random valid logs written through memory, JSONL, SQLite and PostgreSQL read back identically, equal to the input.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type SyntheticShape, syntheticTurns } from "../../scripts/bench/synthetic-log.js";
import {
  type Durability,
  deriveReplayScript,
  interruptedTurnClosers,
  JsonlBackend,
  MemoryBackend,
  type SessionBackend,
  type SessionEvent,
  type SessionHeader,
  SessionStore,
  SqliteBackend,
} from "../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { validLogArb } from "../helpers/log-arbitrary.js";
import {
  makePostgresHarness,
  POSTGRES_SKIP,
  type PostgresHarness,
} from "../helpers/postgres-harness.js";

const RUNS = 300;
const root = mkdtempSync(join(tmpdir(), "seedline-r6-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SMALL: SyntheticShape = {
  deltaChars: 12,
  resultChars: [0, 120],
  steps: [1, 4],
  chunks: [12, 24],
};

/** Realistic logs too: 1–3 generated turns (tool calls, usage, finish chunks), whole or cut short. */
const syntheticArb: fc.Arbitrary<SessionEvent[]> = fc
  .record({ seed: fc.nat(), turns: fc.integer({ min: 1, max: 3 }), cut: fc.nat() })
  .map(({ seed, turns, cut }) => {
    const events: SessionEvent[] = [];
    for (const turn of syntheticTurns(seed, SMALL)) {
      if (turns-- === 0) break;
      events.push(...turn);
    }
    // Every other log ends inside its last turn: the store must close it on read.
    return cut % 2 === 0 ? events : events.slice(0, events.length - 1 - (cut % 7));
  });

/** The backends compared; PostgreSQL joins when the test server answers (see postgres-harness). */
const BACKENDS = [
  "memory",
  "jsonl",
  "sqlite",
  ...(POSTGRES_SKIP === undefined ? (["postgres"] as const) : []),
] as const;
type Kind = "memory" | "jsonl" | "sqlite" | "postgres";

const memories = new Map<string, MemoryBackend>();
/** One fresh PostgreSQL schema per storage name, dropped when that round is read back. */
const schemas = new Map<string, PostgresHarness>();

/** A backend of `kind` over the storage `dir` (the same storage when opened again). */
async function open(kind: Kind, dir: string, durability: Durability): Promise<SessionBackend> {
  switch (kind) {
    case "memory": {
      const kept = memories.get(dir) ?? new MemoryBackend();
      memories.set(dir, kept);
      return kept;
    }
    case "jsonl":
      return new JsonlBackend(join(dir, "jsonl"), { durability });
    case "sqlite":
      mkdirSync(dir, { recursive: true });
      return SqliteBackend.open(join(dir, "store.db"), { durability });
    case "postgres": {
      const harness = schemas.get(dir) ?? (await makePostgresHarness());
      schemas.set(dir, harness);
      return harness.open({ durability });
    }
  }
}

/** Everything a reader can observe of a session written through one backend, after a reopen. */
interface Observed {
  readonly events: readonly SessionEvent[];
  readonly exported: string;
  readonly listed: unknown;
  readonly messages: unknown;
  readonly script: unknown;
  readonly reimported: string;
}

let run = 0;

async function writeAndRead(
  kind: Kind,
  events: readonly SessionEvent[],
  seedLength: number,
  sizes: readonly number[],
  durability: Durability,
): Promise<Observed> {
  const dir = join(root, `${run}-${kind}`);
  const clock = () => 1_760_000_000_000;
  const writer = new SessionStore({ backend: await open(kind, dir, durability), now: clock });
  const session = await writer.create({
    id: "s",
    seed: events.slice(0, seedLength),
    meta: { cwd: "/r6", createdAt: 42 },
  });
  let at = seedLength;
  for (let i = 0; at < events.length; i++) {
    const size = sizes[i % sizes.length] as number;
    await session.append(events.slice(at, at + size));
    at += size;
  }
  await writer.close();
  const reader = new SessionStore({ backend: await open(kind, dir, durability), now: clock });
  try {
    // Opened for writing, as the next writer would: a log ending inside a turn gets its closers.
    const loaded = await reader.openForWriting("s");
    const exported = await reader.exportLog("s");
    await reader.importLog(exported, { sessionId: "copy" });
    let script: unknown;
    try {
      script = deriveReplayScript(await loaded.readEvents(), "s");
    } catch (error) {
      script = (error as { code?: unknown }).code;
    }
    return {
      events: await loaded.readEvents(),
      exported,
      listed: (await reader.list()).sessions.map((s) => s.header.id),
      messages: loaded.deriveMessages(),
      script,
      reimported: await reader.exportLog("copy"),
    };
  } finally {
    await reader.close();
    memories.delete(dir);
    await schemas.get(dir)?.cleanup();
    schemas.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("R6 differential fuzz", () => {
  it(`reads ${RUNS} random valid logs back identically through ${BACKENDS.join(", ")}, equal to the input${POSTGRES_SKIP === undefined ? "" : ` (PostgreSQL skipped: ${POSTGRES_SKIP})`}`, async () => {
    let logs = 0;
    let events = 0;
    let open = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(validLogArb, syntheticArb),
        fc.nat(),
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom<Durability>("fsync", "process"),
        async (input, seedPick, sizes, durability) => {
          run++;
          logs++;
          events += input.length;
          const seedLength = seedPick % (input.length + 1);
          const results: Observed[] = [];
          for (const kind of BACKENDS) {
            results.push(await writeAndRead(kind, input, seedLength, sizes, durability));
          }
          const [first, ...rest] = results as [Observed, ...Observed[]];
          // Equal to the input: the same events, then the closers of a log left inside a turn.
          const closers = interruptedTurnClosers(input);
          if (closers.length > 0) open++;
          expect(first.events).toEqual([...input, ...closers]);
          const header: SessionHeader = { version: 0, id: "s", createdAt: 42, cwd: "/r6" };
          expect(first.exported).toBe(
            formatHeaderLine(header) + [...input, ...closers].map(formatEventLine).join(""),
          );
          expect(first.reimported).toBe(first.exported.replace('"id":"s"', '"id":"copy"'));
          // Both were created at 42: newest first, then by id descending.
          expect(first.listed).toEqual(["s", "copy"]);
          // Identical across backends, every observation.
          for (const other of rest) expect(other).toEqual(first);
        },
      ),
      { numRuns: RUNS, seed: 0x5eed1 },
    );
    console.log(
      `R6: ${logs} random valid logs (${events} events, ${open} ending inside a turn) written through ${BACKENDS.join(", ")} in random batches and read back: identical across backends (events, export, re-import, list, derived messages, replay script) and equal to the input`,
    );
  }, 600_000);
});
