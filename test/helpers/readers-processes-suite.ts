// docs/readers.md across real server processes (dist/src/rpc/stdio-main.js) on every durable store: readers never make the
// writer wait, every read is current, sessions are stored at creation, and session/watch delivers every event exactly
// once and in order across writer crashes and restarts, ends on unwatch, close, delete, and a client that cannot keep up.
// On PostgreSQL the two servers stand for two machines: two processes on one schema.
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import {
  type ClientWatch,
  ConnectionClosedError,
  RpcResponseError,
  type SeedlineClient,
  type SessionEvent,
  type WatchBatch,
} from "../../src/index.js";
import {
  assistantChunk,
  balancedLog,
  simpleTurn,
  stepEnd,
  stepStart,
  TIME,
  turnEnd,
  turnStart,
  userMessage,
} from "./builders.js";
import { atFileEnd } from "./file-end.js";
import {
  dropSchema,
  freshSchemaName,
  POSTGRES_SKIP,
  POSTGRES_TEST_URL,
} from "./postgres-harness.js";
import { expectCode, STDIO_MAIN, spawnedClient, tempDir } from "./rpc-fixtures.js";
import { waitUntil } from "./waits.js";

/** This test file's folder of stores and the PostgreSQL schemas it created, removed after it. */
let made: { temp: ReturnType<typeof tempDir>; schemas: string[] } | undefined;
function scratch(): NonNullable<typeof made> {
  if (made === undefined) {
    const current = { temp: tempDir("seedline-readers-"), schemas: [] as string[] };
    made = current;
    atFileEnd(async () => {
      made = undefined;
      current.temp.remove();
      // The first server on each schema creates it.
      for (const schema of current.schemas) await dropSchema(schema);
    });
  }
  return made;
}

const KINDS = ["jsonl", "sqlite", "postgres"] as const;
type Kind = (typeof KINDS)[number];

let stores = 0;
/** A fresh store URL of `kind`: every server of one test opens the same one. */
function freshStore(kind: Kind): string {
  stores++;
  const { temp, schemas } = scratch();
  if (kind === "jsonl") return `jsonl:${temp.dir}/store-${stores}`;
  if (kind === "sqlite") return `sqlite:${temp.dir}/store-${stores}.db`;
  const schema = freshSchemaName();
  schemas.push(schema);
  const url = new URL(POSTGRES_TEST_URL);
  url.searchParams.set("schema", schema);
  return url.toString();
}

/** How long a predicate may take to come true: generous, it is never a timing assertion. */
/** Polls `predicate` until it holds; fails after 30 s naming `what`. */
function waitFor(predicate: () => boolean, what: string): Promise<void> {
  return waitUntil(predicate, what, 30_000);
}

// ---------------------------------------------------------------------------------------------
// Server processes

/** A spawned server with a typed client on its stdio. */
interface Server {
  readonly client: SeedlineClient;
  readonly child: ChildProcess;
  stderr(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** Ends its input; it must exit 0 having logged nothing. */
  close(): Promise<void>;
}

/** Every process a test started, killed after it when still alive (see {@link defineReadersSuite}). */
const running = new Set<ChildProcess>();
function killRunning(): void {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  running.clear();
}

/** Starts a server on `url` and waits until it answers (its store is open). */
async function startServer(url: string, extraArgs: readonly string[] = []): Promise<Server> {
  const { client, stderr } = spawnedClient(url, "ndjson", extraArgs);
  const child = client.process as ChildProcess;
  running.add(child);
  await client.sessionList({ limit: 1 }).catch((error: unknown) => {
    throw new Error(`expected the server to start: ${String(error)}; stderr ${stderr()}`);
  });
  return {
    client,
    child,
    stderr,
    async kill() {
      child.kill("SIGKILL");
      expect(await client.exited).toEqual({ code: null, signal: "SIGKILL" });
    },
    async close() {
      await client.close();
      expect(await client.exited).toEqual({ code: 0, signal: null });
      expect(stderr()).toBe("");
    },
  };
}

/** A JSON-RPC message as a raw client reads it. */
interface Message {
  readonly id?: number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** The params of a session/events notification. */
interface EventsParams {
  readonly watchId: string;
  readonly sessionId: string;
  readonly events: SessionEvent[];
  readonly nextSeq: number;
  readonly end?: {
    reason: string;
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
}

/**
 * A server driven by hand over NDJSON: every message it wrote is kept in arrival order, so a test
 * can tell what came before and after an answer, and its stdout can be left unread (paused).
 */
class RawServer {
  readonly child: ChildProcess;
  readonly messages: Message[] = [];
  #stderr = "";
  #pending = "";
  #nextId = 1;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(url: string, extraArgs: readonly string[] = []) {
    this.child = spawn(
      process.execPath,
      [STDIO_MAIN, "--store", url, "--framing", "ndjson", ...extraArgs],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    running.add(this.child);
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString("utf8");
    });
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.#pending += chunk.toString("utf8");
      const lines = this.#pending.split("\n");
      this.#pending = lines.pop() ?? "";
      for (const line of lines) this.messages.push(JSON.parse(line) as Message);
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Sends a request; returns its id. */
  send(method: string, params: unknown): number {
    const id = this.#nextId++;
    this.child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return id;
  }

