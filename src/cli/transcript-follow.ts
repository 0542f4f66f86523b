// `seedline import --from … --follow`: keeps importing transcripts as their tool writes them — new lines appended, new files imported — until a signal.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { TranscriptImported } from "../generated.js";
import type { TranscriptImporter } from "../import/import-transcript.js";
import { collectLogFiles } from "./log-files.js";
import { plural } from "./output.js";
import { reportError } from "./report.js";
import type { TranscriptRun } from "./transcript-import.js";

/** How often (ms) the followed files are looked at for growth. */
const POLL_MS = 200;
/** How often (ms) the followed folders are searched for new transcripts. */
const RESCAN_MS = 1000;

/** What is known of a followed file: how it looked, and the text the last import read of it. */
interface Followed {
  size: number;
  mtimeMs: number;
  /** How many UTF-16 units the last import read (a torn last line is left for later). */
  consumed: number;
  /** The SHA-1 of those units: a file whose start changed was rewritten, not grown. */
  hash: string;
  /** Set once the file was found rewritten or cut: it is no longer followed. */
  stopped: boolean;
}

/**
 * Follows transcripts: the files already imported (`imported`, each with the text and result of
 * its import) and any `*.jsonl` that appears below `roots`. A file that grows is imported again,
 * which appends only its new events (the importer holds the sessions it writes, so a turn left
 * open goes on); one whose start changed, or that got shorter, is reported once and left alone.
 * Each import that stored something prints a line per session. Resolves when `signal` aborts.
 */
export class TranscriptFollower {
  readonly #importer: TranscriptImporter;
  readonly #run: TranscriptRun;
  readonly #roots: readonly string[];
  readonly #files = new Map<string, Followed>();

  constructor(importer: TranscriptImporter, run: TranscriptRun, roots: readonly string[]) {
    this.#importer = importer;
    this.#run = run;
    this.#roots = roots;
  }

  /** Notes a file the first pass imported (its text and what the import read of it). */
  imported(path: string, text: string, result: TranscriptImported): void {
    this.#files.set(path, {
      size: -1,
      mtimeMs: -1,
      consumed: result.consumed,
      hash: digest(text, result.consumed),
      stopped: false,
    });
  }

  async follow(signal: AbortSignal): Promise<void> {
    let scanned = Date.now();
    while (!signal.aborted) {
      try {
        await sleep(POLL_MS, undefined, { signal });
      } catch {
        return;
      }
      if (Date.now() - scanned >= RESCAN_MS) {
        scanned = Date.now();
        await this.#rescan();
      }
      for (const [path, followed] of this.#files) {
        if (signal.aborted) return;
        if (!followed.stopped) await this.#look(path, followed);
      }
    }
  }

  /** Starts following the transcripts that appeared below the roots since the last look. */
  async #rescan(): Promise<void> {
    for (const root of this.#roots) {
      const found = await collectLogFiles([root]).catch(() => [] as string[]);
      for (const path of found) {
        if (!this.#files.has(path)) {
          this.#files.set(path, {
            size: -1,
            mtimeMs: -1,
            consumed: 0,
            hash: digest("", 0),
            stopped: false,
          });
        }
      }
    }
  }

  async #look(path: string, followed: Followed): Promise<void> {
    const { out, env } = this.#run;
    const now = await stat(path).catch(() => undefined);
    if (now === undefined || (now.size === followed.size && now.mtimeMs === followed.mtimeMs))
      return;
    followed.size = now.size;
    followed.mtimeMs = now.mtimeMs;
    try {
      const text = await readFile(path, "utf8");
      if (text.length < followed.consumed || digest(text, followed.consumed) !== followed.hash) {
        followed.stopped = true;
        out.out(
          `${path}: ${out.paint.red("rewritten")}: its first ${plural(followed.consumed, "character")} changed or are gone; no longer followed (import it again to see what differs)\n`,
        );
        return;
      }
      if (text.length === followed.consumed) return;
      const result = await this.#importer.import(text, {
        format: this.#run.from,
        strict: this.#run.strict,
        path,
      });
      followed.consumed = result.consumed;
      followed.hash = digest(text, result.consumed);
      for (const session of result.sessions) {
        if (session.events > 0) {
          out.out(
            `${path}: ${session.outcome} ${plural(session.events, "event")} → ${session.sessionId}\n`,
          );
        } else if (session.reason !== undefined) {
          out.out(
            `${path}: ${out.paint.red(session.outcome)} ${session.sessionId}: ${session.reason}\n`,
          );
        }
      }
    } catch (error) {
      reportError("import", error, out, env, `${path}: `);
    }
  }
}

function digest(text: string, length: number): string {
  return createHash("sha1").update(text.slice(0, length)).digest("hex");
}
