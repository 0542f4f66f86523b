// The built `seedline ui` over a real SQLite store, driven over HTTP: the token, the Host check, read-only, same-origin writes, every route's answer on corpus sessions, bounded pages, and the live stream while this process appends.

import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/generated.js";
import { openBackend } from "../../src/store/open/open-backend.js";
import { redact } from "../../src/store/open/redact-url.js";
import { SessionStore } from "../../src/store/session-store.js";
import type { ViewItem } from "../../src/view/view-items.js";
import { readAssets } from "../../src/viewer/server/assets.js";
import { balancedLog, simpleTurn } from "../helpers/builders.js";
import { type BackgroundRun, seedline, startSeedline } from "../helpers/cli-harness.js";
import { CORPUS_DIR } from "../helpers/corpus.js";

const CORPUS = CORPUS_DIR;
/** The recorded fork of the corpus (subagent-fork): its parent and the child, seedLength 38. */
const PARENT = "f2358dc0-75f8-4649-8440-ab94b8e10dc3";
const CHILD = "906f1eac-a457-4eb9-828b-1ba537552524";
const TOOL_TURN = "7f13d6e6-f881-4a29-b399-b085fbaca9a3";
const BIG = "big-session";
const LIVE = "live-session";
/** 715 balanced turns of 7 events each. */
const BIG_TURNS = 715;
const BIG_EVENTS = BIG_TURNS * 7;

let temp: string;
let storeUrl: string;
let ui: BackgroundRun;
let base: string;
let token: string;

/** Opens the test's store in this process (a second process beside the server), runs `task`, closes it. */
async function withTestStore<T>(task: (store: SessionStore) => Promise<T>): Promise<T> {
  const store = new SessionStore({ backend: await openBackend(storeUrl) });
  try {
    return await task(store);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "seedline-viewer-"));
  storeUrl = `sqlite:${join(temp, "viewer.db")}`;
  const imported = seedline([
    "import",
    join(CORPUS, "subagent-fork", "session.jsonl"),
    join(CORPUS, "subagent-fork", "session.1.jsonl"),
    join(CORPUS, "tool-call-turn", "session.jsonl"),
    "--store",
    storeUrl,
  ]);
  expect(imported.status, imported.stderr).toBe(0);
  await withTestStore(async (store) => {
    const big = await store.create({ id: BIG, meta: { cwd: "/tmp/big" } });
    const events = balancedLog(BIG_TURNS);
    expect(events).toHaveLength(BIG_EVENTS);
    for (let i = 0; i < events.length; i += 1000)
      await store.append(big, events.slice(i, i + 1000));
    const live = await store.create({ id: LIVE, meta: { cwd: "/tmp/live" } });
    await store.append(live, simpleTurn(0, 1, { prompt: "first prompt" }));
  });
  ui = startSeedline(["ui", "--store", storeUrl]);
  await ui.waitFor("the address", (out) => /\?token=\S+\n/.test(out));
  const match = /^seedline ui: (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)\n$/.exec(ui.stdout());
  expect(match, ui.stdout()).not.toBeNull();
  base = match?.[1] as string;
  token = match?.[2] as string;
});

afterAll(async () => {
  if (ui !== undefined && ui.child.exitCode === null) {
    ui.child.kill("SIGTERM");
    await ui.exited;
  }
  rmSync(temp, { recursive: true, force: true });
});

/** A JSON answer, read by shape: each test states what it expects of it. */
// biome-ignore lint/suspicious/noExplicitAny: answers are checked by toMatchObject/toEqual, not by type
type Json = any;

