// Backpressure (issue 14, item 9): a server whose output nobody reads stops reading its input instead of buffering
// without bound, caps its requests in flight (--max-in-flight), and still answers every request once, exits cleanly
// when its input ends while it is paused, and ends a watch nobody reads with WATCH_OVERFLOW as before.
//
// Seen failing before the fix (the server read its input whatever became of its output), run against the old source
// (`git checkout d7a1030 -- src`, which the global setup builds into dist/):
// - the flood (150,000 session/read requests, stdout unread): the old server took all 150,000 with nobody reading
//   ("finished", not "stalled"); its RSS went 58 -> 213 MiB while unread and 312 MiB over the run with ndjson
//   (growth 254 MiB), 58 -> 199 / 259 MiB with content-length (growth 201 MiB), against the bound of 150 MiB. The
//   fixed server stops after ~1,000-1,400 requests: 58 -> 64 MiB while unread, 116-121 MiB over the run (growth
//   ~60 MiB, V8's heap slack while it answers the rest at the client's pace);
// - stdin ended while paused: the old ndjson server took all of its input at once ("finished"). The old
//   content-length server passed: its stock reader took the 1.5 MB in but spent over a second decoding it, one
//   message per turn, which this test cannot tell from a pause; the flood test tells them apart;
// - the in-flight order: the old server has no --max-in-flight (run without it, by hand) and answered the 30
//   initialize requests before the JSONL session/create requests sent ahead of them, e.g. 3,4,5,6,7,8,0,1,9,10,2,…;
// - both memory-stream tests timed out waiting for the server to pause its input; the unit tests need
//   `pause`/`resume`, `ReadGate` and `GatedMessageReader`, which did not exist.
// The watch test passed before the fix too: it guards that the two mechanisms do not deadlock.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RequestMessage } from "vscode-jsonrpc";
import { StreamMessageReader } from "vscode-jsonrpc/node";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import type { Framing, SessionEvent } from "../../src/index.js";
import { GatedMessageReader } from "../../src/rpc/gated-reader.js";
import { NdjsonMessageReader } from "../../src/rpc/ndjson-framing.js";
import { ReadGate } from "../../src/rpc/read-gate.js";
import {
  assistantChunk,
  balancedLog,
  stepStart,
  turnStart,
  userMessage,
} from "../helpers/builders.js";
import { seedline } from "../helpers/cli-harness.js";
import {
  frame,
  memoryServer,
  STDIO_MAIN,
  spawnedClient,
  tempDir,
  type WireMessage,
} from "../helpers/rpc-fixtures.js";
import { waitUntil, within } from "../helpers/waits.js";

const FRAMINGS = ["ndjson", "content-length"] as const;

const temp = tempDir("seedline-backpressure-");
afterAll(() => temp.remove());

