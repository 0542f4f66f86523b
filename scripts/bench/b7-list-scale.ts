// B7 at scale (JSONL): a page of 100 from the listing index in a store of many sessions, against reading that page's files directly.
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { JsonlBackend, type SessionEvent, type SessionHeader } from "../../src/index.js";
import { formatEventLine, formatHeaderLine } from "../../src/log/jsonl-codec.js";
import { logFileName } from "../../src/store/jsonl/layout.js";
import { encodeCursor } from "../../src/store/listing/list-cursor.js";
import { PAGE } from "./b7-list.js";
import { SEED, type Sizes } from "./fixtures.js";
import { alternate, type Benchmark, type BenchRow, fmt, row, tempDir, timed } from "./harness.js";
import { SYNTHETIC_EPOCH, type SyntheticShape, syntheticTurns } from "./synthetic-log.js";

/** Tiny logs (~10 events): the store's size is in its number of files, not their length. */
const TINY: SyntheticShape = {
  deltaChars: 12,
  resultChars: [10, 40],
  steps: [1, 1],
  chunks: [12, 12],
};

/** The header of session `i`: one second apart, newest last. */
function headerOf(i: number): SessionHeader {
  return {
    version: 0,
    id: `scale-${String(i).padStart(6, "0")}`,
    createdAt: SYNTHETIC_EPOCH + i * 1000,
    cwd: `/work/project-${i % 10}`,
  };
}

/** Writes `count` logs by hand (no flush per file: a fixture, synced by the harness before measuring). */
function fill(dir: string, count: number): void {
  const events = syntheticTurns(SEED, TINY).next().value as SessionEvent[];
  const body = events.map(formatEventLine).join("");
  for (let i = 0; i < count; i++) {
    writeFileSync(join(dir, logFileName(headerOf(i).id)), formatHeaderLine(headerOf(i)) + body);
  }
}

/**
 * The floor of one page: for each of its files, what any listing of it must do — open it, read
 * and parse its first line, read and parse its last line, close it.
 */
function readPage(dir: string, first: number): number {
  const buffer = Buffer.allocUnsafe(4096);
  let read = 0;
  for (let i = first; i > first - PAGE && i >= 0; i--) {
    const fd = openSync(join(dir, logFileName(headerOf(i).id)), "r");
    try {
      const head = readSync(fd, buffer, 0, buffer.length, 0);
      JSON.parse(buffer.toString("utf8", 0, buffer.indexOf(10) < 0 ? head : buffer.indexOf(10)));
      const size = fstatSync(fd).size;
      const from = Math.max(0, size - buffer.length);
      const tail = readSync(fd, buffer, 0, Math.min(buffer.length, size), from);
      const text = buffer.toString("utf8", 0, tail - 1);
      JSON.parse(text.slice(text.lastIndexOf("\n") + 1));
      read++;
    } finally {
      closeSync(fd);
    }
  }
  return read;
}

/** Reads and parses the first line of every log: what the listing did for every page before its index. */
function readEveryHeader(dir: string): number {
  const buffer = Buffer.allocUnsafe(4096);
  let read = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const fd = openSync(join(dir, name), "r");
    try {
      const head = readSync(fd, buffer, 0, buffer.length, 0);
      JSON.parse(buffer.toString("utf8", 0, buffer.indexOf(10) < 0 ? head : buffer.indexOf(10)));
      read++;
    } finally {
      closeSync(fd);
    }
  }
  return read;
}

