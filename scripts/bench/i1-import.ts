// I1: importing real Claude Code transcripts (and Codex rollouts, when they map) into a durable store, in MB/s, against reading the same files and JSON.parse of each line.
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SQLITE_PRAGMAS } from "../../generated/sqlite-layout.gen.js";
import { mapTranscript, TranscriptImporter } from "../../src/import/import-transcript.js";
import type { MappedSession } from "../../src/import/transcript.js";
import { type BackendKind, openDurable, type Sizes, storeOver } from "./fixtures.js";
import {
  type Benchmark,
  type BenchRow,
  fmt,
  median,
  rotate,
  row,
  tempDir,
  timed,
} from "./harness.js";
import { REPO_ROOT } from "./runtime.js";

/** The real transcripts other projects committed, read where they are (beside the repository). */
const FIXTURES = join(REPO_ROOT, "..", "shared", "fixtures-real");

/** The target: an import at most this many times the floor's time (reading and parsing). */
const TARGET = 1.5;

/** A transcript to import: its path and size. */
interface Source {
  readonly path: string;
  readonly bytes: number;
}

/** Every `*.jsonl` under the Claude Code and Codex fixture folders that maps (a tool whose mapping this build has). */
function sources(): Source[] {
  const found: Source[] = [];
  for (const tool of ["claude-code", "codex"]) {
    const root = join(FIXTURES, tool);
    if (!existsSync(root)) continue;
    for (const name of readdirSync(root, { recursive: true, encoding: "utf8" }).sort()) {
      if (!name.endsWith(".jsonl")) continue;
      const path = join(root, name);
      const text = readFileSync(path, "utf8");
      try {
        mapTranscript(text, { format: "auto", path });
      } catch {
        continue;
      }
      found.push({ path, bytes: Buffer.byteLength(text, "utf8") });
    }
  }
  return found;
}

/** The floor: each file read and each of its lines parsed, as any importer must. */
async function readAndParse(files: readonly Source[]): Promise<number> {
  let lines = 0;
  for (const { path } of files) {
    const text = await readFile(path, "utf8");
    for (const line of text.split("\n")) {
      if (line.startsWith("{")) {
        JSON.parse(line);
        lines++;
      }
    }
  }
  return lines;
}

/**
 * What storing the mapped events costs at the least, for context: each serialized and written
 * durably with nothing checked — JSONL: one file per session, written and fsynced, then its
 * folder; SQLite: one plain table (session, seq, type, text) under the store's pragmas, a
 * transaction per session. No import that stores what it maps can take less than the floor plus this.
 */
function writeFloor(kind: BackendKind, sessions: readonly MappedSession[], dir: string): number {
  if (kind === "jsonl") {
    for (const { header, events } of sessions) {
      let text = "";
      for (const event of events) text += `${JSON.stringify(event)}\n`;
      const fd = openSync(join(dir, `${header.id}.jsonl`), "w");
      writeSync(fd, text);
      fsyncSync(fd);
      closeSync(fd);
    }
    const folder = openSync(dir, "r");
    fsyncSync(folder);
    closeSync(folder);
    return sessions.length;
  }
  const db = new Database(join(dir, "floor.db"));
  try {
    db.pragma(`journal_mode = ${SQLITE_PRAGMAS.journalMode}`);
    db.pragma(`synchronous = ${SQLITE_PRAGMAS.synchronous.fsync}`);
    db.exec(
      "CREATE TABLE events (session TEXT, seq INTEGER, type TEXT, data TEXT, PRIMARY KEY (session, seq)) WITHOUT ROWID",
    );
    const insert = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?)");
    for (const { header, events } of sessions) {
      db.transaction(() => {
        for (const event of events)
          insert.run(header.id, event.seq, event.type, JSON.stringify(event));
      })();
    }
  } finally {
    db.close();
  }
  return sessions.length;
}