  /** Where the answer to `id` is among the messages read, once it is read. */
  async answerIndex(id: number): Promise<number> {
    await waitFor(
      () => this.messages.some((m) => m.id === id),
      `the answer to request ${id} (server exit ${this.child.exitCode ?? this.child.signalCode}, stderr ${JSON.stringify(this.#stderr)})`,
    );
    return this.messages.findIndex((m) => m.id === id);
  }

  /** The answer to `id`, once read; an error answer fails the test. */
  async result(id: number): Promise<Record<string, unknown>> {
    const answer = this.messages[await this.answerIndex(id)] as Message;
    expect(answer.error).toBeUndefined();
    return answer.result as Record<string, unknown>;
  }

  /** A request and its successful result. */
  async call(method: string, params: unknown): Promise<Record<string, unknown>> {
    return this.result(this.send(method, params));
  }

  /** The session/events notifications of `watchId` read so far, with their positions. */
  notifications(watchId: string): { index: number; params: EventsParams }[] {
    const found: { index: number; params: EventsParams }[] = [];
    this.messages.forEach((m, index) => {
      const params = m.params as EventsParams | undefined;
      if (m.method === "session/events" && params?.watchId === watchId)
        found.push({ index, params });
    });
    return found;
  }

  /** Ends its input; it must exit 0. */
  async close(): Promise<void> {
    this.child.stdin?.end();
    expect(await this.exited).toEqual({ code: 0, signal: null });
  }
}

// ---------------------------------------------------------------------------------------------
// Events and watches

/** An assistant chunk carrying `text` (one event of a streamed step). */
function chunk(seq: number, turn: number, step: number, text: string): SessionEvent {
  return assistantChunk(seq, turn, step, { type: "text-delta", index: 0, text });
}

/** The opening of a turn: turn/start, user/message, step/start (3 events from `seq`). */
function turnOpening(seq: number, turn: number): SessionEvent[] {
  return [
    turnStart(seq, turn),
    userMessage(seq + 1, `prompt ${turn}`),
    stepStart(seq + 2, turn, 1),
  ];
}

/** Expects batches to carry consecutive seqs from `from`, each batch starting where the last ended. */
function expectContiguous(
  batches: readonly { events: readonly SessionEvent[]; nextSeq: number }[],
  from: number,
): void {
  let next = from;
  for (const batch of batches) {
    for (const event of batch.events) {
      expect(event.seq, "every event exactly once, in order, no gap").toBe(next);
      next++;
    }
    expect(batch.nextSeq).toBe(next);
  }
}

/** Reads a typed client watch in the background and keeps what it delivered. */
class Collector {
  readonly batches: WatchBatch[] = [];
  readonly events: SessionEvent[] = [];
  readonly start: number;
  deleted = false;
  done = false;
  error: unknown;
  readonly finished: Promise<void>;
  readonly watch: ClientWatch;

  private constructor(watch: ClientWatch, start: number) {
    this.watch = watch;
    this.start = start;
    this.finished = (async () => {
      try {
        for await (const batch of watch) {
          this.batches.push(batch);
          this.events.push(...batch.events);
          if (batch.deleted === true) this.deleted = true;
        }
      } catch (error) {
        this.error = error;
      }
      this.done = true;
    })();
  }