export function b7ListScale(sizes: Sizes): Benchmark {
  return {
    id: "B7",
    title: "list, a page of 100 from the JSONL listing index at scale",
    async run(ctx) {
      const count = sizes.listScaleSessions;
      const temp = tempDir("b7-scale");
      const rows: BenchRow[] = [];
      try {
        const root = join(temp.dir, "jsonl");
        const dir = join(root, "sessions");
        ctx.progress(`B7 scale: writing ${count} sessions`);
        mkdirSync(dir, { recursive: true });
        fill(dir, count);
        const warm = new JsonlBackend(root);
        // The first list reads every header once and saves the index file.
        await warm.catalog.list({ limit: PAGE });
        await warm.close();
        const backend = new JsonlBackend(root);
        await backend.catalog.list({ limit: PAGE });
        const middle = Math.floor(count / 2);
        const cursor = encodeCursor(
          { at: headerOf(middle + 1).createdAt, id: headerOf(middle + 1).id },
          "created",
        );
        const calls = 20;
        const pageRow = async (what: string, first: number, query: { cursor?: string }) => {
          const subject = async (): Promise<number> => {
            let listed = 0;
            const ms = await timed(async () => {
              for (let i = 0; i < calls; i++) {
                listed = (
                  await backend.catalog.list({
                    limit: PAGE,
                    ...query,
                    ...(query.cursor === undefined ? {} : { order: "created" as const }),
                  })
                ).sessions.length;
              }
            });
            if (listed !== PAGE) throw new Error(`B7 scale: listed ${listed}`);
            return ms / calls;
          };
          const floor = async (): Promise<number> => {
            let read = 0;
            const ms = await timed(() => {
              for (let i = 0; i < calls; i++) read = readPage(dir, first);
            });
            if (read !== PAGE) throw new Error(`B7 scale floor: read ${read}`);
            return ms / calls;
          };
          const figures = await alternate(ctx.rounds, subject, floor, (r, s, f) =>
            ctx.progress(`B7 scale ${what} round ${r + 1}: list ${fmt(s)} ms, floor ${fmt(f)} ms`),
          );
          rows.push(
            row({
              id: "B7",
              what: `list ${what} of ${PAGE}, ${count} sessions (jsonl index)`,
              floor: "open, read and parse the first and last line of the page's files",
              unit: "ms",
              ...figures,
              target: { op: "<=", value: 3 },
              facts: { backend: "jsonl", sessions: count, callsPerMeasurement: calls },
            }),
          );
        };
        await pageRow("first page", count - 1, {});
        await pageRow("a page from the middle", middle, { cursor });
        // Another process (here: a copy by hand) added a log: the folder's names are read again.
        let added = count;
        const changed = async (): Promise<number> => {
          const rounds = 5;
          let ms = 0;
          for (let i = 0; i < rounds; i++) {
            const head = headerOf(added++);
            writeFileSync(join(dir, logFileName(head.id)), formatHeaderLine(head));
            ms += await timed(() => backend.catalog.list({ limit: PAGE }));
          }
          return ms / rounds;
        };
        const changedFloor = async (): Promise<number> =>
          timed(() => {
            readdirSync(dir);
            readPage(dir, count - 1);
          });
        const repair = await alternate(ctx.rounds, changed, changedFloor, (r, s, f) =>
          ctx.progress(
            `B7 scale after a change round ${r + 1}: list ${fmt(s)} ms, floor ${fmt(f)} ms`,
          ),
        );
        rows.push(
          row({
            id: "B7",
            what: `list first page of ${PAGE} after a log was added, ${count} sessions (jsonl index)`,
            floor: "read the folder's names, then the page's files as above",
            unit: "ms",
            ...repair,
            target: { op: "<=", value: 3 },
            facts: { backend: "jsonl", sessions: count },
          }),
        );
        await backend.close();
        // A new process: the index file is read once, then the page.
        const restart = async (): Promise<number> =>
          timed(async () => {
            const fresh = new JsonlBackend(root);
            await fresh.catalog.list({ limit: PAGE });
            await fresh.close();
          });
        const everyHeader = async (): Promise<number> => timed(() => readEveryHeader(dir));
        const restarted = await alternate(ctx.rounds, restart, everyHeader, (r, s, f) =>
          ctx.progress(`B7 scale restart round ${r + 1}: list ${fmt(s)} ms, floor ${fmt(f)} ms`),
        );
        rows.push(
          row({
            id: "B7",
            what: `first page of ${PAGE} in a new process (index file read), ${count} sessions (jsonl)`,
            floor:
              "read + parse the first line of every file (what each page cost before the index)",
            unit: "ms",
            ...restarted,
            target: { op: "<=", value: 1 },
            facts: { backend: "jsonl", sessions: count },
          }),
        );
      } finally {
        temp.remove();
      }
      return rows;
    },
  };
}
