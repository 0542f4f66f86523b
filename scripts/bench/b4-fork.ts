// B4: a durable fork at the middle of a large session, against the copy itself and against forking through JavaScript.
import { closeSync, fsyncSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { SQLITE_QUERIES } from "../../src/generated.js";
import type { SessionBackend, SessionHeader } from "../../src/index.js";
import { formatHeaderLine } from "../../src/log/jsonl-codec.js";
import {
  type BackendKind,
  fillOne,
  jsonlPath,
  openDurable,
  rawSessionRow,
  rawSqlite,
  SEED,
  type Sizes,
  storeOver,
} from "./fixtures.js";
import {
  type BenchContext,
  type Benchmark,
  type BenchRow,
  fmt,
  type Measure,
  rotate,
  row,
  tempDir,
  timed,
} from "./harness.js";
import { middleTurnEnd, syntheticLog } from "./synthetic-log.js";

const COPY_CHUNK = 1 << 20;

/** Copies bytes [from, to) of `source` after `prefix` into a new file, then flushes it. */
function copyPrefix(
  source: string,
  target: string,
  prefix: string,
  from: number,
  to: number,
): void {
  const input = openSync(source, "r");
  const output = openSync(target, "wx");
  try {
    writeSync(output, prefix);
    const buffer = Buffer.allocUnsafe(COPY_CHUNK);
    for (let at = from; at < to; ) {
      const read = readSync(input, buffer, 0, Math.min(COPY_CHUNK, to - at), at);
      writeSync(output, buffer, 0, read);
      at += read;
    }
    fsyncSync(output);
  } finally {
    closeSync(input);
    closeSync(output);
  }
}

/** The header of a fork child of `source` at `boundary`, as a hand-written copy writes it. */
export function forkChildHeader(
  source: SessionHeader,
  boundary: number,
): (id: string) => SessionHeader {
  return (id) => ({
    version: 0,
    id,
    createdAt: source.createdAt + 1,
    cwd: source.cwd as string,
    parentSession: source.id,
    seedLength: boundary + 1,
  });
}

/**
 * The two contenders that go through the store: `fork` (the subject) and `viaJs`, forking through
 * JavaScript (load the source, create the child with the prefix as seed). Each removes its child.
 */
export function storeForks(
  backend: SessionBackend,
  sourceId: string,
  boundary: number,
): { fork: Measure; viaJs: Measure } {
  const fork = async (round: number): Promise<number> => {
    const store = storeOver(backend);
    const child = `fork-${round}`;
    const ms = await timed(() => store.fork(sourceId, { boundary, childSessionId: child }));
    await store.delete(child);
    return ms;
  };
  const viaJs = async (round: number): Promise<number> => {
    const store = storeOver(backend);
    const child = `js-${round}`;
    const ms = await timed(async () => {
      const source = await store.load(sourceId);
      await store.create({
        id: child,
        seed: (await source.readEvents()).slice(0, boundary + 1),
        meta: {
          ...(source.header.cwd === undefined ? {} : { cwd: source.header.cwd }),
          parentSession: sourceId,
          seedLength: boundary + 1,
        },
      });
    });
    await store.delete(child);
    await store.unload(sourceId);
    return ms;
  };
  return { fork, viaJs };
}

/** Runs fork, copy and fork-through-JavaScript in rotation and gives B4's two rows. */
export async function forkRows(
  ctx: BenchContext,
  kind: string,
  measures: { fork: Measure; copy: Measure; viaJs: Measure },
  described: { what: string; floor: string; facts: Record<string, number | string> },
): Promise<BenchRow[]> {
  const [forks = [], copies = [], js = []] = await rotate(
    ctx.rounds,
    [measures.fork, measures.copy, measures.viaJs],
    (r, f) =>
      ctx.progress(
        `B4 ${kind} round ${r + 1}: fork ${fmt(f[0] as number)} ms, copy ${fmt(f[1] as number)} ms, via JS ${fmt(f[2] as number)} ms`,
      ),
  );
  return [
    row({
      id: "B4",
      what: described.what,
      floor: described.floor,
      unit: "ms",
      subject: forks,
      baseline: copies,
      target: { op: "<=", value: 1.2 },
      facts: described.facts,
    }),
    row({
      id: "B4",
      what: `fork speed-up over load + seeded create (${kind})`,
      floor: "fork through JavaScript: load, then create with the prefix as seed",
      unit: "ms",
      ratioOf: "floor/subject",
      subject: forks,
      baseline: js,
      target: { op: ">=", value: 3 },
      facts: described.facts,
    }),
  ];
}

export function b4Fork(sizes: Sizes): Benchmark {
  return {
    id: "B4",
    title: "fork at the middle of a large session, durable",
    async run(ctx) {
      const log = syntheticLog(SEED, sizes.logEvents, "b4");
      const sourceId = log.header.id;
      const boundary = middleTurnEnd(log.events);
      const headerBytes = Buffer.byteLength(formatHeaderLine(log.header));
      let prefixEnd = headerBytes;
      for (const event of log.events.slice(0, boundary + 1)) {
        prefixEnd += Buffer.byteLength(JSON.stringify(event)) + 1;
      }
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const temp = tempDir(`b4-${kind}`);
        try {
          fillOne(kind, temp.dir, log.header, log.events);
          const backend = await openDurable(kind, temp.dir);
          const db = kind === "sqlite" ? rawSqlite(join(temp.dir, "store.db"), "fsync") : undefined;
          ctx.progress(`B4 ${kind}: forking ${log.events.length} events at seq ${boundary}`);
          const childHeader = forkChildHeader(log.header, boundary);
          // The copy alone: the child's row and INSERT … SELECT of the prefix in one durable
          // transaction (SQLite); the child's header line and a byte copy of the prefix, flushed (JSONL).
          const copy = async (round: number): Promise<number> => {
            const child = `copy-${round}`;
            if (db !== undefined) {
              const insertSession = db.prepare(SQLITE_QUERIES.insertSession);
              const copyRows = db.prepare(SQLITE_QUERIES.copyEventPrefix);
              const ms = await timed(() => {
                db.prepare("BEGIN IMMEDIATE").run();
                insertSession.run(rawSessionRow(childHeader(child)));
                copyRows.run({ childId: child, sourceId, boundary });
                db.prepare("COMMIT").run();
              });
              db.prepare(SQLITE_QUERIES.deleteSession).run({ sessionId: child });
              return ms;
            }
            const root = join(temp.dir, "jsonl");
            const target = jsonlPath(root, child);
            const ms = await timed(() =>
              copyPrefix(
                jsonlPath(root, sourceId),
                target,
                formatHeaderLine(childHeader(child)),
                headerBytes,
                prefixEnd,
              ),
            );
            rmSync(target);
            return ms;
          };
          const facts = {
            backend: kind,
            events: log.events.length,
            boundary,
            prefixBytes: prefixEnd - headerBytes,
          };
          rows.push(
            ...(await forkRows(
              ctx,
              kind,
              { ...storeForks(backend, sourceId, boundary), copy },
              {
                what: `fork at seq ${boundary} of ${log.events.length} (${kind}), fsync`,
                floor:
                  kind === "sqlite"
                    ? "INSERT … SELECT of the prefix rows, one durable transaction"
                    : "byte copy of the prefix + fsync",
                facts,
              },
            )),
          );
          db?.close();
          await backend.close();
        } finally {
          temp.remove();
        }
      }
      return rows;
    },
  };
}
