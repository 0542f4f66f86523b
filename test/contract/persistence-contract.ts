// The persistence contract every backend joins: `runPersistenceContract(name, makeHarness)`.

import { afterEach, describe, expect, it } from "vitest";
import {
  type SessionBackend,
  type SessionEvent,
  type SessionHeader,
  SessionStore,
} from "../../src/index.js";
import { serializeEvents } from "../../src/log/serialized-event.js";
import {
  assistantChunk,
  balancedLog,
  simpleTurn,
  stepStart,
  TIME,
  toolCall,
  turnStart,
  userMessage,
} from "../builders.js";
import { within } from "../waits.js";

/** Ways to damage a backend's stored form in place, for the cases about damaged or foreign data. */
export interface Tamper {
  /** Rewrites the stored header's session format version. */
  setFormatVersion(id: string, version: number): Promise<void>;
  /** Leaves a partial record after the last one (a write cut short). */
  tearTail(id: string): Promise<void>;
  /** Makes the record at `seq` unreadable. */
  garble(id: string, seq: number): Promise<void>;
  /** Rewrites the type of the event at `seq`. */
  setType(id: string, seq: number, type: string): Promise<void>;
  /** A fingerprint of every stored byte, to show that a refused read changed nothing. */
  fingerprint(): Promise<string>;
}

/** One backend under test, over storage that outlives its instances. */
export interface BackendHarness {
  /** Opens a backend instance over the harness's storage (again, for the reload cases). */
  open(): Promise<SessionBackend>;
  /**
   * Damages stored data; absent when the backend keeps no stored form to damage (say why in
   * `ContractLimits.noTamper`). Two instances from `open()` behave as two processes would
   * (separate writer locks) unless `ContractLimits.oneWriter` says why not.
   */
  readonly tamper?: Tamper;
  /** Removes the storage. */
  cleanup(): Promise<void>;
}

/** The length of one `simpleTurn` with default options. */
const TURN_LENGTH = simpleTurn(0, 1).length;

let clock = TIME;
const now = () => ++clock;

/** What a backend cannot do, each with the reason that shows in the skipped cases' titles. */
export interface ContractLimits {
  /** Why the cases that damage stored data are skipped (the backend keeps no stored form). */
  readonly noTamper?: string;
  /** Why the cases that need two writers are skipped (instances share one writer). */
  readonly oneWriter?: string;
}

function titled(title: string, skip: string | undefined): string {
  return skip === undefined ? title : `${title} — skipped: ${skip}`;
}

/** A case whose second half needs what the backend lacks: the title says that half is skipped. */
function partly(title: string, skip: string | undefined): string {
  return skip === undefined ? title : `${title} — second half skipped: ${skip}`;
}

