// W1 and W2's stores: each durable backend as a store URL for spawned servers, openable in process too, and removed afterwards.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { JsonlBackend, type SessionBackend, SqliteBackend } from "../../src/index.js";
import type { BenchContext } from "./harness.js";
import { tempDir } from "./harness.js";
import { BENCH_POSTGRES_URL, benchSchema, postgresUnavailable } from "./postgres.js";

/** The durable backends, in the order their rows are reported. */
export const WATCH_KINDS = ["sqlite", "jsonl", "postgres"] as const;
export type WatchKind = (typeof WATCH_KINDS)[number];

/** A fresh store of one backend. */
export interface WatchStore {
  readonly kind: WatchKind;
  /** The store URL a spawned server is given (`--store`). */
  readonly url: string;
  /** Opens another backend over the same store in this process (closed by `remove`). */
  open(): Promise<SessionBackend>;
  /** Closes what `open` opened and removes the store. */
  remove(): Promise<void>;
}

/**
 * A fresh, empty store of `kind`, or undefined (the row skipped through `ctx.skip`, with why)
 * when it cannot be had here: no PostgreSQL server answers.
 */
export async function watchStore(
  kind: WatchKind,
  label: string,
  ctx: BenchContext,
  id: string,
  what: string,
): Promise<WatchStore | undefined> {
  const opened: SessionBackend[] = [];
  const closeOpened = async () => {
    for (const backend of opened.splice(0)) await backend.close().catch(() => {});
  };
  if (kind === "postgres") {
    const unavailable = await postgresUnavailable();
    if (unavailable !== undefined) {
      ctx.skip(id, what, unavailable);
      return undefined;
    }
    const schema = await benchSchema(label);
    const url = new URL(BENCH_POSTGRES_URL);
    url.searchParams.set("schema", schema.schema);
    return {
      kind,
      url: url.toString(),
      open: async () => {
        const backend = await schema.open("fsync");
        opened.push(backend);
        return backend;
      },
      remove: async () => {
        await closeOpened();
        await schema.drop();
      },
    };
  }
  const temp = tempDir(label);
  const path = kind === "sqlite" ? join(temp.dir, "store.db") : join(temp.dir, "jsonl");
  // The layout exists before any process opens the store: none of them races to create it.
  if (kind === "sqlite") await (await SqliteBackend.open(path)).close();
  else mkdirSync(path, { recursive: true });
  return {
    kind,
    url: `${kind}:${path}`,
    open: async () => {
      const backend = kind === "sqlite" ? await SqliteBackend.open(path) : new JsonlBackend(path);
      opened.push(backend);
      return backend;
    },
    remove: async () => {
      await closeOpened();
      temp.remove();
    },
  };
}
