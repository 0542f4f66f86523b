// A SQLite session deleted and stored anew by another process, ending at the same seq and time: a spawned server's session/watch of it ends with reason deleted, as on JSONL and PostgreSQL.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, expect, it } from "vitest";
import type { SeedlineClient, WatchBatch } from "../../../src/index.js";
import { simpleTurn, TIME } from "../../helpers/builders.js";
import { spawnedClient, tempDir } from "../../helpers/rpc-fixtures.js";
import { within } from "../../helpers/waits.js";

const temp = tempDir("seedline-watch-recreate-");
afterAll(() => temp.remove());

const clients: SeedlineClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/**
 * Deletes session `id` and stores it anew under the same id with `createdAt`, its events the
 * same rows (so its last event has the same seq and time), in one write transaction of another
 * connection: no look of a poller can fall between the delete and the new rows.
 */
function recreateAtOnce(path: string, id: string, createdAt: number): void {
  const db = new Database(path);
  try {
    db.pragma("foreign_keys = ON");
    db.transaction(() => {
      const session = db.prepare("SELECT * FROM sessions WHERE id = ?").get(id) as Record<
        string,
        unknown
      >;
      const events = db.prepare("SELECT * FROM events WHERE session_id = ? ORDER BY seq").all(id);
      const summary = db.prepare("SELECT * FROM catalog_summaries WHERE session_id = ?").get(id);
      db.prepare("DELETE FROM sessions WHERE id = ?").run(id);
      db.prepare(
        "INSERT INTO sessions VALUES (@id, @version, @created_at, @cwd, @parent_session, @seed_length)",
      ).run({ ...session, created_at: createdAt });
      const insertEvent = db.prepare(
        "INSERT INTO events VALUES (@session_id, @seq, @type, @time, @data, @source_event_seqs, @surface_op)",
      );
      for (const event of events) insertEvent.run(event);
      db.prepare(
        "INSERT INTO catalog_summaries VALUES (@session_id, @last_seq, @updated_at, @derived_title)",
      ).run(summary);
    })();
  } finally {
    db.close();
  }
}

it("a watch ends with reason deleted when another process deletes the session and stores one anew ending at the same seq and time", async () => {
  // Fails without the fix: the change poller compared only the last event's seq@time, saw
  // nothing change, and the watch never ended ("expected the watch to end … within 20000 ms").
  const path = join(temp.dir, "recreated.db");
  const { client, stderr } = spawnedClient(`sqlite:${path}`, "ndjson");
  clients.push(client);
  const id = "recreated";
  await client.sessionCreate({ sessionId: id, seed: simpleTurn(0, 1), meta: { createdAt: TIME } });
  const watch = client.watch(id);
  const { nextSeq } = await watch.ready;
  const batches: WatchBatch[] = [];
  const finished = (async () => {
    for await (const batch of watch) batches.push(batch);
  })();

  recreateAtOnce(path, id, TIME + 1);

  await within(finished, "the watch to end after the session was deleted and stored anew");
  expect(batches).toEqual([{ sessionId: id, events: [], nextSeq, deleted: true }]);
  // The session stored anew is the one the server reads now, and a new watch follows it.
  const read = await client.sessionRead({ sessionId: id });
  expect(read.header.createdAt).toBe(TIME + 1);
  expect(read.nextSeq).toBe(nextSeq);
  const again = client.watch(id);
  expect((await again.ready).nextSeq).toBe(nextSeq);
  await again.return();
  expect(stderr()).toBe("");
});