/** Runs the shared contract cases against one backend. */
export function runPersistenceContract(
  name: string,
  makeHarness: () => Promise<BackendHarness>,
  limits: ContractLimits = {},
): void {
  const tamperSkip = limits.noTamper;
  const writersSkip = limits.oneWriter;
  describe(`persistence contract: ${name}`, () => {
    const opened: { harness: BackendHarness; stores: SessionStore[] }[] = [];

    async function setup() {
      const harness = await makeHarness();
      const entry = { harness, stores: [] as SessionStore[] };
      opened.push(entry);
      const store = async () => {
        const s = new SessionStore({ backend: await harness.open(), now });
        entry.stores.push(s);
        return s;
      };
      return { harness, store };
    }

    afterEach(async () => {
      for (const { harness, stores } of opened.splice(0)) {
        for (const s of stores) await s.close();
        await harness.cleanup();
      }
    });

    const tamperCase = it.skipIf(tamperSkip !== undefined);
    const tamperTitle = (title: string) => titled(title, tamperSkip);
    const tamperOf = (harness: BackendHarness): Tamper => {
      if (!harness.tamper)
        throw new Error("expected a tamper hook: declare ContractLimits.noTamper instead");
      return harness.tamper;
    };

    it("1. round-trips the header and the events of a create + append exactly", async () => {
      const { store } = await setup();
      const a = await store();
      const events = balancedLog(2, { steps: 2, chunksPerStep: 3, toolCallsPerStep: 1 });
      const session = await a.create({ id: "s1", meta: { cwd: "/work", createdAt: 42 } });
      await session.append(events.slice(0, 10));
      await session.append(events.slice(10));
      await a.close();
      const reloaded = await (await store()).load("s1");
      expect(reloaded.header).toEqual({ version: 0, id: "s1", createdAt: 42, cwd: "/work" });
      expect(await reloaded.readEvents()).toEqual(events);
    });

    it("2. reads a log that ends inside a turn as stored; the writer closes it; a later append continues; a reload shows the same closed log", async () => {
      const { store } = await setup();
      const a = await store();
      const n = TURN_LENGTH;
      const open = [
        ...simpleTurn(0, 1),
        turnStart(n, 2),
        userMessage(n + 1, "more"),
        stepStart(n + 2, 2, 1),
        assistantChunk(n + 3, 2, 1),
      ];
      await a.create({ id: "s2", seed: open });
      await a.close();
      const b = await store();
      const read = await b.load("s2");
      expect(await read.readEvents()).toEqual(open);
      expect(read.openTurn).toBe(2);
      const repaired = await b.openForWriting("s2");
      expect((await repaired.readEvents()).slice(n + 4).map((e) => e.type)).toEqual([
        "step/end",
        "turn/end",
      ]);
      expect((await repaired.readEvents()).at(-1)).toMatchObject({
        seq: n + 5,
        data: { turn: 2, reason: { kind: "interrupted" } },
      });
      expect(await repaired.append(simpleTurn(n + 6, 3))).toBe(2 * n + 6);
      const written = await repaired.readEvents();
      await b.close();
      const again = await (await store()).load("s2");
      expect(await again.readEvents()).toEqual(written);
      expect(again.nextSeq).toBe(2 * n + 6);
    });

    it("3. answers an unanswered tool/call with the synthetic interrupted result before the closers", async () => {
      const { store } = await setup();
      const a = await store();
      const seed = [
        turnStart(0, 1),
        userMessage(1, "go"),
        stepStart(2, 1, 1),
        toolCall(3, 1, 1, "c1", "bash", "{}"),
      ];
      await a.create({ id: "s3", seed });
      await a.close();
      const repaired = await (await store()).openForWriting("s3");
      expect((await repaired.readEvents()).slice(4).map((e) => e.type)).toEqual([
        "tool/result",
        "step/end",
        "turn/end",
      ]);
      expect((await repaired.readEvents())[4]).toMatchObject({
        data: {
          callId: "c1",
          isError: true,
          error: { name: "InterruptedError", code: "interrupted" },
        },
        sourceEventSeqs: [3],
        surfaceOp: "append",
      });
    });

    it("4. stores every created session at once: header only without a seed, listed and readable by another instance before any event", async () => {
      const { store } = await setup();
      const a = await store();
      const other = await store();
      const ids = async () => (await other.list()).sessions.map((s) => s.header.id).sort();
      const fresh = await a.create({ id: "fresh", meta: { cwd: "/work" } });
      expect(await ids()).toEqual(["fresh"]);
      expect((await other.list()).sessions[0]).toMatchObject({ eventCount: 0 });
      expect((await other.load("fresh")).header).toEqual(fresh.header);
      await other.fork("fresh", { childSessionId: "fresh-child" });
      expect((await a.load("fresh-child")).header).toMatchObject({ parentSession: "fresh" });
      await a.create({ id: "seeded", seed: [] });
      await a.create({ id: "seeded2", seed: simpleTurn(0, 1) });
      await a.fork("seeded2", { childSessionId: "forked" });
      await a.importLog('{"type":"session","version":0,"id":"imported","createdAt":7}\n');
      expect(await ids()).toEqual([
        "forked",
        "fresh",
        "fresh-child",
        "imported",
        "seeded",
        "seeded2",
      ]);
      await fresh.append(simpleTurn(0, 1));
      expect(await (await other.load("fresh")).readEvents()).toEqual(simpleTurn(0, 1));
    });

    it("5. rejects a batch whose first seq is not the stored next seq (SEQ_CONFLICT)", async () => {
      const { store } = await setup();
      const a = await store();
      const s = await a.create({ id: "s5", seed: simpleTurn(0, 1) });
      await expect(s.append(simpleTurn(TURN_LENGTH + 1, 2))).rejects.toMatchObject({
        code: "SEQ_CONFLICT",
        details: { expectedSeq: TURN_LENGTH },
      });
    });

    it("6. rejects a seq gap inside a batch and leaves the stored log unchanged", async () => {
      const { store } = await setup();
      const a = await store();
      const s = await a.create({ id: "s6", seed: simpleTurn(0, 1) });
      const batch = simpleTurn(TURN_LENGTH, 2);
      const gapped = [
        ...batch.slice(0, 3),
        { ...batch[3], seq: TURN_LENGTH + 4 },
        ...batch.slice(4),
      ];
      await expect(s.append(gapped)).rejects.toMatchObject({
        code: "INVALID_EVENT",
        details: { rule: "seq-contiguous", index: 3 },
      });
      expect(s.nextSeq).toBe(TURN_LENGTH);
      await a.close();
      expect(await (await (await store()).load("s6")).readEvents()).toEqual(simpleTurn(0, 1));
    });

    it("7. rejects data that is not lossless JSON, naming the event type", async () => {
      const { store } = await setup();
      const a = await store();
      const s = await a.create({ id: "s7" });
      const bad = {
        ...turnStart(0, 1),
        data: { turn: 1, trigger: { kind: "message", source: { kind: "user" } }, x: Number.NaN },
      };
      const error = await s.append([bad]).catch((e) => e);
      expect(error).toMatchObject({
        code: "INVALID_EVENT",
        details: { rule: "json-value", seq: 0 },
      });
      expect(error.message).toContain("turn/start");
      expect((await a.list()).sessions.map((l) => l.eventCount)).toEqual([0]);
    });

    it("8. round-trips seedLength and parentSession through the header", async () => {
      const { store } = await setup();
      const a = await store();
      const seed = balancedLog(2);
      await a.create({
        id: "child",
        seed,
        meta: { parentSession: "parent", seedLength: TURN_LENGTH, createdAt: 5 },
      });
      await a.close();
      const header = (await (await store()).load("child")).header;
      expect(header).toEqual({
        version: 0,
        id: "child",
        createdAt: 5,
        parentSession: "parent",
        seedLength: TURN_LENGTH,
      });
    });

    tamperCase(
      tamperTitle("9. refuses a log at another session format version and leaves it untouched"),
      async () => {
        const { harness, store } = await setup();
        const tamper = tamperOf(harness);
        const a = await store();
        await a.create({ id: "s9", seed: simpleTurn(0, 1) });
        await a.close();
        await tamper.setFormatVersion("s9", 1);
        const before = await tamper.fingerprint();
        await expect((await store()).load("s9")).rejects.toMatchObject({
          code: "FORMAT_UNSUPPORTED",
          details: { found: 1, supported: 0 },
        });
        expect(await tamper.fingerprint()).toBe(before);
      },
    );

    tamperCase(tamperTitle("10. loads a torn tail as the intact prefix"), async () => {
      const { harness, store } = await setup();
      const tamper = tamperOf(harness);
      const a = await store();
      await a.create({ id: "s10", seed: balancedLog(2) });
      await a.close();
      await tamper.tearTail("s10");
      const loaded = await (await store()).load("s10");
      expect(await loaded.readEvents()).toEqual(balancedLog(2));
    });

    tamperCase(
      tamperTitle("11. reports a hole before the last turn/end as CORRUPT_LOG naming the location"),
      async () => {
        const { harness, store } = await setup();
        const tamper = tamperOf(harness);
        const a = await store();
        await a.create({ id: "s11", seed: balancedLog(2) });
        await a.close();
        await tamper.garble("s11", 3);
        const error = await (await store()).load("s11").catch((e) => e);
        expect(error).toMatchObject({ code: "CORRUPT_LOG" });
        expect(error.details.location).toContain("s11");
      },
    );

    it(
      partly(
        "12. refuses an unknown event type (FORMAT_UNSUPPORTED) on append, and on read when stored",
        tamperSkip,
      ),
      async () => {
        const { harness, store } = await setup();
        const a = await store();
        const s = await a.create({ id: "s12", seed: simpleTurn(0, 1) });
        await expect(
          s.append([{ type: "turn/pause", seq: TURN_LENGTH, time: 0, data: {} }]),
        ).rejects.toMatchObject({
          code: "FORMAT_UNSUPPORTED",
          details: { found: "turn/pause" },
        });
        if (tamperSkip !== undefined) return;
        await a.close();
        await tamperOf(harness).setType("s12", TURN_LENGTH - 1, "turn/pause");
        await expect((await store()).load("s12")).rejects.toMatchObject({
          code: "FORMAT_UNSUPPORTED",
        });
      },
    );

    it(
      partly(
        "13. lists newest created first on request (order: created) with an opaque cursor, filters by cwd and parentSession, and reads no whole log",
        tamperSkip,
      ),
      async () => {
        const { harness, store } = await setup();
        const a = await store();
        for (let i = 0; i < 7; i++) {
          await a.create({
            id: `l${i}`,
            seed: simpleTurn(0, 1, { time: 1000 + i }),
            meta: {
              createdAt: 100 + (i % 3),
              cwd: i % 2 === 0 ? "/even" : "/odd",
              ...(i >= 5 ? { parentSession: "l0" } : {}),
            },
          });
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await a.list({
            order: "created",
            limit: 3,
            ...(cursor === undefined ? {} : { cursor }),
          });
          expect(page.sessions.length).toBeLessThanOrEqual(3);
          seen.push(...page.sessions.map((s) => s.header.id));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        expect(seen).toEqual(["l5", "l2", "l4", "l1", "l6", "l3", "l0"]);
        expect(
          (await a.list({ order: "created", cwd: "/odd" })).sessions.map((s) => s.header.id),
        ).toEqual(["l5", "l1", "l3"]);
        expect(
          (await a.list({ order: "created", parentSession: "l0" })).sessions.map(
            (s) => s.header.id,
          ),
        ).toEqual(["l5", "l6"]);
        const first = (await a.list({ order: "created", limit: 1 })).sessions[0];
        expect(first).toMatchObject({
          eventCount: TURN_LENGTH,
          updatedAt: new Date(1005).toISOString(),
        });
        if (tamperSkip !== undefined) return;
        await a.close();
        await tamperOf(harness).garble("l5", 3);
        const listed = (await (await store()).list({ order: "created", limit: 1 })).sessions[0];
        expect(listed).toMatchObject({
          header: { id: "l5" },
          eventCount: TURN_LENGTH,
          updatedAt: new Date(1005).toISOString(),
        });
      },
    );

    it("14. exports a session as JSONL text, and importing that text recreates it exactly", async () => {
      const { store } = await setup();
      const a = await store();
      const events = balancedLog(2, { toolCallsPerStep: 1 });
      await a.create({
        id: "s14",
        seed: events,
        meta: { cwd: "/w", parentSession: "p", seedLength: 3, createdAt: 9 },
      });
      const text = await a.exportLog("s14");
      const lines = text.split("\n");
      expect(lines[0]).toBe(
        '{"type":"session","version":0,"id":"s14","createdAt":9,"cwd":"/w","parentSession":"p","seedLength":3}',
      );
      expect(lines.slice(1, -1)).toEqual(events.map((e) => JSON.stringify(e)));
      await a.delete("s14");
      const header = await a.importLog(text);
      expect(header).toEqual({
        version: 0,
        id: "s14",
        createdAt: 9,
        cwd: "/w",
        parentSession: "p",
        seedLength: 3,
      });
      expect(await a.exportLog("s14")).toBe(text);
      await a.importLog(text, { sessionId: "copy" });
      expect((await a.exportLog("copy")).split("\n").slice(1)).toEqual(lines.slice(1));
    });

    it("15. acknowledges a repeated append of identical events and refuses a different event at an old seq", async () => {
      const { store } = await setup();
      const a = await store();
      const s = await a.create({ id: "s15" });
      const turn = simpleTurn(0, 1);
      expect(await s.append(turn)).toBe(TURN_LENGTH);
      expect(await s.append(turn)).toBe(TURN_LENGTH);
      expect(await s.append(turn.slice(3))).toBe(TURN_LENGTH);
      const last = TURN_LENGTH - 1;
      const changed: SessionEvent[] = [
        ...turn.slice(0, last),
        { ...turn[last], time: 1 } as SessionEvent,
      ];
      await expect(s.append(changed)).rejects.toMatchObject({
        code: "SEQ_CONFLICT",
        details: { expectedSeq: TURN_LENGTH },
      });
      await a.close();
      expect(await (await (await store()).load("s15")).readEvents()).toEqual(turn);
    });

    it(
      partly(
        "16. deletes a session while its children keep their copies; deleting one another writer holds is SESSION_BUSY",
        writersSkip,
      ),
      async () => {
        const { store } = await setup();
        const a = await store();
        const parent = await a.create({ id: "parent", seed: balancedLog(2) });
        const child: SessionHeader = await a.fork(parent, {
          boundary: TURN_LENGTH - 1,
          childSessionId: "kid",
        });
        expect(child).toMatchObject({ parentSession: "parent", seedLength: TURN_LENGTH });
        await a.delete("parent");
        expect(await a.get("parent")).toBeUndefined();
        await expect(a.delete("parent")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
        expect(await (await a.load("kid")).readEvents()).toEqual(balancedLog(1));
        if (writersSkip !== undefined) return;
        // A fork leaves the child's writer lock free; whoever writes it next takes it.
        await a.openForWriting("kid");
        const b = await store();
        await expect(b.delete("kid")).rejects.toMatchObject({ code: "SESSION_BUSY" });
        expect((await a.load("kid")).nextSeq).toBe(TURN_LENGTH);
      },
    );

    it.skipIf(writersSkip !== undefined)(
      titled(
        "17. lets a reader see a log another writer holds as it stands, never repairing it, and never blocking the writer",
        writersSkip,
      ),
      async () => {
        const { store } = await setup();
        const a = await store();
        const open = [turnStart(0, 1), userMessage(1, "go"), stepStart(2, 1, 1)];
        const writer = await a.create({ id: "held", seed: open });
        const readerStore = await store();
        const reader = await readerStore.load("held");
        expect(await reader.readEvents()).toEqual(open);
        expect(reader.openTurn).toBe(1);
        await expect(reader.append([assistantChunk(3, 1, 1)])).rejects.toMatchObject({
          code: "SESSION_BUSY",
        });
        expect(await writer.append([assistantChunk(3, 1, 1)])).toBe(4);
        // The reader's next read is current: it sees the writer's append without reloading.
        expect((await readerStore.load("held")).nextSeq).toBe(4);
      },
    );

    it(
      titled(
        "18. a reader never takes the writer lock: another instance appends right after it reads, and every read sees every acknowledged append",
        writersSkip,
      ),
      async () => {
        const { store } = await setup();
        const a = await store();
        await a.create({ id: "shared", seed: [] });
        await a.close();
        // Before docs/readers.md's rules a read took the writer lock and kept it (SESSION_BUSY for the writer).
        const reader = await store();
        expect((await reader.load("shared")).nextSeq).toBe(0);
        const writer = await store();
        const events = balancedLog(3, { steps: 2, chunksPerStep: 2, toolCallsPerStep: 1 });
        let at = 0;
        while (at < events.length) {
          const batch = events.slice(at, at + 3);
          at = await writer.append("shared", batch);
          const seen = await reader.load("shared");
          expect(seen.nextSeq).toBe(at);
          expect((await seen.readEvents()).at(-1)).toEqual(events[at - 1]);
        }
        expect(await (await reader.load("shared")).readEvents()).toEqual(events);
      },
    );

    // 19 (loadFrom from a seq, and the whole log when the stored one is shorter) moved to the
    // backend contract of seedline/testing, which calls the backend directly as it did.

    it("20. subscribe tells of appends and deletes by any instance, for the watched id only, until unsubscribed", async () => {
      const { harness } = await setup();
      const writer = await harness.open();
      const watcher = await harness.open();
      try {
        await writer.create({ version: 0, id: "w", createdAt: 1 }, []);
        await writer.create({ version: 0, id: "quiet", createdAt: 1 }, []);
        const calls: string[] = [];
        let wake: (() => void) | undefined;
        const next = () => new Promise<void>((resolve) => (wake = resolve));
        const stopW = watcher.subscribe("w", () => {
          calls.push("w");
          wake?.();
        });
        const stopQuiet = watcher.subscribe("quiet", () => calls.push("quiet"));
        // A backend may tell every subscriber once when its feed starts (it cannot know what
        // changed before): count from the first notification of a real change on.
        let seen = next();
        await writer.append("w", 0, serializeEvents(simpleTurn(0, 1).slice(0, 3)));
        await within(seen, "a notification of the first append");
        calls.length = 0;
        seen = next();
        await writer.append("w", 3, serializeEvents(simpleTurn(0, 1).slice(3)));
        await within(seen, "a notification of the append");
        seen = next();
        await writer.delete("w");
        await within(seen, "a notification of the delete");
        expect(calls.filter((c) => c === "quiet")).toEqual([]);
        stopW();
        const before = calls.length;
        await writer.create(
          { version: 0, id: "w", createdAt: 2 },
          serializeEvents(simpleTurn(0, 1)),
        );
        // The quiet id is still watched: once it hears of its own change, the stopped one had
        // every chance to hear of the earlier one.
        const quietSeen = new Promise<void>((resolve) => {
          const stop = watcher.subscribe("quiet", () => {
            stop();
            resolve();
          });
        });
        await writer.append("quiet", 0, serializeEvents(simpleTurn(0, 1)));
        await within(quietSeen, "a notification of the quiet id's append");
        expect(calls.slice(before).filter((c) => c === "w")).toEqual([]);
        stopQuiet();
      } finally {
        await watcher.close();
        await writer.close();
      }
    });

    it("21. watch delivers every event once and in order from any instance, catches up from a past seq, and ends on delete", async () => {
      const { store } = await setup();
      const writer = await store();
      const reader = await store();
      const events = balancedLog(2, { steps: 2, chunksPerStep: 2, toolCallsPerStep: 1 });
      await writer.create({ id: "watched", seed: events.slice(0, 5) });
      const watch = reader.watch("watched", { fromSeq: 2 });
      expect((await watch.ready).nextSeq).toBe(2);
      const got: SessionEvent[] = [];
      let deleted = false;
      let caughtUp: () => void = () => {};
      const allSeen = new Promise<void>((resolve) => (caughtUp = resolve));
      const consumed = (async () => {
        for await (const batch of watch) {
          if (batch.deleted) deleted = true;
          got.push(...batch.events);
          if (batch.nextSeq === events.length) caughtUp();
        }
      })();
      for (let at = 5; at < events.length; at += 4) {
        await writer.append("watched", events.slice(at, at + 4));
      }
      // Events a watch has not read when its session is deleted are gone with it.
      await within(allSeen, "every appended event");
      await writer.delete("watched");
      await within(consumed, "the watch to end after the delete");
      expect(got).toEqual(events.slice(2));
      expect(deleted).toBe(true);
    });

    // Seen failing before ids and header text were checked for well-formed Unicode: on
    // PostgreSQL "s\udbff" was stored as "s\ufffd", and deleting one removed the other.
    it("22. refuses ids and header text with a lone surrogate (INVALID_PARAMS) and keeps them in event data", async () => {
      const { store } = await setup();
      const a = await store();
      const other = await a.create({ id: "s\ufffd", seed: simpleTurn(0, 1) });
      for (const attempt of [
        () => a.create({ id: "s\udbff" }),
        () => a.load("s\udbff"),
        () => a.delete("s\udbff"),
        () => a.fork("s\ufffd", { childSessionId: "child\ud800" }),
        () => a.fork("s\ufffd", { childSessionId: "child", cwd: "/w\udc00" }),
        () => a.create({ id: "c", meta: { cwd: "/w\udc00" } }),
        () => a.importLog('{"type":"session","version":0,"id":"i\\udbff","createdAt":1}\n'),
      ]) {
        await expect(attempt()).rejects.toMatchObject({ code: "INVALID_PARAMS" });
      }
      expect(await (await (await store()).load("s\ufffd")).readEvents()).toEqual(
        await other.readEvents(),
      );
      expect((await a.list()).sessions.map((l) => l.header.id)).toEqual(["s\ufffd"]);
      const lone = userMessage(0, "half a pair: \ud83d");
      await a.create({ id: "data", seed: [turnStart(0, 1), { ...lone, seq: 1 }] });
      const read = await (await store()).load("data");
      expect((await read.readEvents())[1]).toEqual({ ...lone, seq: 1 });
    });
  });
}
