// Writer locks across pid namespaces (containers sharing a volume on one host) and across writer deaths, with real processes of dist/.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { JsonlBackend } from "../../src/store/jsonl/jsonl-backend.js";
import { SessionStore } from "../../src/store/session-store.js";
import { SqliteBackend } from "../../src/store/sqlite/sqlite-backend.js";
import { ROOT, tempDir } from "../helpers/rpc-fixtures.js";
import { within } from "../helpers/waits.js";

const INDEX = pathToFileURL(join(ROOT, "dist", "src", "index.js")).href;
const UNSHARE = ["--pid", "--fork", "--mount-proc", "--kill-child"];

/** Why processes cannot be started in new pid namespaces here, or undefined when they can. */
function namespaceSkip(): string | undefined {
  const probe = spawnSync("unshare", [...UNSHARE, "true"], { encoding: "utf8" });
  if (probe.error !== undefined) return `unshare cannot be run (${probe.error.message})`;
  if (probe.status !== 0) {
    return `unshare ${UNSHARE.join(" ")} is not permitted (${probe.stderr.trim() || `exit ${probe.status}`})`;
  }
  return undefined;
}

const NAMESPACE_SKIP = namespaceSkip();
if (NAMESPACE_SKIP !== undefined)
  console.log(`pid-namespace lock tests skipped: ${NAMESPACE_SKIP}`);

const temp = tempDir("seedline-lock-ns-");
afterAll(() => temp.remove());

/**
 * A writer: opens the store, takes the session for writing, appends one turn, says what happened
 * (its pid as it sees it, the seq it appended at, or the error code), then holds the session
 * until its input ends.
 */
const WRITER = `
import { createInterface } from "node:readline";
const [index, kind, store, id] = process.argv.slice(2);
const { JsonlBackend, SessionStore, SqliteBackend } = await import(index);
const backend = kind === "jsonl" ? new JsonlBackend(store) : await SqliteBackend.open(store);
const sessions = new SessionStore({ backend });
const say = (message) => process.stdout.write(JSON.stringify({ pid: process.pid, ...message }) + "\\n");
try {
  const session = await sessions.openForWriting(id);
  const seq = session.nextSeq;
  const turn = (await session.readEvents()).filter((event) => event.type === "turn/start").length + 1;
  await session.append([
    { type: "turn/start", seq, time: 1, data: { turn, trigger: { kind: "message", source: { kind: "user" } } } },
    { type: "user/message", seq: seq + 1, time: 1, data: { content: [{ type: "text", text: "by " + process.pid }], source: { kind: "user" } }, surfaceOp: "append" },
    { type: "turn/end", seq: seq + 2, time: 1, data: { turn, reason: { kind: "completed" } } },
  ]);
  say({ appendedAt: seq });
} catch (error) {
  say({ code: error.code ?? String(error) });
  await sessions.close();
  process.exit(0);
}
for await (const _ of createInterface({ input: process.stdin }));
await sessions.close();
process.exit(0);
`;

/**
 * Where a writer runs: this namespace, or a new pid namespace as its pid 1, or there after
 * {@link SPENT_PIDS} other processes (so that its pid is above every thread id of a writer that
 * is pid 1 of its own namespace: `kill(pid, 0)` also finds a thread, and node has about a dozen).
 */
type Place = "host" | "pid 1" | "high pid";

/** How many processes run and exit in a namespace before a "high pid" writer starts there. */
const SPENT_PIDS = 60;

interface Writer {
  readonly child: ChildProcess;
  /** What the writer said: its pid, and `appendedAt` or `code`. */
  readonly said: Promise<{ pid: number; appendedAt?: number; code?: string }>;
  readonly exited: Promise<unknown>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGKILL");
});

function startWriter(place: Place, kind: "jsonl" | "sqlite", store: string): Writer {
  const script = join(temp.dir, "writer.mjs");
  writeFileSync(script, WRITER);
  const node = [process.execPath, script, INDEX, kind, store, "s"];
  // Under `sh -c '…; true'` the shell stays pid 1 and node gets the next free pid: one that
  // exists in no other namespace of the test, so the previous build's liveness check (from
  // another namespace) found it dead.
  const command =
    place === "host"
      ? node
      : place === "pid 1"
        ? ["unshare", ...UNSHARE, ...node]
        : [
            "unshare",
            ...UNSHARE,
            "sh",
            "-c",
            `i=0; while [ $i -lt ${SPENT_PIDS} ]; do /bin/true; i=$((i + 1)); done; ${node.map(quote).join(" ")}; true`,
          ];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  running.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const said = within(
    new Promise<string>((resolve) => lines.once("line", resolve)),
    `a line from the writer (${place}, ${kind})`,
  ).then((line) => JSON.parse(line));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return { child, said, exited };
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The host pid of the one child of `parent` (the namespace's pid 1 under `unshare --fork`). */
function childOf(parent: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised command name: state, then ppid.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent) return Number(entry);
    } catch {
      // Gone since the folder was read.
    }
  }
  throw new Error(`expected a child of process ${parent}, got none`);
}

