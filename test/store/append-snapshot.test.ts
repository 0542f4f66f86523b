// Appends and seeds are taken when called: what the caller changes afterwards is never stored, on every backend.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  InvalidEventError,
  type SessionBackend,
  type SessionEvent,
  SessionStore,
} from "../../src/index.js";
import { backendKinds } from "../helpers/backend-kinds.js";
import { simpleTurn, turnEnd, userMessage } from "../helpers/builders.js";
import { rejectionOf } from "../helpers/store-builders.js";

const kinds = backendKinds();
const dirs: string[] = [];

afterAll(async () => {
  await kinds.cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A user message whose text the test changes in place after the call. */
function mutable(
  seq: number,
  text: string,
): SessionEvent & { data: { content: { text: string }[] } } {
  return userMessage(seq, text) as SessionEvent & { data: { content: { text: string }[] } };
}

/** The details of an InvalidEventError (failing the test for anything else). */
function invalidDetails(error: unknown): Record<string, unknown> {
  expect(error).toBeInstanceOf(InvalidEventError);
  expect((error as InvalidEventError).code).toBe("INVALID_EVENT");
  return (error as InvalidEventError).details as Record<string, unknown>;
}

for (const [kind, open] of Object.entries(kinds.open)) {
  describe(`a batch is taken when called (${kind})`, () => {
    let dir = "";
    /** A store over new storage; `reopen` gives another store over the same storage. */
    async function fresh(): Promise<{ store: SessionStore; reopen: () => Promise<SessionStore> }> {
      dir = mkdtempSync(join(tmpdir(), `seedline-snapshot-${kind}-`));
      dirs.push(dir);
      const at = dir;
      const backend: SessionBackend = await open(at);
      return {
        store: new SessionStore({ backend }),
        reopen: async () => new SessionStore({ backend: await open(at) }),
      };
    }

    it("stores the batch when the caller empties its array after the call", async () => {
      // Seen failing before the fix: the append resolved 0 and stored nothing.
      const { store, reopen } = await fresh();
      await store.create({ id: "s" });
      const batch = simpleTurn(0, 1);
      const expected = structuredClone(batch);
      const appended = store.append("s", batch);
      batch.length = 0;
      expect(await appended).toBe(expected.length);
      expect(await (await store.load("s")).readEvents()).toEqual(expected);
      await store.close();
      const other = await reopen();
      expect(await (await other.load("s")).readEvents()).toEqual(expected);
      await other.close();
    });

    it("stores each event as it was at the call when the caller changes it afterwards", async () => {
      // Seen failing before the fix: the stored text was "after" and the stored seq-1 event the replacement.
      const { store, reopen } = await fresh();
      await store.create({ id: "s" });
      const batch = [mutable(0, "before"), mutable(1, "second")];
      const expected = structuredClone(batch);
      const appended = store.append("s", batch);
      (batch[0]?.data.content[0] as { text: string }).text = "after";
      batch[1] = mutable(1, "replacement");
      expect(await appended).toBe(2);
      expect(await (await store.load("s")).readEvents()).toEqual(expected);
      await store.close();
      const other = await reopen();
      expect(await (await other.load("s")).readEvents()).toEqual(expected);
      await other.close();
    });

    it("takes the batch when called through Session.append too", async () => {
      // Seen failing before the fix: nothing stored after `batch.length = 0`, and the changed text stored.
      const { store, reopen } = await fresh();
      const session = await store.create({ id: "s" });
      const batch = [mutable(0, "before")];
      const appended = session.append(batch);
      batch[0]?.data.content.push({ text: "added" });
      (batch[0]?.data.content[0] as { text: string }).text = "after";
      batch.length = 0;
      expect(await appended).toBe(1);
      expect(await session.readEvents()).toEqual([userMessage(0, "before")]);
      await store.close();
      const other = await reopen();
      expect(await (await other.load("s")).readEvents()).toEqual([userMessage(0, "before")]);
      await other.close();
    });

    it("refuses an event invalid at the call with the same details when the caller fixes it afterwards", async () => {
      // Seen failing before the fix: the event fixed after the call was stored and the append resolved 1.
      const { store } = await fresh();
      const session = await store.create({ id: "s" });
      const bad = userMessage(0, "x") as unknown as { data: { content: unknown } };
      const content = bad.data.content;
      bad.data.content = "not blocks";
      const appended = store.append("s", [bad]);
      bad.data.content = content;
      expect(invalidDetails(await rejectionOf(appended))).toEqual({
        seq: 0,
        index: 0,
        rule: "schema",
        instancePath: "/data/content",
        problems: [
          {
            seq: 0,
            index: 0,
            rule: "schema",
            instancePath: "/data/content",
            message: expect.stringMatching(/^expected a valid "user\/message" event, got: /),
          },
        ],
        problemCount: 1,
      });
      expect(await session.readEvents()).toEqual([]);
      // Refusals keep batch order: the state rule broken at index 0 is reported before the
      // schema error at index 1, both found only when the batch's turn comes.
      const ordered = store.append("s", [turnEnd(0, 1), { ...userMessage(1, "y"), time: -1 }]);
      const orderedDetails = invalidDetails(await rejectionOf(ordered));
      expect(orderedDetails).toMatchObject({ seq: 0, index: 0, rule: "turn-order" });
      // Both are listed: the schema is checked on every event, past the first problem too.
      expect(orderedDetails.problems).toMatchObject([
        { index: 0, rule: "turn-order" },
        { index: 1, rule: "schema" },
      ]);
      // A non-array is INVALID_PARAMS, as a rejected promise, never a synchronous throw.
      let notArray: Promise<number> | undefined;
      expect(() => {
        notArray = store.append("s", "no" as unknown as unknown[]);
      }).not.toThrow();
      await expect(notArray).rejects.toMatchObject({ code: "INVALID_PARAMS" });
      expect(await store.append("s", [userMessage(0, "ok")])).toBe(1);
      await store.close();
    });

    it("stores a seed as it was at the call when the caller changes it afterwards", async () => {
      // Seen failing before the fix: the created session held no events.
      const { store, reopen } = await fresh();
      const first = mutable(0, "before");
      const seed = [first, ...simpleTurn(1, 1)];
      const expected = structuredClone(seed);
      const created = store.create({ id: "s", seed });
      (first.data.content[0] as { text: string }).text = "after";
      seed.length = 0;
      expect(await (await created).readEvents()).toEqual(expected);
      await store.close();
      const other = await reopen();
      expect(await (await other.load("s")).readEvents()).toEqual(expected);
      await other.close();
    });
  });
}

describe("a fork is taken when called", () => {
  it("stores the cwd checked at the call when the caller changes its options afterwards", async () => {
    // Seen failing before the fix: the child's header held "relative/path", a cwd never checked.
    const store = new SessionStore();
    await store.create({ id: "s", seed: simpleTurn(0, 1), meta: { cwd: "/work/s" } });
    const options: { cwd?: string } = { cwd: "/work/child" };
    const forked = store.fork("s", { childSessionId: "child", ...options });
    options.cwd = "relative/path";
    expect((await forked).cwd).toBe("/work/child");
    expect((await store.load("child")).header.cwd).toBe("/work/child");
  });
});
