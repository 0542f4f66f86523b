// An append reported as possibly landed (commitUnknown) that lands after its retry read the log: the retry is acknowledged, not refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type SerializedEvent,
  type SessionBackend,
  SessionStore,
  SqliteBackend,
  StorageUnavailableError,
} from "../../src/index.js";
import { simpleTurn } from "../helpers/builders.js";

const temp = mkdtempSync(join(tmpdir(), "seedline-late-landing-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * A real SQLite backend whose first append to a session fails as PostgreSQL's one-statement append
 * does when its connection breaks unanswered (STORAGE_UNAVAILABLE, commitUnknown: true) and then
 * lands anyway, late: just before the next append reaches the database, as a statement that was
 * waiting on the session's row lock does once the lock is free.
 */
function landingLate(inner: SqliteBackend): SessionBackend {
  let late: (() => Promise<void>) | undefined;
  let failed = false;
  const append = async (id: string, fromSeq: number, events: readonly SerializedEvent[]) => {
    if (!failed) {
      failed = true;
      late = () => inner.append(id, fromSeq, events);
      throw new StorageUnavailableError(
        "STORAGE_UNAVAILABLE",
        "expected an answer to the append, got a broken connection",
        { location: inner.path, commitUnknown: true },
      );
    }
    const landing = late;
    late = undefined;
    await landing?.();
    return inner.append(id, fromSeq, events);
  };
  return new Proxy(inner, {
    get(target, member) {
      if (member === "append") return append;
      const value = Reflect.get(target, member, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as SessionBackend;
}

describe("an append that lands after its retry read the log", () => {
  // The retry read the log before the first attempt landed, so it appended at the old end and the
  // backend refused it: this test failed with SEQ_CONFLICT (expectedSeq 14), as the R7 PostgreSQL
  // reliability run did once ("SEQ_CONFLICT {"code":"SEQ_CONFLICT","expectedSeq":4515}").
  it("acknowledges the retry of the batch that landed, and stores it once", async () => {
    const inner = await SqliteBackend.open(join(temp, "late.db"));
    const store = new SessionStore({ backend: landingLate(inner) });
    const session = await store.create({ id: "s", seed: simpleTurn(0, 1) });
    const batch = simpleTurn(7, 2);
    const first = await session.append(batch).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(StorageUnavailableError);
    expect((first as StorageUnavailableError).commitUnknown).toBe(true);

    await expect(store.append("s", batch)).resolves.toBe(14);
    await expect(store.append("s", simpleTurn(14, 3))).resolves.toBe(21);
    expect(await store.readEvents("s")).toEqual([
      ...simpleTurn(0, 1),
      ...batch,
      ...simpleTurn(14, 3),
    ]);
    await store.close();
  });

  it("still refuses a batch that is not what landed", async () => {
    const inner = await SqliteBackend.open(join(temp, "other.db"));
    const store = new SessionStore({ backend: landingLate(inner) });
    const session = await store.create({ id: "s", seed: simpleTurn(0, 1) });
    await expect(session.append(simpleTurn(7, 2))).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(
      store.append("s", simpleTurn(7, 2, { prompt: "another prompt" })),
    ).rejects.toMatchObject({ code: "SEQ_CONFLICT", details: { expectedSeq: 14 } });
    expect(await store.readEvents("s")).toEqual([...simpleTurn(0, 1), ...simpleTurn(7, 2)]);
    await store.close();
  });
});
