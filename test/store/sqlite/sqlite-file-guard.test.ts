// An SQLite backend whose database file (or only its -wal file) is removed or replaced under it: STORAGE_UNAVAILABLE, never an acknowledgement.
//
// Seen failing before the fix (src/ at d7a1030): every append and create below resolved, and the
// reopened database lacked them.

import { copyFileSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasCode, SqliteBackend } from "../../../src/index.js";
import { serializeEvents } from "../../../src/log/serialized-event.js";
import { simpleTurn, testHeader } from "../../helpers/builders.js";

const root = mkdtempSync(join(tmpdir(), "seedline-guard-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection, got an acknowledgement");
}

function expectUnavailable(error: unknown, path: string): void {
  expect(hasCode(error, "STORAGE_UNAVAILABLE"), String(error)).toBe(true);
  expect((error as { details: unknown }).details).toEqual({ location: path, commitUnknown: false });
}

/** A backend with session `id` holding one turn, and the turn. */
async function opened(name: string, id: string) {
  const path = join(root, name);
  const backend = await SqliteBackend.open(path, { durability: "process" });
  await backend.create(testHeader(id), []);
  const turn = simpleTurn(0, 1);
  await backend.append(id, 0, serializeEvents(turn));
  return { path, backend, turn };
}

describe("the SQLite file guard", () => {
  it("the -wal file removed on its own: the next append is refused", async () => {
    const { path, backend, turn } = await opened("wal.db", "w");
    // Acknowledged rows still in the -wal file are lost with it: what matters is that nothing
    // more is acknowledged.
    rmSync(`${path}-wal`);
    expectUnavailable(
      await rejection(
        backend.append("w", turn.length, serializeEvents(simpleTurn(turn.length, 2))),
      ),
      path,
    );
    await backend.close();
  });

  it("replaced by another file: refused at once and ever after (reads that reach the database too)", async () => {
    const { path, backend, turn } = await opened("replaced.db", "r");
    const copy = join(root, "copy.db");
    copyFileSync(path, copy);
    renameSync(copy, path);
    const error = await rejection(
      backend.append("r", turn.length, serializeEvents(simpleTurn(turn.length, 2))),
    );
    expectUnavailable(error, path);
    expect(String((error as Error).message)).toMatch(/another file/);
    expect(String((error as Error).message)).toMatch(/restart/);
    expectUnavailable(await rejection(backend.load("r")), path);
    expectUnavailable(await rejection(backend.create(testHeader("later"), [])), path);
    await backend.close();
  });

  it("removed while a group gathers: the group is rolled back, none of its batches acknowledged", async () => {
    const { path, backend, turn } = await opened("gathering.db", "g");
    const next = simpleTurn(turn.length, 2);
    const pending = [
      backend.append("g", turn.length, serializeEvents(next)),
      backend.create(testHeader("g2"), serializeEvents(simpleTurn(0, 1))),
    ];
    // Still gathering (the group waits a turn of the event loop): the file goes now.
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    for (const write of pending) expectUnavailable(await rejection(write), path);
    expect(backend.writeStats.transactions).toBe(2);
    await backend.close();
  });
});
