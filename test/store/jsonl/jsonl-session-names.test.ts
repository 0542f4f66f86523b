// JSONL file names of long ids: one file per id, and logs the previous build stored under a long id's old name still found.

import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionHeader } from "../../../src/index.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { JsonlBackend } from "../../../src/store/jsonl/jsonl-backend.js";
import { legacyLogFileName, logFileName } from "../../../src/store/jsonl/layout.js";
import { simpleTurn, TIME, userMessage } from "../../helpers/builders.js";
import { collidingIds } from "../../helpers/id-fixtures.js";

const roots: string[] = [];
const backends: JsonlBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function open(): { backend: JsonlBackend; dir: string } {
  const root = mkdtempSync(join(tmpdir(), "seedline-jsonl-names-"));
  roots.push(root);
  const backend = new JsonlBackend(root);
  backends.push(backend);
  return { backend, dir: join(root, "sessions") };
}

function header(id: string, createdAt = TIME): SessionHeader {
  return { version: 0, id, createdAt };
}

/** Moves a log to the name the previous build gave its (long) id, as that build left it. */
function storeUnderOldName(dir: string, id: string): void {
  renameSync(join(dir, logFileName(id)), join(dir, legacyLogFileName(id) as string));
}

const { long, short } = collidingIds();

describe("a long id and a short id that spells the long id's old file name", () => {
  // Before the fix both ids mapped to one file: `has(short)` was true and `load(short)` threw
  // CORRUPT_LOG (the header named the long id), so this test failed at its first expectation.
  it("keeps the long session when the short id is absent, created, appended to and deleted", async () => {
    const { backend } = open();
    const events = simpleTurn(0, 1);
    await backend.create(header(long), serializeEvents(events));
    expect(await backend.has(short)).toBe(false);
    expect(await backend.load(short)).toBeUndefined();
    expect(await backend.loadFrom(short, 0)).toBeUndefined();
    expect(await backend.forkPoint(short, undefined)).toBeUndefined();
    expect(await backend.delete(short)).toBe(false);
    await backend.create(header(short), []);
    await backend.append(short, 0, serializeEvents([userMessage(0, "short")]));
    expect((await backend.load(short))?.events).toEqual([userMessage(0, "short")]);
    expect(await backend.delete(short)).toBe(true);
    expect(await backend.load(long)).toEqual({ header: header(long), events, tornTail: false });
  });

  // Before the fix the short id's file was the long id's too: this failed at `has(long)` (true),
  // and `delete(long)` removed the short session (true, then `load(short)` was undefined).
  it("answers the never-created long id as absent over the short id's file, and deleting it leaves that file", async () => {
    const { backend, dir } = open();
    await backend.create(header(short), serializeEvents(simpleTurn(0, 1)));
    // The short id's name is the long id's old name: the long id's lookup finds a file there
    // whose header names another id, so it is not the long session.
    expect(readdirSync(dir)).toContain(legacyLogFileName(long));
    expect(await backend.has(long)).toBe(false);
    expect(await backend.load(long)).toBeUndefined();
    expect(await backend.loadFrom(long, 0)).toBeUndefined();
    expect(await backend.forkPoint(long, undefined)).toBeUndefined();
    await expect(backend.append(long, 0, [])).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(await backend.delete(long)).toBe(false);
    expect((await backend.load(short))?.header.id).toBe(short);
    await backend.create(header(long, TIME + 1), []);
    expect((await backend.catalog.list({ limit: 10 })).sessions.map((s) => s.header.id)).toEqual([
      long,
      short,
    ]);
  });
});

describe("a store the previous build wrote", () => {
  // Under the previous build the old name was the only one: run against it, this failed where it
  // expects no file under the old name after the first write (the log never moved).
  it("finds a long id's log under its old name, lists it once, and moves it to its new name on the first write", async () => {
    const { backend, dir } = open();
    const events = simpleTurn(0, 1);
    await backend.create(header(long), serializeEvents(events));
    storeUnderOldName(dir, long);
    expect(await backend.has(long)).toBe(true);
    expect(await backend.load(long)).toEqual({ header: header(long), events, tornTail: false });
    expect((await backend.forkPoint(long, undefined))?.length).toBe(events.length);
    expect((await backend.catalog.list({ limit: 10 })).sessions).toMatchObject([
      { header: { id: long }, eventCount: events.length },
    ]);
    const more = [userMessage(events.length, "more")];
    await backend.append(long, events.length, serializeEvents(more));
    expect(existsSync(join(dir, legacyLogFileName(long) as string))).toBe(false);
    expect(readdirSync(dir).filter((name) => name.endsWith(".jsonl"))).toEqual([logFileName(long)]);
    expect((await backend.load(long))?.events).toEqual([...events, ...more]);
    expect(await backend.delete(long)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith(".jsonl"))).toEqual([]);
  });

  // Run against the previous build this failed at its first expectation: `has(short)` was true,
  // the long id's log standing for the short session.
  it("answers the short id as absent over the long id's old file, and moves that file away to create it", async () => {
    const { backend, dir } = open();
    const events = simpleTurn(0, 1);
    await backend.create(header(long), serializeEvents(events));
    storeUnderOldName(dir, long);
    // The file under the short id's name is the long id's, not a damaged log of the short id.
    expect(await backend.has(short)).toBe(false);
    expect(await backend.load(short)).toBeUndefined();
    expect(await backend.delete(short)).toBe(false);
    await backend.create(header(short, TIME + 1), serializeEvents([userMessage(0, "short")]));
    expect((await backend.load(short))?.events).toEqual([userMessage(0, "short")]);
    expect(await backend.load(long)).toEqual({ header: header(long), events, tornTail: false });
    expect(
      readdirSync(dir)
        .filter((name) => name.endsWith(".jsonl"))
        .sort(),
    ).toEqual([logFileName(long), logFileName(short)].sort());
  });

  it("still reports CORRUPT_LOG for a file under an id's own name whose header names another id", async () => {
    const { backend, dir } = open();
    await backend.create(header(long), serializeEvents(simpleTurn(0, 1)));
    // The long id's log under a name that is neither its own nor its old one.
    renameSync(join(dir, logFileName(long)), join(dir, logFileName("b")));
    await expect(backend.load("b")).rejects.toMatchObject({
      code: "CORRUPT_LOG",
      details: { location: join(dir, logFileName("b")), line: 1 },
    });
    expect(await backend.load(long)).toBeUndefined();
  });
});
