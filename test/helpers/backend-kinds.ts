// Every backend kind, opened again over storage named by a folder (a fresh instance each time, as another process would).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  JsonlBackend,
  MemoryBackend,
  type SessionBackend,
  SqliteBackend,
} from "../../src/index.js";
import { makePostgresHarness, POSTGRES_SKIP, type PostgresHarness } from "./postgres-harness.js";

/** Openers by backend kind, and the cleanup of what they made outside the folders. */
export interface BackendKinds {
  /** `memory`, `jsonl`, `sqlite`, and `postgres` when the test server answers. */
  readonly open: Readonly<Record<string, (dir: string) => Promise<SessionBackend>>>;
  /** Drops the PostgreSQL schemas (the caller removes the folders). */
  cleanup(): Promise<void>;
}

/**
 * Openers of every backend kind in `process` durability: the same `dir` gives the same storage
 * (the same memory backend, JSONL folder, SQLite file or PostgreSQL schema), a new `dir` new storage.
 */
export function backendKinds(): BackendKinds {
  const memories = new Map<string, MemoryBackend>();
  const schemas = new Map<string, PostgresHarness>();
  return {
    open: {
      memory: async (dir) => {
        const backend = memories.get(dir) ?? new MemoryBackend();
        memories.set(dir, backend);
        return backend;
      },
      jsonl: async (dir) => new JsonlBackend(join(dir, "jsonl"), { durability: "process" }),
      sqlite: async (dir) => {
        mkdirSync(dir, { recursive: true });
        return SqliteBackend.open(join(dir, "sessions.db"), { durability: "process" });
      },
      // PostgreSQL joins when the test server answers (see test/postgres-harness.ts for when it skips).
      ...(POSTGRES_SKIP === undefined
        ? {
            postgres: async (dir: string) => {
              const harness = schemas.get(dir) ?? (await makePostgresHarness());
              schemas.set(dir, harness);
              return harness.open({ durability: "process" });
            },
          }
        : {}),
    },
    async cleanup() {
      for (const harness of schemas.values()) await harness.cleanup();
      schemas.clear();
    },
  };
}