const running = new Set<ChildProcessWithoutNullStreams>();
afterEach(() => {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** A turn's opening (turn/start, user/message, step/start) from `seq`: an open turn to append chunks to. */
function turnOpening(seq: number): SessionEvent[] {
  return [turnStart(seq, 1), userMessage(seq + 1, "prompt"), stepStart(seq + 2, 1, 1)];
}

/** A request as JSON text. */
function request(id: number | string, method: string, params: object): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** The built server as a child process; its stdout is not read until the test reads it. */
function startServer(args: readonly string[]) {
  const child = spawn(process.execPath, [STDIO_MAIN, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  running.add(child);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stderr: () => stderr };
}

/** Calls `each` with every message framed on `stream`, as read. */
function onMessages(
  framing: Framing,
  stream: Readable,
  each: (message: WireMessage & { method?: string; params?: unknown }) => void,
): void {
  let pending: Buffer = Buffer.alloc(0);
  stream.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let start = 0;
    for (;;) {
      let body: Buffer;
      if (framing === "ndjson") {
        const newline = pending.indexOf(10, start);
        if (newline < 0) break;
        body = pending.subarray(start, newline);
        start = newline + 1;
      } else {
        const headerEnd = pending.indexOf("\r\n\r\n", start);
        if (headerEnd < 0) break;
        const header = pending.toString("latin1", start, headerEnd);
        const length = Number(/Content-Length: *(\d+)/i.exec(header)?.[1]);
        if (pending.length < headerEnd + 4 + length) break;
        body = pending.subarray(headerEnd + 4, headerEnd + 4 + length);
        start = headerEnd + 4 + length;
      }
      each(JSON.parse(body.toString("utf8")));
    }
    pending = pending.subarray(start);
  });
}

/** Progress of {@link writeRequests}. */
interface Writing {
  written: number;
  finished: boolean;
  readonly done: Promise<void>;
}

/**
 * Writes `count` requests made by `make(i)` the way a careful client does: when `write` returns
 * false it waits for 'drain', so this process never holds more than one pipe's worth.
 */
function writeRequests(
  stdin: Writable,
  framing: Framing,
  count: number,
  make: (i: number) => string,
): Writing {
  const writing: Writing = {
    written: 0,
    finished: false,
    done: new Promise<void>((resolve) => {
      const go = () => {
        while (writing.written < count) {
          const ok = stdin.write(frame(framing, make(writing.written)));
          writing.written++;
          if (!ok) {
            stdin.once("drain", go);
            return;
          }
        }
        writing.finished = true;
        resolve();
      };
      setImmediate(go);
    }),
  };
  return writing;
}

/** How long the server's input must take nothing before the test counts it as stopped. */
const STALL_MS = 1_000;

/**
 * "finished" once `progress` reports everything taken, or "stalled" once its measure has not
 * moved for {@link STALL_MS}: the server stopped reading. It only tells the test when to start
 * reading; what is asserted is the state then (everything taken or not), never a duration.
 */
async function finishedOrStalled(
  progress: () => {
    finished: boolean;
    measure: number;
  },
): Promise<"finished" | "stalled"> {
  let last = Number.NaN;
  let since = Date.now();
  for (;;) {
    const { finished, measure } = progress();
    if (finished) return "finished";
    if (measure !== last) {
      last = measure;
      since = Date.now();
    } else if (Date.now() - since >= STALL_MS) {
      return "stalled";
    }
    if (Date.now() - since > 60_000) throw new Error("expected the writes to finish or stall");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The resident set size of process `pid`, in MiB (VmRSS of /proc/PID/status); NaN once it is gone. */
function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kib === undefined ? Number.NaN : Number(kib) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Samples the RSS of `pid` every 25 ms; `peak` is the highest seen. */
function sampleRss(pid: number) {
  const samples = { peak: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    const rss = rssMiB(pid);
    if (rss > samples.peak) samples.peak = rss;
  }, 25);
  return samples;
}

// ---------------------------------------------------------------------------------------------
// Unit: pause and resume over real streams

describe("NdjsonMessageReader pause/resume", () => {
  it("stops between two lines of one chunk, keeps the rest, and reads on after resume", async () => {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input);
    const seen: number[] = [];
    reader.listen((message) => {
      seen.push((message as unknown as { n: number }).n);
      if (seen.length === 2) reader.pause();
    });
    input.write(`${[1, 2, 3, 4, 5].map((n) => JSON.stringify({ n })).join("\n")}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1, 2]);
    expect(input.isPaused()).toBe(true);
    // What arrives meanwhile stays in the stream, unread.
    input.write('{"n":6}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1, 2]);
    expect(input.readableLength).toBeGreaterThan(0);
    reader.resume();
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    await within(
      new Promise<void>((resolve) => input.once("data", () => setImmediate(resolve))),
      "the reader to read on",
    );
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(input.isPaused()).toBe(false);
    reader.dispose();
  });

  it("closes only after resume has read the rest, when the input ends while it is paused", async () => {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input);
    const seen: number[] = [];
    let closed = false;
    reader.onClose(() => {
      closed = true;
    });
    reader.listen((message) => {
      seen.push((message as unknown as { n: number }).n);
      if (seen.length === 1) reader.pause();
    });
    input.end('{"n":1}\n{"n":2}\n{"n":3}');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1]);
    // A stream torn down while paused says "close" at once; the reader waits for resume.
    input.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    reader.resume();
    expect(seen).toEqual([1, 2, 3]);
    expect(closed).toBe(true);
    reader.dispose();
  });
});

describe("ReadGate", () => {
  it("shuts while the output needs draining or the cap is reached, and fires onOpen when that ends", async () => {
    const output = new PassThrough({ highWaterMark: 64 });
    let inFlight = 0;
    const gate = new ReadGate({ output, maxInFlight: 2, inFlight: () => inFlight });
    let opened = 0;
    gate.onOpen(() => opened++);
    expect(gate.open).toBe(true);
    expect(output.write(Buffer.alloc(100))).toBe(false);
    expect(gate.open).toBe(false);
    output.resume();
    await waitUntil(() => opened > 0, "the gate to open on 'drain'");
    expect(gate.open).toBe(true);
    inFlight = 2;
    expect(gate.open).toBe(false);
    gate.update();
    expect(opened).toBe(1);
    inFlight = 1;
    gate.update();
    expect(opened).toBe(2);
    gate.dispose();
  });

  it("does not hold reading back for an output that was destroyed", () => {
    const output = new PassThrough({ highWaterMark: 64 });
    const gate = new ReadGate({ output, maxInFlight: 2, inFlight: () => 0 });
    output.write(Buffer.alloc(100));
    expect(gate.open).toBe(false);
    output.destroy();
    expect(gate.open).toBe(true);
    gate.dispose();
  });
});

describe("GatedMessageReader", () => {
  /** A gate whose in-flight count the test moves; "answering" one request reopens it. */
  function countingGate(max: number) {
    const output = new PassThrough();
    let inFlight = 0;
    const gate = new ReadGate({ output, maxInFlight: max, inFlight: () => inFlight });
    return {
      gate,
      read: () => inFlight++,
      answer: () => {
        inFlight--;
        gate.update();
      },
    };
  }

  /** A gated reader over the framing reader of `framing`, as the server makes it. */
  function gatedReader(framing: Framing, input: PassThrough, gate: ReadGate): GatedMessageReader {
    if (framing === "ndjson") {
      const inner = new NdjsonMessageReader(input);
      return new GatedMessageReader(inner, inner, gate);
    }
    const flow = { pause: () => input.pause(), resume: () => input.resume() };
    return new GatedMessageReader(new StreamMessageReader(input), flow, gate);
  }

  /** A gated reader with a cap of 2 over `input`, recording the ids it hands on. */
  function capped(framing: Framing) {
    const input = new PassThrough();
    const counting = countingGate(2);
    const reader = gatedReader(framing, input, counting.gate);
    const state = { seen: [] as number[], closed: false };
    reader.onClose(() => {
      state.closed = true;
    });
    reader.listen((message) => {
      state.seen.push((message as RequestMessage).id as number);
      counting.read();
    });
    const send = (ids: readonly number[]) =>
      ids.map((id) => frame(framing, request(id, "session/list", {}))).join("");
    return { input, reader, state, send, ...counting };
  }

  it.each(FRAMINGS)(
    "hands on at most the cap, pauses the input, and hands the rest on in order as answers go out (%s)",
    async (framing) => {
      const { input, reader, state, send, answer, gate } = capped(framing);
      input.write(send([1, 2, 3, 4, 5]));
      await waitUntil(() => state.seen.length === 2 && reader.paused, "two messages, then a pause");
      expect(input.isPaused()).toBe(true);
      if (framing === "ndjson") {
        // NDJSON stops between lines: the rest of the chunk stays bytes in the framing reader.
        expect(reader.held).toBe(0);
      } else {
        // The stock reader decodes the rest of the chunk it took: those wait in the gated reader.
        await waitUntil(() => reader.held === 3, "the rest of the chunk to be held");
      }
      expect(state.seen).toEqual([1, 2]);
      answer();
      await waitUntil(() => state.seen.length === 3, "one more message");
      answer();
      answer();
      await waitUntil(() => state.seen.length === 5, "the rest, in order");
      expect(state.seen).toEqual([1, 2, 3, 4, 5]);
      expect(reader.paused).toBe(true);
      // The input ends while the gate is shut: what is left is read as answers go out, then close.
      input.end(send([6, 7]));
      answer();
      await waitUntil(() => state.seen.length === 6, "one more message");
      answer();
      await waitUntil(() => state.seen.length === 7, "the last message");
      answer();
      await waitUntil(() => state.closed, "the reader to close");
      expect(state.seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
      reader.dispose();
      gate.dispose();
    },
  );

  it.each(FRAMINGS)(
    "closes only after handing on what it read, when its input is torn down while paused (%s)",
    async (framing) => {
      const { input, reader, state, send, answer, gate } = capped(framing);
      input.write(send([1, 2, 3, 4, 5]));
      await waitUntil(() => state.seen.length === 2 && reader.paused, "two messages, then a pause");
      if (framing === "content-length") await waitUntil(() => reader.held === 3, "3 held");
      input.destroy();
      await waitUntil(() => input.closed, "the input to close");
      await new Promise((resolve) => setImmediate(resolve));
      expect(state.closed).toBe(false);
      for (let i = 0; i < 4; i++) answer();
      await waitUntil(() => state.closed, "the reader to close");
      expect(state.seen).toEqual([1, 2, 3, 4, 5]);
      reader.dispose();
      gate.dispose();
    },
  );
});

describe("a server over memory streams", () => {
  it.each([
    ["the in-flight cap", {}],
    ["an output that needs draining", { maxInFlight: 1_000_000 }],
  ] as const)(
    "stops reading its input at %s while its output is not read, then answers every request once",
    async (reason, options) => {
      const { server, toServer, toClient } = memoryServer(options, false);
      const count = 5_000;
      // A client that writes two requests per turn of the event loop (the server dispatches one
      // per turn), so answers (initialize: ~500 bytes each) go out while it writes.
      const writing = (async () => {
        for (let i = 0; i < count; i++) {
          const line = `${request(i, "initialize", { protocolVersion: 1 })}\n`;
          if (!toServer.write(line)) await once(toServer, "drain");
          if (i % 2 === 1) await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      // Nobody reads toClient: the server pauses its input with requests unread.
      await waitUntil(() => toServer.isPaused(), "the server to pause its input");
      expect(toServer.readableLength).toBeGreaterThan(0);
      if (reason === "an output that needs draining") expect(toClient.writableNeedDrain).toBe(true);
      const answers = new Map<unknown, number>();
      onMessages("ndjson", toClient, (message) => {
        answers.set(message.id, (answers.get(message.id) ?? 0) + 1);
      });
      await within(writing, "the requests to be written");
      toServer.end();
      await within(server.closed, "the server to close");
      expect(answers.size).toBe(count);
      expect([...answers.values()].every((n) => n === 1)).toBe(true);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The built server

describe.each(FRAMINGS)("the built server under a flood nobody reads (%s)", (framing) => {
  it("stops reading, keeps its RSS bounded, then answers every request exactly once", {
    timeout: 240_000,
  }, async () => {
    // 30,000 session/read requests for a missing session on a memory store: each answer is a
    // SESSION_NOT_FOUND error of ~250 bytes, the cheapest request with an answer of some size.
    const flood = 30_000;
    const { child, exited, stderr } = startServer(["--store", "memory:", "--framing", framing]);
    const counts = new Uint8Array(flood);
    let answered = 0;
    let warm = false;
    onMessages(framing, child.stdout, (message) => {
      if (message.id === "warm") warm = true;
      else counts[message.id as number] = (counts[message.id as number] ?? 0) + 1;
      answered++;
    });
    child.stdin.write(frame(framing, request("warm", "initialize", { protocolVersion: 1 })));
    await waitUntil(() => warm, "the first answer");
    const pid = child.pid ?? Number.NaN;
    const base = rssMiB(pid);
    const rss = sampleRss(pid);
    // From here on nobody reads the server's stdout (beyond the one buffer this process fills).
    child.stdout.pause();
    const writing = writeRequests(child.stdin, framing, flood, (i) =>
      request(i, "session/read", { sessionId: "missing" }),
    );
    const phase = await finishedOrStalled(() => ({
      finished: writing.finished,
      measure: writing.written,
    }));
    const takenUnread = writing.written;
    const peakUnread = rss.peak;
    child.stdout.resume();
    await within(writing.done, "the flood to be written once it is read", 180_000);
    child.stdin.end();
    expect(await within(exited, "the server to exit", 60_000)).toEqual({ code: 0, signal: null });
    rss.stop();
    console.log(
      `flood (${framing}): ${phase} after ${takenUnread} of ${flood} requests while unread; RSS ${base.toFixed(0)} MiB at start, peak ${peakUnread.toFixed(0)} MiB while unread, ${rss.peak.toFixed(0)} MiB over the run`,
    );
    // The old server took all 150,000 of an earlier, longer flood with nobody reading and grew by
    // 230-330 MiB. With its gate always open (a mutant) this server took all 30,000 ("finished")
    // and grew by 23 and 41 MiB while unread; as it is, it stops after about 1,400 and grows by
    // 3-5 MiB meanwhile.
    expect(phase).toBe("stalled");
    expect(takenUnread).toBeLessThan(flood);
    expect(peakUnread - base).toBeLessThan(30);
    expect(rss.peak - base).toBeLessThan(150);
    expect(answered).toBe(flood + 1);
    expect(counts.every((n) => n === 1)).toBe(true);
    expect(stderr()).toBe("");
  });

  it("answers everything it read when its input ends while it is paused, then exits 0", {
    timeout: 120_000,
  }, async () => {
    const count = 20_000;
    const { child, exited, stderr } = startServer(["--store", "memory:", "--framing", framing]);
    const counts = new Uint8Array(count);
    onMessages(framing, child.stdout, (message) => {
      counts[message.id as number] = (counts[message.id as number] ?? 0) + 1;
    });
    child.stdout.pause();
    // All of it at once, then the end of input: ~1.5 MB held by this process, bounded by `count`.
    let text = "";
    for (let i = 0; i < count; i++) text += frame(framing, request(i, "session/list", {}));
    child.stdin.end(text);
    const phase = await finishedOrStalled(() => ({
      finished: child.stdin.writableLength === 0,
      measure: child.stdin.writableLength,
    }));
    // The server stopped with input unread (and its end with it).
    expect(phase).toBe("stalled");
    child.stdout.resume();
    expect(await within(exited, "the server to exit", 60_000)).toEqual({ code: 0, signal: null });
    expect(counts.every((n) => n === 1)).toBe(true);
    expect(stderr()).toBe("");
  });
});

describe.each(FRAMINGS)("--max-in-flight N (%s)", (framing) => {
  it.each([1, 3])(
    "never answers a request more than N - 1 places ahead of its turn, N = %i",
    async (max) => {
      // N slow requests (JSONL session/create with a 400-event seed: file writes on the thread
      // pool), then 30 initialize requests (no I/O), in one write. Request i is read only once
      // i - N + 1 answers are written out, so its answer comes at position >= i - N + 1: with
      // N = 1 exactly in request order. Without a cap the initialize answers come first.
      const url = `jsonl:${temp.dir}/cap-${framing}-${max}`;
      const { child, exited, stderr } = startServer([
        ...["--store", url, "--framing", framing, "--max-in-flight", String(max)],
      ]);
      const order: number[] = [];
      onMessages(framing, child.stdout, (message) => {
        expect(message.error).toBeUndefined();
        order.push(message.id as number);
      });
      const seed = balancedLog(40, { chunksPerStep: 5 });
      const requests: string[] = [];
      for (let i = 0; i < max; i++)
        requests.push(request(i, "session/create", { sessionId: `slow-${i}`, seed }));
      while (requests.length < max + 30)
        requests.push(request(requests.length, "initialize", { protocolVersion: 1 }));
      child.stdin.end(requests.map((text) => frame(framing, text)).join(""));
      expect(await within(exited, "the server to exit")).toEqual({ code: 0, signal: null });
      expect([...order].sort((a, b) => a - b)).toEqual(requests.map((_, i) => i));
      const early = order.flatMap((id, position) =>
        position < id - max + 1 ? [`${id} at ${position}`] : [],
      );
      expect(early).toEqual([]);
      if (max === 1) expect(order).toEqual(requests.map((_, i) => i));
      expect(stderr()).toBe("");
    },
  );
});

describe("backpressure and watches", () => {
  it("ends a watch nobody reads with WATCH_OVERFLOW while reading is paused, then answers the requests sent meanwhile", {
    timeout: 120_000,
  }, async () => {
    const url = `sqlite:${temp.dir}/watch.db`;
    const writer = spawnedClient(url, "ndjson").client;
    await writer.sessionCreate({ sessionId: "w", seed: turnOpening(0) });
    const { child, exited, stderr } = startServer([
      ...["--store", url, "--watch-buffer", "50", "--watch-stall-ms", "200"],
    ]);
    const messages: (WireMessage & { method?: string; params?: unknown })[] = [];
    onMessages("ndjson", child.stdout, (message) => messages.push(message));
    child.stdin.write(`${request("watch", "session/watch", { sessionId: "w" })}\n`);
    await waitUntil(() => messages.some((m) => m.id === "watch"), "the watch answer");
    const watched = messages.find((m) => m.id === "watch")?.result as { watchId?: string };
    const watchId = watched?.watchId;
    expect(watchId).toEqual(expect.any(String));
    child.stdout.pause();
    // Requests sent while nobody reads: the server stops reading them once its output backs up.
    const count = 3_000;
    const writing = writeRequests(child.stdin, "ndjson", count, (i) =>
      request(i, "session/read", { sessionId: "missing" }),
    );
    const payload = "x".repeat(1000);
    let next = 3;
    for (let i = 0; i < 200; i++) {
      const events = Array.from({ length: 5 }, (_, k) =>
        assistantChunk(next + k, 1, 1, { type: "text-delta", index: 0, text: payload }),
      );
      next = (await writer.sessionAppend({ sessionId: "w", events })).nextSeq;
    }
    await waitUntil(() => stderr().includes("ended a watch"), "the watch to end", 30_000);
    child.stdout.resume();
    await within(writing.done, "the requests to be written");
    child.stdin.end();
    expect(await within(exited, "the server to exit")).toEqual({ code: 0, signal: null });
    const answers = messages.filter((m) => typeof m.id === "number").map((m) => m.id);
    expect(answers).toHaveLength(count);
    expect(new Set(answers).size).toBe(count);
    const ends = messages.filter(
      (m) =>
        m.method === "session/events" &&
        (m.params as { watchId: string; end?: unknown }).watchId === watchId &&
        (m.params as { end?: unknown }).end !== undefined,
    );
    expect(ends).toHaveLength(1);
    expect(ends[0]?.params).toMatchObject({
      end: { reason: "error", error: { code: RPC_ERROR_CODES.WATCH_OVERFLOW } },
    });
    await writer.close();
  });
});

describe("seedline serve --max-in-flight", () => {
  it("is listed in the help with its default, and refuses a value that is not a positive integer", () => {
    const help = seedline(["serve", "--help"]);
    expect(help.stdout).toMatch(/--max-in-flight N +stop reading stdin while N requests/);
    expect(help.stdout).toContain("(default: 128)");
    const refused = seedline(["serve", "--max-in-flight", "0", "--store", "memory:"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('expected --max-in-flight to be a positive integer, got "0"');
  });
});
