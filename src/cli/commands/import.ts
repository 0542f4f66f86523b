// `seedline import FILE|DIR|-…`: stores recorded logs with their ids and headers (or under a new id), reporting progress on stderr.

import { readFile } from "node:fs/promises";
import { text as readText } from "node:stream/consumers";
import { hasCode, SeedlineError } from "../../errors.js";
import { type CommandSpec, EXIT_FAILED, EXIT_OK, UsageError } from "../command.js";
import { importProgress } from "../import-progress.js";
import { collectLogFiles } from "../log-files.js";
import { plural } from "../output.js";
import { reportError } from "../report.js";
import { STORE_OPTION, storeUrl, withStore } from "../store.js";

/** The positional that means "a log on stdin". */
const STDIN = "-";

export const importCommand: CommandSpec = {
  name: "import",
  summary: "store logs (files, fixture folders or stdin) with ids and headers preserved",
  synopsis: "FILE|DIR|-… [--session-id ID] [--skip-existing] [--store URL]",
  description: `
Stores JSONL session logs in a store, each under the id, lineage and seedLength of its header
(a fixture folder's children keep pointing at their parent). A DIR means every *.jsonl below it,
a fixture's session.jsonl before its session.N.jsonl; - reads one log from stdin. Each log is
checked as it enters and stored all or nothing; a log ending inside a turn is stored as written
(reads show its last turn open) and closed by its first writer (an append, or opening it for
writing). --session-id stores a single log under another id (its header
otherwise kept); --skip-existing passes over a log whose id is already stored, and says so.

On a failure (a broken log, an id already in the store) the file is named on stderr, with the
line when the failure is in one (FILE:LINE: CODE: message), and the import goes on with the next
file; the exit status is 1 if any file failed (a skipped one is no failure). Progress goes to
stderr when there is more than one file: a bar on a terminal, a line per log otherwise. The
summary goes to stdout.`,
  options: {
    "session-id": {
      type: "string",
      arg: "ID",
      description: "store the one log given under this id instead of its header's",
    },
    "skip-existing": {
      type: "boolean",
      description: "pass over a log whose id is already stored (reported, not a failure)",
    },
    store: STORE_OPTION,
  },
  positionals: { name: "FILE|DIR|-…", min: 1, files: true },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const sources = await logSources(args.positionals);
    const sessionId = args.values["session-id"];
    if (typeof sessionId === "string" && sources.length !== 1) {
      throw new UsageError(`expected one log with --session-id, got ${sources.length}`);
    }
    const skipExisting = args.values["skip-existing"] === true;
    let imported = 0;
    let skipped = 0;
    await withStore(url, async (store) => {
      const progress = importProgress(out, sources.length);
      try {
        for (const [i, source] of sources.entries()) {
          let id: string | undefined;
          try {
            const text = await source.read();
            const options = typeof sessionId === "string" ? { sessionId } : {};
            id = (await store.importLog(text, options)).id;
            imported++;
            if (sources.length === 1) out.out(`imported ${source.name} as ${id} into ${url}\n`);
          } catch (error) {
            if (skipExisting && hasCode(error, "SESSION_ALREADY_EXISTS")) {
              skipped++;
              progress.note(
                `skipped ${source.name}: ${out.errPaint.dim(`${takenId(error)} is already stored`)}\n`,
              );
            } else {
              reportError(
                "import",
                error,
                { ...out, err: progress.note },
                env,
                where(source.name, error),
              );
            }
          }
          progress.done(i, source.name, id);
        }
      } finally {
        progress.stop();
      }
    });
    const failed = sources.length - imported - skipped;
    if (sources.length > 1 || failed > 0 || skipped > 0) {
      const parts = [`imported ${imported} of ${plural(sources.length, "log")} into ${url}`];
      if (skipped > 0) parts.push(`${skipped} skipped`);
      if (failed > 0) parts.push(out.paint.red(`${failed} failed`));
      out.out(`${parts.join("; ")}\n`);
    }
    return failed === 0 ? EXIT_OK : EXIT_FAILED;
  },
};

/** A log to import: a file, or stdin. */
interface LogSource {
  /** How messages name it: the path, or "stdin". */
  readonly name: string;
  read(): Promise<string>;
}

/**
 * The logs the positionals name, in order: files, the logs below folders, and stdin for "-".
 * @throws UsageError for "-" given twice; Error when nothing names a log; the file system's error.
 */
async function logSources(paths: readonly string[]): Promise<LogSource[]> {
  const stdin = paths.filter((p) => p === STDIN).length;
  if (stdin > 1) throw new UsageError(`expected - (stdin) at most once, got it ${stdin} times`);
  const sources: LogSource[] = [];
  for (const path of paths) {
    if (path === STDIN) {
      sources.push({ name: "stdin", read: () => readText(process.stdin) });
      continue;
    }
    for (const file of await collectLogFiles([path])) {
      if (sources.some((s) => s.name === file)) continue;
      sources.push({ name: file, read: () => readFile(file, "utf8") });
    }
  }
  if (sources.length === 0) {
    throw new Error(`expected *.jsonl files under ${paths.join(", ")}, found none`);
  }
  return sources;
}

/** "FILE:LINE: " when the error names the line of the log it is about, else "FILE: ". */
function where(name: string, error: unknown): string {
  if (!(error instanceof SeedlineError)) return `${name}: `;
  const details = error.details as { line?: unknown; index?: unknown };
  // A line number counts the header (line 1); an event's index counts from the first event.
  const line =
    typeof details.line === "number"
      ? details.line
      : typeof details.index === "number"
        ? details.index + 2
        : undefined;
  return line === undefined ? `${name}: ` : `${name}:${line}: `;
}

function takenId(error: unknown): string {
  const details = (error as SeedlineError).details as { sessionId?: unknown };
  return typeof details.sessionId === "string" ? JSON.stringify(details.sessionId) : "its id";
}