  /** Opens a watch of `sessionId` on `client` and starts collecting once it is answered. */
  static async open(
    client: SeedlineClient,
    sessionId: string,
    fromSeq?: number,
  ): Promise<Collector> {
    const watch = client.watch(sessionId, fromSeq === undefined ? {} : { fromSeq });
    const { nextSeq } = await watch.ready;
    return new Collector(watch, nextSeq);
  }

  /** The seq after the last event delivered. */
  get nextSeq(): number {
    return this.start + this.events.length;
  }

  /** Waits until every event before `seq` was delivered. */
  async reach(seq: number): Promise<void> {
    await waitFor(() => this.nextSeq >= seq || this.done, `the watch to deliver up to seq ${seq}`);
    if (this.error !== undefined) {
      throw new Error(`expected the watch to go on, it ended: ${String(this.error)}`);
    }
    expect(this.nextSeq).toBe(seq);
  }

  /** Exactly once and in order: every batch carries the seqs after the previous one's. */
  expectContiguous(): void {
    expectContiguous(this.batches, this.start);
  }
}

/** Every event of a session as the client's server reads it now. */
async function readAll(client: SeedlineClient, sessionId: string) {
  return client.sessionRead({ sessionId });
}

// ---------------------------------------------------------------------------------------------

/**
 * Registers the suite for one store kind — one test file per kind, so that the kinds run side by
 * side — and, with `jsonl`, the case of a missing session.
 */
export function defineReadersSuite(kind: Kind): void {
  // In the test file's own suite: this module outlives the file.
  afterEach(killRunning);
  const title = `readers and watches across server processes (${kind} store)`;
  if (kind === "postgres" && POSTGRES_SKIP !== undefined) {
    describe.skip(`${title} — skipped: ${POSTGRES_SKIP}`, () => {
      it("runs every case", () => {});
    });
  } else {
    describe(title, () => readersSuite(kind));
  }
  if (kind === "jsonl") missingSessionSuite();
}

function readersSuite(kind: Kind): void {
  /**
   * Every read B offers — read, list, messages, export, a fork of it — expecting the session to
   * hold `length` events ending with a whole turn. Returns nothing; it only must not hold A up.
   */
  async function readEverything(
    b: SeedlineClient,
    sessionId: string,
    length: number,
    tag: string,
  ): Promise<void> {
    const page = await b.sessionRead({ sessionId });
    expect(page).toMatchObject({ nextSeq: length, done: true });
    expect(page.events).toHaveLength(length);
    expect(page.openTurn).toBeUndefined();
    const listed = await b.sessionList({});
    expect(listed.sessions.find((s) => s.sessionId === sessionId)).toMatchObject({
      eventCount: length,
    });
    expect((await b.sessionMessages({ sessionId })).messages.length).toBeGreaterThan(0);
    const exported = await b.sessionExport({ sessionId });
    expect(exported.log.split("\n")).toHaveLength(length + 2);
    const fork = await b.sessionFork({ sessionId, childSessionId: `${sessionId}-${tag}` });
    expect(fork.header).toMatchObject({ parentSession: sessionId, seedLength: length });
  }

  it("never lets a reader make the writer wait: no SESSION_BUSY after reads, also across a writer restart", async () => {
    // Old code: a read took the session's writer lock and kept it until the idle timeout (60 s).
    // While A lives it holds the lock itself, but once A is killed B's reads take it, and the
    // restarted A's first append fails with SESSION_BUSY ("append of turn 3" below).
    const url = freshStore(kind);
    let a = await startServer(url);
    const b = await startServer(url);
    const id = "busy";
    await a.client.sessionCreate({ sessionId: id, cwd: "/w/busy" });
    let next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(0, 1) })).nextSeq;
    const watch = await Collector.open(b.client, id, 0);
    await readEverything(b.client, id, next, "f1");