/** A GET with the token as a bearer header, answered as JSON. */
async function api(path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

/** A raw request with the headers given as they are (fetch will not send another Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("seedline ui: the guards", () => {
  it("prints one line on stdout: the address with a 43-character token", () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ui.stdout().split("\n")).toHaveLength(2);
  });

  it("refuses an API request without the token, or with a wrong one, with 401 TOKEN_REQUIRED", async () => {
    const none = await fetch(`${base}/api/info`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as Json).error.code).toBe("TOKEN_REQUIRED");
    const wrong = "A".repeat(token.length);
    for (const res of [
      await fetch(`${base}/api/sessions?token=${wrong}`),
      await fetch(`${base}/api/sessions`, { headers: { Authorization: `Bearer ${wrong}` } }),
      await fetch(`${base}/api/sessions/${CHILD}/live`),
    ]) {
      expect(res.status).toBe(401);
      expect(await res.text()).toContain("needs the token");
    }
  });

  it("serves the app's own files without the token: they hold nothing of the store", async () => {
    for (const path of ["/", `/s/${CHILD}`, "/assets/app.js", "/assets/app.css"]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      const body = await res.text();
      expect(body, path).not.toContain(CHILD);
      expect(body, path).not.toContain(storeUrl);
    }
  });

  it("takes no token from a cookie and sets none: a cookie would go to every port of the host", async () => {
    // Fails without the fix: the page set `seedline_token=TOKEN; HttpOnly; SameSite=Strict;
    // Path=/`, which the browser then sent to every server on 127.0.0.1, and that cookie alone
    // opened the API (200).
    const page = await fetch(`${base}/s/${CHILD}?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("set-cookie")).toBeNull();
    const byCookie = await fetch(`${base}/api/info`, {
      headers: { Cookie: `seedline_token=${token}` },
    });
    expect(byCookie.status).toBe(401);
    // The cookie an older viewer set is dropped.
    expect(byCookie.headers.get("set-cookie")).toBe(
      "seedline_token=; Max-Age=0; HttpOnly; SameSite=Strict; Path=/",
    );
  });

  it("refuses a Host that is not the bound address with 421, before the token", async () => {
    const port = new URL(base).port;
    const rebound = await raw("GET", `/api/info?token=${token}`, { Host: `evil.example:${port}` });
    expect(rebound.status).toBe(421);
    const otherPort = await raw("GET", `/api/info?token=${token}`, { Host: "127.0.0.1:1" });
    expect(otherPort.status).toBe(421);
    const noToken = await raw("GET", "/api/info", { Host: `attacker.example:${port}` });
    expect(noToken.status).toBe(421);
    const local = await raw("GET", `/api/info?token=${token}`, { Host: `localhost:${port}` });
    expect(local.status).toBe(200);
  });

  it("is read-only: a POST, PUT or DELETE is 405, the fork route included", async () => {
    for (const [method, path] of [
      ["POST", `/api/sessions/${CHILD}/fork`],
      ["PUT", "/api/info"],
      ["DELETE", `/api/sessions/${CHILD}`],
    ] as const) {
      const res = await raw(method, path, { Authorization: `Bearer ${token}` });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(JSON.parse(res.body).error.code).toBe("METHOD_NOT_ALLOWED");
    }
  });

  it("sends the security headers, and no-store on the API", async () => {
    const res = await fetch(`${base}/api/info`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("seedline ui: the API over the corpus", () => {
  it("lists sessions newest activity first, the fork with its parent and seedLength", async () => {
    const { status, body } = await api("/api/sessions");
    expect(status).toBe(200);
    const ids = body.sessions.map((s: { sessionId: string }) => s.sessionId);
    expect(ids).toEqual(expect.arrayContaining([PARENT, CHILD, TOOL_TURN, BIG, LIVE]));
    const child = body.sessions.find((s: { sessionId: string }) => s.sessionId === CHILD);
    expect(child).toMatchObject({
      eventCount: 88,
      header: { parentSession: PARENT, seedLength: 38 },
    });
    expect(child.title).toMatch(/^Remember this fact for later/);
    const prefixed = await api(`/api/sessions?prefix=${CHILD.slice(0, 6)}`);
    expect(prefixed.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([CHILD]);
  });

  it("searches message and tool text through the store", async () => {
    const { status, body } = await api("/api/search?q=MARMALADE");
    expect(status).toBe(200);
    const ids = body.results.map((r: { sessionId: string }) => r.sessionId);
    expect(ids).toEqual(expect.arrayContaining([PARENT, CHILD]));
    expect(ids).not.toContain(TOOL_TURN);
    const missing = await api("/api/search");
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("INVALID_PARAMS");
  });

  it("answers a fork's session, header and lineage from its root, with the turn it branched after", async () => {
    const { status, body } = await api(`/api/sessions/${CHILD}`);
    expect(status).toBe(200);
    expect(body.session.sessionId).toBe(CHILD);
    expect(body.header).toMatchObject({ id: CHILD, parentSession: PARENT, seedLength: 38 });
    expect(body.lineage.sessionId).toBe(PARENT);
    expect(body.lineage.children).toHaveLength(1);
    expect(body.lineage.children[0]).toMatchObject({ sessionId: CHILD, branchTurn: 1 });
    expect(body.lineage.children[0].children).toEqual([]);
  });

  it("answers 404 SESSION_NOT_FOUND as JSON for a session that is not there", async () => {
    const { status, body } = await api("/api/sessions/no-such-session/timeline");
    expect(status).toBe(404);
    expect(body.error.code).toBe("SESSION_NOT_FOUND");
    expect(body.error.message).toContain("no-such-session");
  });

  it("draws the fork's timeline with the seed boundary, and a tool call with its result", async () => {
    const fork = await api(`/api/sessions/${CHILD}/timeline`);
    expect(fork.body).toMatchObject({ fromSeq: 0, nextSeq: 88, length: 88, done: true });
    const items = fork.body.items as ViewItem[];
    expect(items.filter((i) => i.kind === "seed-boundary")).toEqual([
      { kind: "seed-boundary", seq: 38, inherited: 38 },
    ]);
    const tool = (await api(`/api/sessions/${TOOL_TURN}/timeline`)).body.items as ViewItem[];
    const call = tool.find((i) => i.kind === "tool-call");
    const result = tool.find((i) => i.kind === "tool-result");
    expect(call?.kind === "tool-call" && call.name).toBe("bash");
    expect(result).toMatchObject({ callId: call?.kind === "tool-call" ? call.callId : "?" });
    expect(
      tool.filter((i) => i.kind === "assistant").map((i) => i.kind === "assistant" && i.text),
    ).toEqual(["", "DONE"]);
  });

  it("sends one bounded page of a 5,000-event session at a time, with where the next starts", async () => {
    const first = await api(`/api/sessions/${BIG}/timeline?limit=500`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ fromSeq: 0, length: BIG_EVENTS, done: false });
    expect(first.body.nextSeq).toBeGreaterThan(0);
    expect(first.body.nextSeq).toBeLessThanOrEqual(500);
    const seqs = (first.body.items as ViewItem[]).map((i) => i.seq);
    expect(Math.max(...seqs)).toBeLessThan(first.body.nextSeq);
    // Every page holds at most 500 events' items; together they hold every turn once.
    let from = first.body.nextSeq as number;
    let turns = (first.body.items as ViewItem[]).filter((i) => i.kind === "turn").length;
    let pages = 1;
    for (let done = false; !done; pages++) {
      const page = (await api(`/api/sessions/${BIG}/timeline?fromSeq=${from}&limit=500`)).body;
      expect(page.fromSeq).toBe(from);
      expect(page.nextSeq - from).toBeLessThanOrEqual(500);
      for (const item of page.items as ViewItem[]) {
        expect(item.seq).toBeGreaterThanOrEqual(from);
        expect(item.seq).toBeLessThan(page.nextSeq);
      }
      turns += (page.items as ViewItem[]).filter((i) => i.kind === "turn").length;
      from = page.nextSeq;
      done = page.done;
    }
    expect(turns).toBe(BIG_TURNS);
    expect(pages).toBeGreaterThanOrEqual(BIG_EVENTS / 500);
    expect(from).toBe(BIG_EVENTS);
  });

  it("refuses a page limit past 2000, or not a number, saying what it expected", async () => {
    for (const limit of ["2001", "abc", "0"]) {
      const { status, body } = await api(`/api/sessions/${BIG}/timeline?limit=${limit}`);
      expect(status).toBe(400);
      expect(body.error.code).toBe("INVALID_PARAMS");
      expect(body.error.message).toContain("from 1 to 2000");
      expect(body.error.message).toContain(JSON.stringify(limit));
    }
  });

  it("answers raw events a page at a time", async () => {
    const { body } = await api(`/api/sessions/${TOOL_TURN}/events?fromSeq=3&limit=5`);
    expect(body.events.map((e: SessionEvent) => e.seq)).toEqual([3, 4, 5, 6, 7]);
    expect(body).toMatchObject({ nextSeq: 8, done: false });
  });

  it("answers the turn index", async () => {
    const { body } = await api(`/api/sessions/${CHILD}/turns`);
    expect(body.turns).toEqual([
      { turn: 1, seq: 0, endSeq: 37, reason: "completed" },
      { turn: 2, seq: 38, endSeq: 87, reason: "completed" },
    ]);
  });

  it("answers a fork child's replay script: its own entry only", async () => {
    const { status, body } = await api(`/api/sessions/${CHILD}/replay`);
    expect(status).toBe(200);
    expect(body.sessionId).toBe(CHILD);
    expect(body.seedLength).toBe(38);
    expect(body.entries).toHaveLength(1);
    expect(body.entries[0].kind).toBe("chunks");
  });

  it("compares a fork with its parent from the boundary on, and refuses a root", async () => {
    const { status, body } = await api(`/api/sessions/${CHILD}/compare?limit=100`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ parentId: PARENT, boundary: 38 });
    for (const side of [body.parent, body.child]) {
      expect(side.items.length).toBeGreaterThan(0);
      expect((side.items as ViewItem[]).every((i) => i.seq >= 38)).toBe(true);
    }
    expect(body.child.done).toBe(true);
    const root = await api(`/api/sessions/${PARENT}/compare`);
    expect(root.status).toBe(400);
    expect(root.body.error.code).toBe("NOT_A_FORK");
  });

  it("serves the app's files and answers index.html for any page path", async () => {
    const auth = { headers: { Authorization: `Bearer ${token}` } };
    const js = await fetch(`${base}/assets/app.js`, auth);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    const css = await fetch(`${base}/assets/app.css`, auth);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    const deep = await fetch(`${base}/s/${CHILD}/e/40`, auth);
    expect(await deep.text()).toContain("/assets/app.js");
    const unknown = await api("/api/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
  });
});

/** A server-sent event as read: its name and its parsed data. */
interface Sse {
  readonly event: string;
  readonly data: Json;
}

/** Reads a response's server-sent events as they come; `until` resolves once a predicate holds for those read so far. */
function sseReader(res: Response) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: Sse[] = [];
  let buffer = "";
  return {
    async until(done: (events: readonly Sse[]) => boolean): Promise<Sse[]> {
      while (!done(events)) {
        const { value, done: ended } = await reader.read();
        if (ended)
          throw new Error(`expected more events, the stream ended after ${JSON.stringify(events)}`);
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(message)?.[1];
          const data = /^data: (.*)$/m.exec(message)?.[1];
          if (event !== undefined && data !== undefined)
            events.push({ event, data: JSON.parse(data) });
        }
      }
      return events;
    },
    cancel: () => reader.cancel(),
  };
}