function megabytesPerSecond(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

export function i1Import(_sizes: Sizes): Benchmark {
  return {
    id: "I1",
    title: "importing real transcripts, MB/s",
    async run(ctx) {
      const files = sources();
      if (files.length === 0) {
        ctx.skip("I1", "import of real transcripts", `no transcripts under ${FIXTURES}`);
        return [];
      }
      const bytes = files.reduce((n, f) => n + f.bytes, 0);
      const mapped = await Promise.all(
        files.map(async ({ path }) =>
          mapTranscript(await readFile(path, "utf8"), { format: "auto", path }),
        ),
      );
      const sessions = mapped.reduce((n, m) => n + m.sessions.length, 0);
      const events = mapped.reduce(
        (n, m) => n + m.sessions.reduce((k, s) => k + s.events.length, 0),
        0,
      );
      // Reading and mapping alone, stored nowhere: the importer's own share of the time.
      const mapping = async (): Promise<number> => {
        let count = 0;
        const ms = await timed(async () => {
          for (const { path } of files) {
            count += mapTranscript(await readFile(path, "utf8"), { format: "auto", path }).sessions
              .length;
          }
        });
        if (count !== sessions)
          throw new Error(`I1: mapped ${count} sessions, expected ${sessions}`);
        return megabytesPerSecond(bytes, ms);
      };
      const floor = async (): Promise<number> => {
        const ms = await timed(() => readAndParse(files));
        return megabytesPerSecond(bytes, ms);
      };
      const mappedSessions = mapped.flatMap((m) => m.sessions);
      const rows: BenchRow[] = [];
      for (const kind of ["sqlite", "jsonl"] as BackendKind[]) {
        const subject = async (round: number): Promise<number> => {
          const temp = tempDir(`i1-${kind}-${round}`);
          const store = storeOver(await openDurable(kind, temp.dir));
          try {
            const importer = new TranscriptImporter(store);
            let stored = 0;
            const ms = await timed(async () => {
              for (const { path } of files) {
                const text = await readFile(path, "utf8");
                const result = await importer.import(text, { format: "auto", path });
                stored += result.sessions.length;
              }
            });
            if (stored !== sessions) {
              throw new Error(`I1 ${kind}: stored ${stored} sessions, expected ${sessions}`);
            }
            return megabytesPerSecond(bytes, ms);
          } finally {
            await store.close();
            temp.remove();
          }
        };
        const write = async (round: number): Promise<number> => {
          const temp = tempDir(`i1-${kind}-floor-${round}`);
          try {
            return megabytesPerSecond(
              bytes,
              await timed(async () => writeFloor(kind, mappedSessions, temp.dir)),
            );
          } finally {
            temp.remove();
          }
        };
        const [s = [], f = [], m = [], w = []] = await rotate(
          ctx.rounds,
          [subject, floor, mapping, write],
          (r, x) =>
            ctx.progress(
              `I1 ${kind} round ${r + 1}: import ${fmt(x[0] as number)} MB/s, read + parse ${fmt(x[1] as number)} MB/s, read + map ${fmt(x[2] as number)} MB/s, the mapped events written alone ${fmt(x[3] as number)} MB/s`,
            ),
        );
        const mappingRatio = median(f.map((floorMBps, i) => floorMBps / (m[i] as number)));
        // The floor's time plus the bare write's, over the floor's: what any import that stores
        // its events takes at the least, as a multiple of the floor.
        const leastRatio = median(f.map((floorMBps, i) => 1 + floorMBps / (w[i] as number)));
        rows.push(
          row({
            id: "I1",
            what: `import ${files.length} real transcripts, ${fmt(bytes / 1e6)} MB (${kind})`,
            floor: "read each file and JSON.parse each line",
            unit: "MB/s",
            ratioOf: "floor/subject",
            subject: s,
            baseline: f,
            target: { op: "<=", value: TARGET },
            facts: {
              backend: kind,
              files: files.length,
              bytes,
              sessions,
              events,
              mappingMBps: Math.round(median(m) * 10) / 10,
              floorPlusMapping: Math.round(mappingRatio * 100) / 100,
              bareWriteMBps: Math.round(median(w) * 10) / 10,
              floorPlusBareWrite: Math.round(leastRatio * 100) / 100,
            },
          }),
        );
      }
      return rows;
    },
  };
}
