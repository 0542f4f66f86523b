// The viewer's live stream against clients that do not read: what the server holds for them stays bounded, a stalled one is cut off, and the number of streams is bounded.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openBackend, SessionStore } from "../../src/index.js";
import { LIVE_BATCH_EVENTS } from "../../src/viewer/server/live.js";
import { startViewerServer, type ViewerServer } from "../../src/viewer/server/server.js";
import { simpleTurn } from "../helpers/builders.js";
import { waitUntil, within } from "../helpers/waits.js";

/** A user prompt of about 3 KB: the session below is about 10 MB of stream. */
const PROMPT = "x".repeat(3000);
const TURNS = 3000;
/** What one unread stream may make the viewer hold: one batch of ~500 events (~1.5 MB here) and change. */
const BOUND = 2 * 1024 * 1024;

const open: { store: SessionStore; viewer: ViewerServer; sockets: Socket[] }[] = [];
afterEach(async () => {
  for (const { store, viewer, sockets } of open.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await viewer.close();
    await store.close();
  }
});

/** A viewer over a memory store holding session `big` of {@link TURNS} turns. */
async function viewerWithBigSession(options: { liveStallMs?: number; maxLiveStreams?: number }) {
  const store = new SessionStore({ backend: await openBackend("memory:") });
  const session = await store.create({ id: "big" });
  for (let turn = 1; turn <= TURNS; turn += 500) {
    const events = [];
    for (let t = turn; t < turn + 500; t++) {
      events.push(...simpleTurn(session.nextSeq + events.length, t, { prompt: PROMPT }));
    }
    await session.append(events);
  }
  const logs: string[] = [];
  const viewer = await startViewerServer({
    store,
    storeLabel: "memory:",
    log: (line) => logs.push(line),
    ...options,
  });
  const sockets: Socket[] = [];
  open.push({ store, viewer, sockets });
  return { store, viewer, session, logs, sockets };
}

/** A raw client that asks for the live stream of `big` from seq 0, then reads nothing. */
function idleStream(viewer: ViewerServer, sockets: Socket[]): Socket {
  const socket = connect(viewer.port, "127.0.0.1");
  socket.pause();
  socket.write(
    `GET /api/sessions/big/live?fromSeq=0&token=${viewer.token} HTTP/1.1\r\nHost: 127.0.0.1:${viewer.port}\r\n\r\n`,
  );
  sockets.push(socket);
  return socket;
}

/** Reads `socket` to its end (or until `enough` says so), returning the text. */
function readAll(socket: Socket, enough: (text: string) => boolean = () => false): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      // Only the tail can newly hold what `enough` looks for.
      if (enough(text.slice(-chunk.length - 64))) resolve(text);
    });
    socket.once("end", () => resolve(text));
    socket.once("close", () => resolve(text));
    socket.once("error", reject);
    socket.resume();
  });
}

describe("seedline ui: live streams of clients that do not read", () => {
  it("holds at most one batch for a client that does not read, while appends go on and others are served", async () => {
    // Fails without the fix (every batch written without waiting for 'drain'): the viewer held
    // the whole session for the one idle client, bufferedBytes 10,163,328 against the 2 MiB bound.
    const { viewer, session, sockets } = await viewerWithBigSession({});
    const idle = idleStream(viewer, sockets);
    await waitUntil(
      () => viewer.liveStats().waiting === 1 || viewer.liveStats().bufferedBytes > BOUND,
      "the stream to wait for its client",
    );
    expect(viewer.liveStats().bufferedBytes).toBeLessThan(BOUND);
    // Appends go on; the stream reads none of them while its client reads nothing.
    const more = [];
    for (let t = TURNS + 1; t <= TURNS + 200; t++) {
      more.push(...simpleTurn(session.nextSeq + more.length, t, { prompt: PROMPT }));
    }
    await session.append(more);
    // Another client is served meanwhile.
    const info = await fetch(`http://127.0.0.1:${viewer.port}/api/info`, {
      headers: { Authorization: `Bearer ${viewer.token}` },
    });
    expect(info.status).toBe(200);
    expect(viewer.liveStats()).toMatchObject({ open: 1, waiting: 1 });
    expect(viewer.liveStats().bufferedBytes).toBeLessThan(BOUND);
    // Once the client reads, it gets everything, up to what was appended meanwhile.
    const end = session.nextSeq;
    const text = await within(
      readAll(idle, (t) => t.includes(`"nextSeq":${end}}`)),
      "the whole session on the stream",
    );
    const seqs = [...text.matchAll(/"nextSeq":(\d+)\}/g)].map((m) => Number(m[1]));
    expect(seqs.at(-1)).toBe(end);
    // Each message carried one batch at most.
    for (let i = 1; i < seqs.length; i++) {
      expect((seqs[i] as number) - (seqs[i - 1] as number)).toBeLessThanOrEqual(LIVE_BATCH_EVENTS);
    }
  });

  it("closes a stream whose client takes nothing for the stall time, and says so", async () => {
    // Fails without the fix: the stream never waited for its client (it wrote the whole session
    // into its buffer at once), so "the stream to wait for its client" was never seen.
    const { viewer, logs, sockets } = await viewerWithBigSession({ liveStallMs: 200 });
    const idle = idleStream(viewer, sockets);
    await waitUntil(() => viewer.liveStats().waiting === 1, "the stream to wait for its client");
    await waitUntil(() => viewer.liveStats().open === 0, "the stalled stream to be closed");
    expect(logs.join("\n")).toMatch(/closed the live stream of big: expected its client to take/);
    expect(logs.join("\n")).toContain(`at most one batch of ${LIVE_BATCH_EVENTS} events`);
    // What reached the socket before the close is what the client gets; it ends there.
    const text = await within(readAll(idle), "the closed stream's end");
    expect(text).toContain("event: items");
  });

  it("refuses a live stream past the bound with 429 LIVE_LIMIT", async () => {
    // Fails without the fix: every stream was accepted (the third answered 200, not 429).
    const { viewer, sockets } = await viewerWithBigSession({ maxLiveStreams: 2 });
    idleStream(viewer, sockets);
    idleStream(viewer, sockets);
    await waitUntil(() => viewer.liveStats().open === 2, "two open streams");
    const third = await fetch(`http://127.0.0.1:${viewer.port}/api/sessions/big/live`, {
      headers: { Authorization: `Bearer ${viewer.token}` },
    });
    expect(third.status).toBe(429);
    const body = (await third.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("LIVE_LIMIT");
    expect(body.error.message).toContain("at most 2 live streams");
  });
});