/** Kills the namespace's pid 1 with SIGKILL (the kernel then kills the rest), and waits for it. */
async function killNamespace(writer: Writer): Promise<void> {
  process.kill(childOf(writer.child.pid as number), "SIGKILL");
  // unshare exits once it has reaped its child, whose locks the kernel dropped before that.
  await within(writer.exited, "the killed namespace to end");
}

/** Ends a writer's input so it closes its store, and waits for it to exit. */
async function stopWriter(writer: Writer): Promise<void> {
  writer.child.stdin?.end();
  await within(writer.exited, "the writer to exit");
}

const KINDS = ["jsonl", "sqlite"] as const;
let stores = 0;

/** A new store of `kind` holding session "s" (header only), written by this process and closed. */
async function storeWithSession(kind: (typeof KINDS)[number]): Promise<string> {
  stores++;
  const path = join(temp.dir, kind === "jsonl" ? `store-${stores}` : `store-${stores}.db`);
  const backend = kind === "jsonl" ? new JsonlBackend(path) : await SqliteBackend.open(path);
  const sessions = new SessionStore({ backend });
  await sessions.create({ id: "s" });
  await sessions.close();
  return path;
}

/** The seqs at which the stored session's turns start, once its seqs are checked to be 0, 1, 2, … */
async function turnsOf(kind: (typeof KINDS)[number], path: string): Promise<number[]> {
  const backend = kind === "jsonl" ? new JsonlBackend(path) : await SqliteBackend.open(path);
  try {
    const log = await backend.load("s");
    const seqs = (log?.events ?? []).map((event) => (event as { seq: number }).seq);
    expect(seqs).toEqual(seqs.map((_, index) => index));
    return (log?.events ?? [])
      .filter((event) => (event as { type: string }).type === "turn/start")
      .map((event) => (event as { seq: number }).seq);
  } finally {
    await backend.close();
  }
}

describe.skipIf(NAMESPACE_SKIP !== undefined)(
  `writer locks across pid namespaces${NAMESPACE_SKIP === undefined ? "" : ` — skipped: ${NAMESPACE_SKIP}`}`,
  () => {
    for (const kind of KINDS) {
      it(`refuses a writer in another pid namespace while the first holds the session (${kind})`, async () => {
        // Before the fix, the second writer (pid 1 in its namespace) found the first's pid file
        // naming a pid that does not exist in its namespace, took the lock over and appended
        // too — seen failing here: said {"pid":1,"appendedAt":3}, not SESSION_BUSY.
        const store = await storeWithSession(kind);
        const first = startWriter("high pid", kind, store);
        const held = await first.said;
        expect(held.appendedAt).toBe(0);
        expect(held.pid).toBeGreaterThan(SPENT_PIDS);
        const second = startWriter("pid 1", kind, store);
        expect(await second.said).toEqual({ pid: 1, code: "SESSION_BUSY" });
        await within(second.exited, "the refused writer to exit");
        // Nor does a writer in this namespace get it.
        const third = startWriter("host", kind, store);
        expect((await third.said).code).toBe("SESSION_BUSY");
        await stopWriter(first);
        // Let go: the next writer, in yet another namespace, takes it and appends after.
        const next = startWriter("pid 1", kind, store);
        expect(await next.said).toEqual({ pid: 1, appendedAt: 3 });
        await stopWriter(next);
        expect(await turnsOf(kind, store)).toEqual([0, 3]);
      });

      it(`lets a writer that was pid 1 of a namespace, killed with SIGKILL, take its session again as pid 1 of a new one (${kind})`, async () => {
        // Before the fix the restarted writer read its own pid, 1, from the lock file the killed
        // one left, believed that writer alive and got SESSION_BUSY, for good — seen failing
        // here: said {"pid":1,"code":"SESSION_BUSY"}.
        const store = await storeWithSession(kind);
        const first = startWriter("pid 1", kind, store);
        expect(await first.said).toEqual({ pid: 1, appendedAt: 0 });
        await killNamespace(first);
        const restarted = startWriter("pid 1", kind, store);
        expect(await restarted.said).toEqual({ pid: 1, appendedAt: 3 });
        await stopWriter(restarted);
        expect(await turnsOf(kind, store)).toEqual([0, 3]);
      });
    }
  },
);

describe("writer locks across writer deaths, one namespace", () => {
  for (const kind of KINDS) {
    it(`gives the session at once to the next process after its writer is killed with SIGKILL (${kind})`, async () => {
      const store = await storeWithSession(kind);
      const first = startWriter("host", kind, store);
      expect((await first.said).appendedAt).toBe(0);
      expect((await startWriter("host", kind, store).said).code).toBe("SESSION_BUSY");
      first.child.kill("SIGKILL");
      await within(first.exited, "the killed writer to be gone");
      const next = startWriter("host", kind, store);
      expect((await next.said).appendedAt).toBe(3);
      await stopWriter(next);
      expect(await turnsOf(kind, store)).toEqual([0, 3]);
    });
  }
});