const itemsOf = (events: readonly Sse[]): ViewItem[] =>
  events.filter((e) => e.event === "items").flatMap((e) => e.data.items as ViewItem[]);

describe("seedline ui: live", () => {
  it("streams the items another process appends, then the end when the session is deleted", async () => {
    const length = (await api(`/api/sessions/${LIVE}/timeline`)).body.nextSeq as number;
    const res = await fetch(`${base}/api/sessions/${LIVE}/live?fromSeq=${length}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const stream = sseReader(res);
    // This test's process is not the server's: it appends through a store of its own.
    await withTestStore(async (store) => {
      await store.append(LIVE, simpleTurn(length, 2, { prompt: "a prompt that lands live" }));
    });
    const landed = await stream.until((events) =>
      itemsOf(events).some((i) => i.kind === "turn-end" && i.turn === 2),
    );
    const items = itemsOf(landed);
    expect(items[0]).toMatchObject({ kind: "turn", seq: length, turn: 2 });
    expect(items.find((i) => i.kind === "message")).toMatchObject({
      role: "user",
      text: "a prompt that lands live",
      turn: 2,
    });
    expect(landed.at(-1)?.data.nextSeq).toBe(length + 7);
    await withTestStore((store) => store.delete(LIVE));
    const ended = await stream.until((events) => events.some((e) => e.event === "end"));
    expect(ended.at(-1)).toEqual({ event: "end", data: { reason: "deleted" } });
    await stream.cancel();
  });

  it("answers 404 as JSON, not a stream, for a session that is not there", async () => {
    const { status, body } = await api("/api/sessions/never-was/live");
    expect(status).toBe(404);
    expect(body.error.code).toBe("SESSION_NOT_FOUND");
  });
});

describe("seedline ui --allow-write", () => {
  it("forks through POST /api/sessions/ID/fork and still refuses every other write", async () => {
    const writer = startSeedline(["ui", "--store", storeUrl, "--allow-write"]);
    try {
      await writer.waitFor("the address", (out) => /\?token=\S+\n/.test(out));
      const address = new URL(writer.stdout().replace("seedline ui: ", "").trim());
      const key = address.searchParams.get("token") ?? "";
      const auth = { Authorization: `Bearer ${key}` };
      const info = await fetch(`${address.origin}/api/info`, { headers: auth });
      expect(await info.json()).toMatchObject({ readOnly: false });
      const fork = await fetch(`${address.origin}/api/sessions/${TOOL_TURN}/fork`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ boundary: 103 }),
      });
      expect(fork.status).toBe(200);
      const { header } = (await fork.json()) as {
        header: { id: string; parentSession: string; seedLength: number };
      };
      expect(header).toMatchObject({ parentSession: TOOL_TURN, seedLength: 104 });
      const listed = await api(`/api/sessions/${header.id}`);
      expect(listed.body.lineage.sessionId).toBe(TOOL_TURN);
      const bad = await fetch(`${address.origin}/api/sessions/${TOOL_TURN}/fork`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ boundary: "end" }),
      });
      expect(bad.status).toBe(400);
      const remove = await fetch(`${address.origin}/api/sessions/${TOOL_TURN}`, {
        method: "DELETE",
        headers: auth,
      });
      expect(remove.status).toBe(405);
      const tokenless = await fetch(`${address.origin}/api/sessions/${TOOL_TURN}/fork`, {
        method: "POST",
      });
      expect(tokenless.status).toBe(401);
      // Fails without the fix: each of these forked (200).
      const before = await fetch(`${address.origin}/api/sessions?limit=100`, { headers: auth });
      const count = ((await before.json()) as Json).sessions.length;
      const forkPath = `/api/sessions/${TOOL_TURN}/fork`;
      const otherPort = `http://127.0.0.1:${Number(address.port) === 1 ? 2 : 1}`;
      for (const [headers, code] of [
        // Another origin of the same host, token and all: refused before anything is read.
        [{ ...auth, Origin: otherPort }, "CROSS_ORIGIN"],
        [{ ...auth, "Sec-Fetch-Site": "same-site" }, "CROSS_ORIGIN"],
        [{ ...auth, Origin: "null" }, "CROSS_ORIGIN"],
        // The token in the address only: a write needs it in a header no other page can send.
        [{}, "TOKEN_REQUIRED"],
      ] as const) {
        const query = code === "TOKEN_REQUIRED" ? `?token=${key}` : "";
        const res = await fetch(`${address.origin}${forkPath}${query}`, {
          method: "POST",
          headers,
          body: "{}",
        });
        expect(res.status, JSON.stringify(headers)).toBe(code === "CROSS_ORIGIN" ? 403 : 401);
        expect(((await res.json()) as Json).error.code).toBe(code);
      }
      const after = await fetch(`${address.origin}/api/sessions?limit=100`, { headers: auth });
      expect(((await after.json()) as Json).sessions).toHaveLength(count);
      // The viewer's own page may write (its Origin is the viewer's).
      const own = await fetch(`${address.origin}${forkPath}`, {
        method: "POST",
        headers: { ...auth, Origin: address.origin, "Sec-Fetch-Site": "same-origin" },
        body: "{}",
      });
      expect(own.status).toBe(200);
    } finally {
      writer.child.kill("SIGTERM");
      await writer.exited;
    }
  });
});

