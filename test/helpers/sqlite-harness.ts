// A SQLite backend over a fresh temporary database file, with tamper hooks in raw SQL on that file.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteBackend } from "../../src/store/sqlite/sqlite-backend.js";
import type { ContractHarness, ContractTamper } from "../../src/testing/index.js";

/** A harness for the backend contract: every `open()` is a new instance over the same database file. */
export async function makeSqliteHarness(): Promise<
  ContractHarness & { readonly tamper: ContractTamper }
> {
  const dir = mkdtempSync(join(tmpdir(), "seedline-sqlite-contract-"));
  const path = join(dir, "store.db");
  /** Runs one raw statement on the database file, as another program damaging it would. */
  const edit = async (sql: string, ...params: unknown[]) => {
    const db = new Database(path);
    db.prepare(sql).run(...params);
    db.close();
  };
  return {
    open: () => SqliteBackend.open(path),
    tamper: {
      setFormatVersion: (id, version) =>
        edit("UPDATE sessions SET version = ? WHERE id = ?", version, id),
      tearTail: (id) =>
        edit(
          `INSERT INTO events SELECT session_id, seq + 1, 'turn/start', time, '{"turn":', NULL, NULL
           FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1`,
          id,
        ),
      garble: (id, seq) =>
        edit(
          "UPDATE events SET data = '#' || substr(data, 2) WHERE session_id = ? AND seq = ?",
          id,
          seq,
        ),
      setType: (id, seq, type) =>
        edit("UPDATE events SET type = ? WHERE session_id = ? AND seq = ?", type, id, seq),
      // Every stored row and the layout stamp, read on a read-only connection.
      fingerprint: async () => {
        const db = new Database(path, { readonly: true });
        const hash = createHash("sha256").update(
          String(db.pragma("user_version", { simple: true })),
        );
        for (const table of ["sessions", "events"]) {
          for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).raw().iterate()) {
            hash.update(JSON.stringify(row));
          }
        }
        db.close();
        return hash.digest("hex");
      },
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