    // A appends at once after B's reads.
    next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(next, 2) })).nextSeq;
    await readEverything(b.client, id, next, "f2");

    // A dies; B reads while no writer lives; a new A appends at once.
    await a.kill();
    await readEverything(b.client, id, next, "f3");
    a = await startServer(url);
    next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(next, 3) })).nextSeq;
    await readEverything(b.client, id, next, "f4");

    // A stops cleanly (releasing its lock); B reads; the next A appends at once.
    await a.close();
    await readEverything(b.client, id, next, "f5");
    a = await startServer(url);
    next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(next, 4) })).nextSeq;

    await watch.reach(next);
    watch.expectContiguous();
    expect(watch.events).toEqual((await readAll(b.client, id)).events);
    await a.close();
    await b.close();
  });

  it("answers every read with what is durable now: each of a thousand reads sees the append acknowledged before it", async () => {
    // Old code: B kept serving the snapshot it loaded at its first read, so the read after the
    // second append already missed it (nextSeq 4 expected, 3 served). A thousand pairs (there were
    // 2,000) keep ten listings among them and cost half the time: the old code failed at the second.
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const id = "fresh";
    const appends = 1000;
    await a.client.sessionCreate({ sessionId: id, cwd: "/w/fresh" });
    let next = (await a.client.sessionAppend({ sessionId: id, events: turnOpening(0, 1) })).nextSeq;
    const started = Date.now();
    for (let i = 0; i < appends; i++) {
      const event = chunk(next, 1, 1, `chunk ${i}`);
      const acked = (await a.client.sessionAppend({ sessionId: id, events: [event] })).nextSeq;
      expect(acked).toBe(next + 1);
      next = acked;
      // Issued only after A's acknowledgement: it must include the event.
      const page = await b.client.sessionRead({ sessionId: id, fromSeq: next - 1 });
      expect(page.nextSeq).toBe(next);
      expect(page.done).toBe(true);
      expect(page.events).toEqual([event]);
      expect(page.openTurn).toBe(1);
      if (i % 100 === 99) {
        const listed = await b.client.sessionList({ cwd: "/w/fresh" });
        expect(listed.sessions.map((s) => [s.sessionId, s.eventCount])).toEqual([[id, next]]);
      }
    }
    const elapsed = Date.now() - started;
    next = (
      await a.client.sessionAppend({
        sessionId: id,
        events: [stepEnd(next, 1, 1), turnEnd(next + 1, 1)],
      })
    ).nextSeq;
    const whole = await readAll(b.client, id);
    expect(whole.nextSeq).toBe(next);
    expect(whole.openTurn).toBeUndefined();
    expect(whole.events).toEqual((await readAll(a.client, id)).events);
    console.log(
      `freshness (${kind}): ${appends} appends by A, each read back by B after its acknowledgement, in ${elapsed} ms (${((elapsed / appends) * 1000).toFixed(0)} µs a pair)`,
    );
    await a.close();
    await b.close();
  });

  it("stores a session at session/new: another process lists, reads, watches and forks it before its first event", async () => {
    // Old code: session/new stored nothing until the first append, so B's list had no entry for it
    // and B's read answered SESSION_NOT_FOUND.
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const { sessionId } = await a.client.sessionNew({ cwd: "/w/new", mcpServers: [] });
    const listed = await b.client.sessionList({ cwd: "/w/new" });
    expect(listed.sessions).toEqual([
      expect.objectContaining({ sessionId, cwd: "/w/new", eventCount: 0 }),
    ]);
    const page = await b.client.sessionRead({ sessionId });
    expect(page).toMatchObject({
      events: [],
      nextSeq: 0,
      done: true,
      header: { id: sessionId, cwd: "/w/new" },
    });
    expect(page.openTurn).toBeUndefined();
    expect((await b.client.sessionMessages({ sessionId })).messages).toEqual([]);
    expect((await b.client.sessionExport({ sessionId })).log.split("\n")).toHaveLength(2);
    const watch = await Collector.open(b.client, sessionId);
    expect(watch.start).toBe(0);
    const fork = await b.client.sessionFork({ sessionId, childSessionId: "child-of-new" });
    expect(fork.header).toMatchObject({
      id: "child-of-new",
      parentSession: sessionId,
      cwd: "/w/new",
    });
    expect(fork.header.seedLength ?? 0).toBe(0);
    expect(await b.client.sessionRead({ sessionId: "child-of-new" })).toMatchObject({
      events: [],
      nextSeq: 0,
    });

    // A, which created it, writes it; B's watch sees the events.
    const turn = simpleTurn(0, 1);
    expect((await a.client.sessionAppend({ sessionId, events: turn })).nextSeq).toBe(turn.length);
    await watch.reach(turn.length);
    expect(watch.events).toEqual(turn);
    const after = (await b.client.sessionList({ cwd: "/w/new" })).sessions;
    expect(after.find((s) => s.sessionId === sessionId)).toMatchObject({ eventCount: turn.length });
    await a.close();
    await b.close();
  });

  it("keeps a watching reader working when the writer is SIGKILLed inside a turn; the next writer's closers reach it once, in order", async () => {
    // Old code: there was no session/watch (method not found), and a read of the interrupted log
    // repaired it itself (taking the writer lock), so no openTurn was ever shown to a reader.
    const url = freshStore(kind);
    let a = await startServer(url);
    const b = await startServer(url);
    const id = "killed";
    const first = simpleTurn(0, 1);
    const l = first.length;
    await a.client.sessionCreate({ sessionId: id, seed: first });
    const watch = await Collector.open(b.client, id);
    expect(watch.start).toBe(l);

    // A partial turn in three appends: turn/start, user/message, step/start and three chunks.
    const partial = [
      ...turnOpening(l, 2),
      chunk(l + 3, 2, 1, "a"),
      chunk(l + 4, 2, 1, "b"),
      chunk(l + 5, 2, 1, "c"),
    ];
    for (const batch of [partial.slice(0, 2), partial.slice(2, 4), partial.slice(4)]) {
      await a.client.sessionAppend({ sessionId: id, events: batch });
    }
    await watch.reach(l + 6);
    await a.kill();

    // B goes on: its watch is alive, its reads show the log as stored, the turn open.
    const stored = await b.client.sessionRead({ sessionId: id });
    expect(stored).toMatchObject({ nextSeq: l + 6, done: true, openTurn: 2 });
    expect(stored.events).toEqual([...first, ...partial]);
    expect((await b.client.sessionMessages({ sessionId: id })).messages.length).toBeGreaterThan(0);
    expect((await b.client.sessionExport({ sessionId: id })).log.split("\n")).toHaveLength(
      l + 6 + 2,
    );
    expect((await b.client.sessionRead({ sessionId: id })).nextSeq).toBe(l + 6);
    expect(watch.done).toBe(false);

    // A' guesses the old next seq: it repairs first, so the guess is refused.
    a = await startServer(url);
    const refused = await expectCode(
      a.client.sessionAppend({ sessionId: id, events: simpleTurn(l + 6, 3) }),
      "SEQ_CONFLICT",
    );
    expect(refused.data).toMatchObject({ expectedSeq: l + 8 });
    const third = simpleTurn(l + 8, 3);
    const end = (await a.client.sessionAppend({ sessionId: id, events: third })).nextSeq;
    expect(end).toBe(l + 8 + third.length);

    await watch.reach(end);
    watch.expectContiguous();
    const closers = watch.events.slice(6, 8);
    expect(closers).toEqual([
      expect.objectContaining({ type: "step/end", seq: l + 6, data: { turn: 2, step: 1 } }),
      expect.objectContaining({
        type: "turn/end",
        seq: l + 7,
        data: { turn: 2, reason: { kind: "interrupted" } },
      }),
    ]);
    expect(watch.events).toEqual([...partial, ...closers, ...third]);
    const repaired = await b.client.sessionRead({ sessionId: id });
    expect(repaired.openTurn).toBeUndefined();
    expect(repaired.events).toEqual([...first, ...watch.events]);
    await a.close();
    await b.close();
  });

  it("watch: delivers every event exactly once, in order, across writer kills and restarts", async () => {
    // Old code: no session/watch (method not found).
    const url = freshStore(kind);
    let a = await startServer(url);
    const b = await startServer(url);
    const id = "restarts";
    await a.client.sessionCreate({ sessionId: id });
    const watch = await Collector.open(b.client, id, 0);
    const acked: SessionEvent[] = [];
    let next = 0;
    let turn = 0;
    /** Appends `count` turns, each in two appends (so that a kill can land inside one). */
    const appendTurns = async (client: SeedlineClient, count: number) => {
      for (let i = 0; i < count; i++) {
        turn++;
        const events = simpleTurn(next, turn, { chunksPerStep: 4 });
        for (const batch of [events.slice(0, 4), events.slice(4)]) {
          next = (await client.sessionAppend({ sessionId: id, events: batch })).nextSeq;
          acked.push(...batch);
        }
      }
    };
    await appendTurns(a.client, 10);
    // Killed with an append in flight: it may or may not be stored, and may leave a turn open.
    turn++;
    const inFlight = a.client
      .sessionAppend({ sessionId: id, events: simpleTurn(next, turn).slice(0, 3) })
      .catch(() => undefined);
    await a.kill();
    await inFlight;

    a = await startServer(url);
    // The new writer learns its next seq from an empty append (it takes the lock and repairs).
    next = (await a.client.sessionAppend({ sessionId: id, events: [] })).nextSeq;
    const stored = (await a.client.sessionRead({ sessionId: id })).events;
    expect(stored.slice(0, acked.length)).toEqual(acked);
    turn = stored.filter((e) => e.type === "turn/start").length;
    await appendTurns(a.client, 10);
    await a.close();
    a = await startServer(url);
    await appendTurns(a.client, 5);

    await watch.reach(next);
    watch.expectContiguous();
    const all = (await readAll(b.client, id)).events;
    // Every acknowledged event is stored at its seq (the rest are the in-flight batch, if it
    // landed, and the closers the second writer stored).
    for (const event of acked) expect(all[event.seq]).toEqual(event);
    expect(watch.events).toEqual(all);
    expect(new Set(watch.events.map((e) => e.seq)).size).toBe(next);
    await a.close();
    await b.close();
  });

  it("watch: fromSeq in the past catches up, then goes on live", async () => {
    // Old code: session/watch did not exist (-32601 method not found at Collector.open).
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const id = "catch-up";
    const seed = balancedLog(3);
    await a.client.sessionCreate({ sessionId: id, seed });
    const watch = await Collector.open(b.client, id, 4);
    expect(watch.start).toBe(4);
    await watch.reach(seed.length);
    expect(watch.events).toEqual(seed.slice(4));
    const live = simpleTurn(seed.length, 4);
    const end = (await a.client.sessionAppend({ sessionId: id, events: live })).nextSeq;
    await watch.reach(end);
    watch.expectContiguous();
    expect(watch.events).toEqual([...seed.slice(4), ...live]);
    await a.close();
    await b.close();
  });

  it("watch: delivers a catch-up longer than the watch buffer to a client that reads", async () => {
    // The buffer limits what waits for a client that does not read, not how long a catch-up may
    // be: a client that reads all along must get the whole log, in batches, then live events.
    // Seen failing before the pump waited for room in the buffer (JSONL and SQLite; PostgreSQL's
    // slower reads mostly hid it): ConnectionWatches.#pump sent batch after batch as fast as the
    // store yielded them and counted every event whose write had not completed as waiting, so a
    // catch-up of more than 10,000 events ended with WATCH_OVERFLOW at lastSeq 9,999.
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const id = "long-catch-up";
    const seed = balancedLog(1500, { chunksPerStep: 3 });
    expect(seed.length).toBeGreaterThan(12_000);
    await a.client.sessionCreate({ sessionId: id, seed });
    const watch = await Collector.open(b.client, id, 0);
    await watch.reach(seed.length);
    watch.expectContiguous();
    expect(watch.events).toEqual(seed);
    const live = simpleTurn(seed.length, 1501);
    const end = (await a.client.sessionAppend({ sessionId: id, events: live })).nextSeq;
    await watch.reach(end);
    await a.close();
    await b.close();
  });

  it("watch: sends nothing of a watch after the unwatch answer", async () => {
    // Old code: session/watch did not exist (the first b.call fails with -32601).
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = new RawServer(url);
    const id = "unwatch";
    const first = simpleTurn(0, 1);
    await a.client.sessionCreate({ sessionId: id, seed: first });
    const w1 = (await b.call("session/watch", { sessionId: id })) as {
      watchId: string;
      nextSeq: number;
    };
    expect(w1.nextSeq).toBe(first.length);
    let end = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(first.length, 2) }))
      .nextSeq;
    await waitFor(
      () => b.notifications(w1.watchId).at(-1)?.params.nextSeq === end,
      "watch 1 to deliver turn 2",
    );
    const unwatched = b.send("session/unwatch", { watchId: w1.watchId });
    expect(await b.result(unwatched)).toEqual({});
    const answeredAt = await b.answerIndex(unwatched);

    // A second watch, opened after the unwatch, is the clock: once it has delivered turn 3, so
    // would watch 1 have.
    const w2 = (await b.call("session/watch", { sessionId: id })) as {
      watchId: string;
      nextSeq: number;
    };
    expect(w2.nextSeq).toBe(end);
    end = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(end, 3) })).nextSeq;
    await waitFor(
      () => b.notifications(w2.watchId).at(-1)?.params.nextSeq === end,
      "watch 2 to deliver turn 3",
    );
    expectContiguous(
      b.notifications(w2.watchId).map((n) => n.params),
      w2.nextSeq,
    );
    // A read answered after that: anything of watch 1 would be before it.
    await b.call("session/read", { sessionId: id, fromSeq: end });
    expect(b.notifications(w1.watchId).filter((n) => n.index > answeredAt)).toEqual([]);
    // Unwatching again (an ended id) is answered and changes nothing.
    expect(await b.call("session/unwatch", { watchId: w1.watchId })).toEqual({});
    await b.close();
    expect(b.stderr).toBe("");
    await a.close();
  });

  it("watch: a client that closes its connection stops its watches; its server exits cleanly and the others go on", async () => {
    // Old code: session/watch did not exist (-32601 method not found at Collector.open).
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const c = await startServer(url);
    const id = "closing";
    await a.client.sessionCreate({ sessionId: id, seed: simpleTurn(0, 1) });
    const leaving = await Collector.open(b.client, id);
    const staying = await Collector.open(c.client, id);
    let next = simpleTurn(0, 1).length;
    let turn = 1;
    // A appends all along; B's client leaves while notifications are flowing.
    const writing = (async () => {
      for (let i = 0; i < 40; i++) {
        turn++;
        next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(next, turn) }))
          .nextSeq;
      }
    })();
    await waitFor(
      () => leaving.nextSeq >= leaving.start + 5 * 7,
      "B's watch to deliver some turns",
    );
    await b.close(); // exits 0, nothing on stderr
    await leaving.finished;
    expect(leaving.error).toBeInstanceOf(ConnectionClosedError);
    leaving.expectContiguous();
    await writing;
    next = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(next, turn + 1) }))
      .nextSeq;
    await staying.reach(next);
    staying.expectContiguous();
    expect(staying.events).toEqual((await readAll(c.client, id)).events.slice(staying.start));
    await a.close();
    await c.close();
  });

  it("watch: ends a watch whose client does not read with WATCH_OVERFLOW naming the last seq sent, nothing skipped before it", async () => {
    // Old code: session/watch did not exist (-32601). B buffers at most 50 events per watch for
    // its client and ends a watch whose full buffer the client leaves unread for 200 ms; this
    // client leaves B's stdout unread while A appends 2,000 events (about 1 KB each, far more than
    // the pipe holds). Reading resumes once B has logged that it ended the watch.
    const url = freshStore(kind);
    const a = await startServer(url);
    const c = await startServer(url);
    const b = new RawServer(url, ["--watch-buffer", "50", "--watch-stall-ms", "200"]);
    const id = "slow";
    await a.client.sessionCreate({ sessionId: id, seed: turnOpening(0, 1) });
    const watched = (await b.call("session/watch", { sessionId: id })) as {
      watchId: string;
      nextSeq: number;
    };
    expect(watched.nextSeq).toBe(3);
    // Another reader's watch, to wait on the appends having reached the readers.
    const other = await Collector.open(c.client, id);
    b.child.stdout?.pause();

    const payload = "x".repeat(1000);
    let next = 3;
    for (let i = 0; i < 400; i++) {
      const batch = Array.from({ length: 5 }, (_, k) =>
        chunk(next + k, 1, 1, `${i}.${k} ${payload}`),
      );
      next = (await a.client.sessionAppend({ sessionId: id, events: batch })).nextSeq;
    }
    await other.reach(next);
    await waitFor(() => b.stderr.includes("ended a watch"), "B to end the watch");
    b.child.stdout?.resume();

    const ending = () => b.notifications(watched.watchId).find((n) => n.params.end !== undefined);
    await waitFor(() => ending() !== undefined, "the watch to end");
    const all = b.notifications(watched.watchId);
    const last = all.at(-1) as { index: number; params: EventsParams };
    expect(last.index).toBe(ending()?.index);
    const delivered = all.slice(0, -1).map((n) => n.params);
    expectContiguous(delivered, watched.nextSeq);
    const lastSent = (delivered.at(-1)?.nextSeq ?? watched.nextSeq) - 1;
    expect(last.params).toMatchObject({
      sessionId: id,
      events: [],
      nextSeq: lastSent + 1,
      end: {
        reason: "error",
        error: {
          code: RPC_ERROR_CODES.WATCH_OVERFLOW,
          data: { code: "WATCH_OVERFLOW", sessionId: id, lastSeq: lastSent },
        },
      },
    });
    expect(lastSent).toBeLessThan(next - 1);
    // B goes on serving, and sends nothing more of the ended watch.
    expect(await b.call("session/read", { sessionId: id, fromSeq: next - 1 })).toMatchObject({
      nextSeq: next,
    });
    expect(b.notifications(watched.watchId)).toHaveLength(all.length);
    console.log(
      `slow client (${kind}): ${delivered.length} notifications (${lastSent - watched.nextSeq + 1} events) before WATCH_OVERFLOW at lastSeq ${lastSent} of ${next - 1}`,
    );
    await b.close();
    // The one line B logs: the watch it ended, and why.
    expect(b.stderr).toMatch(/^ended a watch: .* the last seq sent was \d+\n$/);
    await a.close();
    await c.close();
  });

  it("watch: ends with reason deleted when the writer deletes the session (also when it is created anew)", async () => {
    // Old code: session/watch did not exist (-32601 method not found at Collector.open).
    const url = freshStore(kind);
    const a = await startServer(url);
    const b = await startServer(url);
    const raw = new RawServer(url);
    const id = "doomed";
    await a.client.sessionCreate({ sessionId: id, seed: simpleTurn(0, 1) });
    const watch = await Collector.open(b.client, id);
    const rawWatch = (await raw.call("session/watch", { sessionId: id })) as { watchId: string };
    const end = (await a.client.sessionAppend({ sessionId: id, events: simpleTurn(7, 2) })).nextSeq;
    await watch.reach(end);
    // Both watches have everything before the delete (under load the raw one could lag, read after
    // the delete, and end with nextSeq 7).
    await waitFor(
      () => raw.notifications(rawWatch.watchId).some((n) => n.params.nextSeq === end),
      "the raw watch to reach the end",
    );
    expect(await a.client.sessionDelete({ sessionId: id })).toEqual({});
    await watch.finished;
    expect(watch.error).toBeUndefined();
    expect(watch.deleted).toBe(true);
    expect(watch.batches.at(-1)).toEqual({
      sessionId: id,
      events: [],
      nextSeq: end,
      deleted: true,
    });
    await waitFor(
      () => raw.notifications(rawWatch.watchId).some((n) => n.params.end !== undefined),
      "the raw watch to end",
    );
    expect(raw.notifications(rawWatch.watchId).at(-1)?.params).toMatchObject({
      events: [],
      nextSeq: end,
      end: { reason: "deleted" },
    });
    expectContiguous(
      raw.notifications(rawWatch.watchId).map((n) => n.params),
      7,
    );

    // Deleted and created anew under the same id (another log): a watch of the old one ends.
    await a.client.sessionCreate({
      sessionId: id,
      seed: simpleTurn(0, 1),
      meta: { createdAt: TIME },
    });
    const again = await Collector.open(b.client, id);
    await a.client.sessionDelete({ sessionId: id });
    await a.client.sessionCreate({
      sessionId: id,
      seed: balancedLog(3),
      meta: { createdAt: TIME + 1 },
    });
    await again.finished;
    expect(again.error).toBeUndefined();
    expect(again).toMatchObject({ deleted: true, events: [] });
    await raw.close();
    expect(raw.stderr).toBe("");
    await a.close();
    await b.close();
  });
}

/** For the record: a watch of a missing session is refused with SESSION_NOT_FOUND (checked once). */
function missingSessionSuite(): void {
  describe("session/watch of a missing session", () => {
    it("rejects the client's ready with SESSION_NOT_FOUND", async () => {
      const a = await startServer(freshStore("jsonl"));
      const watch = a.client.watch("nobody");
      await expect(watch.ready).rejects.toBeInstanceOf(RpcResponseError);
      await expect(watch.next()).rejects.toMatchObject({ dataCode: "SESSION_NOT_FOUND" });
      await a.close();
    });
  });
}
