// Opening a layout-4 SQLite store upgrades it to layout 5 in one transaction: summaries, activity and derived titles filled.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SQLITE_LAYOUT_VERSION, SQLITE_UPGRADE_FROM } from "../src/generated.js";
import { SessionStore, SqliteBackend } from "../src/index.js";
import { titleFromContent } from "../src/log/session-title.js";
import { corpusLogs } from "./corpus.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A layout-4 database holding the corpus: made by this build, then taken back to layout 4 the way
 * layout 4 was — without the summary table (and its index), stamped 4.
 */
async function layoutFourStore(): Promise<{ path: string; ids: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "seedline-upgrade-"));
  dirs.push(dir);
  const path = join(dir, "sessions.db");
  const store = new SessionStore({ backend: await SqliteBackend.open(path) });
  const ids: string[] = [];
  for (const [i, log] of corpusLogs().entries()) {
    ids.push((await store.importLog(log.text, { sessionId: `corpus-${i}` })).id);
  }
  await store.close();
  const db = new Database(path);
  db.exec(`DROP TABLE session_summaries; PRAGMA user_version = ${SQLITE_UPGRADE_FROM};`);
  db.close();
  return { path, ids };
}

describe("SQLite layout upgrade", () => {
  it("upgrades a layout-4 store on open: every session listed with its activity and derived title", async () => {
    expect(SQLITE_UPGRADE_FROM).toBe(4);
    const { path, ids } = await layoutFourStore();
    const store = new SessionStore({ backend: await SqliteBackend.open(path) });
    try {
      const listed = new Map<string, { title?: string; updatedAt?: string }>();
      let cursor: string | undefined;
      do {
        const page = await store.list({ limit: 50, ...(cursor === undefined ? {} : { cursor }) });
        for (const s of page.sessions) listed.set(s.header.id, s);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect([...listed.keys()].sort()).toEqual([...ids].sort());
      for (const [i, log] of corpusLogs().entries()) {
        const events = log.events as { type: string; time: number; data: { content?: unknown } }[];
        const first = events.find((e) => e.type === "user/message");
        const title = first === undefined ? undefined : titleFromContent(first.data.content);
        const last = events.at(-1);
        const entry = listed.get(`corpus-${i}`);
        expect(entry?.title).toBe(title);
        const at = last === undefined ? (log.header as { createdAt: number }).createdAt : last.time;
        expect(entry?.updatedAt).toBe(new Date(at).toISOString());
      }
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SQLITE_LAYOUT_VERSION);
    db.close();
  });

  it("keeps the upgraded store's explicit titles and activity across reopening", async () => {
    const { path } = await layoutFourStore();
    let store = new SessionStore({ backend: await SqliteBackend.open(path) });
    await store.setTitle("corpus-0", "kept");
    await store.close();
    store = new SessionStore({ backend: await SqliteBackend.open(path) });
    try {
      expect(await store.title("corpus-0")).toBe("kept");
    } finally {
      await store.close();
    }
  });

  it("refuses to upgrade a layout-4 file whose tables are not layout 4's (CORRUPT_LOG), leaving it at 4", async () => {
    const { path } = await layoutFourStore();
    const db = new Database(path);
    db.exec("CREATE TABLE extra (x INTEGER)");
    db.close();
    await expect(SqliteBackend.open(path)).rejects.toMatchObject({ code: "CORRUPT_LOG" });
    const after = new Database(path, { readonly: true });
    expect(after.pragma("user_version", { simple: true })).toBe(4);
    after.close();
  });
});