describe("seedline ui: start-up", () => {
  it("fails at start with a clear error when the app was never built", () => {
    expect(() => readAssets(join(temp, "no-viewer-here"))).toThrow(
      /^viewer assets not built: run npm run build \(expected index\.html, app\.js, app\.css in /,
    );
  });

  it("tells its store without a password (/api/info shows the URL)", () => {
    expect(redact("postgres://app:s3cret@db.example:5432/agents?schema=x")).toBe(
      "postgres://app@db.example:5432/agents?schema=x",
    );
    expect(redact(storeUrl)).toBe(storeUrl);
  });

  it("refuses a port that is not one, as a usage error", () => {
    const run = seedline(["ui", "--store", storeUrl, "--port", "70000"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('expected --port an integer from 0 to 65535, got "70000"');
  });
});

describe("seedline ui: stopping", () => {
  it("exits 0 on SIGTERM, closing the store", async () => {
    ui.child.kill("SIGTERM");
    expect(await ui.exited).toBe(0);
    // The store is closed and usable by another process.
    const listed = seedline(["ls", "--store", storeUrl, "--json"]);
    expect(listed.status).toBe(0);
  });

  it("refuses to start on a store that is not there, creating none", () => {
    const run = seedline(["ui", "--store", `sqlite:${join(temp, "absent.db")}`]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("expected a store at");
  });
});
