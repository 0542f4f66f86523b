// `seedline import FILE|DIR|-…`: stores recorded logs with their ids and headers (or under a new id), reporting progress on stderr.

import { readFile } from "node:fs/promises";
import { text as readText } from "node:stream/consumers";
import { hasCode, SeedlineError } from "../../errors.js";
import { TranscriptImporter } from "../../import/import-transcript.js";
import {
  type CommandContext,
  type CommandSpec,
  EXIT_FAILED,
  EXIT_OK,
  UsageError,
} from "../command.js";
import { interruption } from "../follow.js";
import { importProgress } from "../import-progress.js";
import { collectLogFiles } from "../log-files.js";
import { type Output, plural } from "../output.js";
import { reportError } from "../report.js";
import { STORE_OPTION, storeUrl, withStore } from "../store.js";
import { TranscriptFollower } from "../transcript-follow.js";
import {
  exitOf,
  importTranscriptFiles,
  type TranscriptRun,
  type TranscriptSource,
  transcriptFiles,
} from "../transcript-import.js";

/** The positional that means "a log on stdin". */
const STDIN = "-";

export const importCommand: CommandSpec = {
  name: "import",
  summary:
    "store logs (files, fixture folders or stdin) with ids and headers preserved, or Claude Code and Codex transcripts",
  synopsis:
    "FILE|DIR|-… [--session-id ID] [--skip-existing] [--from claude-code|codex|auto [--strict] [--follow]] [--store URL]",
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
summary goes to stdout.

With --from, the files are another tool's transcripts: Claude Code's (claude-code, by default
every *.jsonl below ~/.claude/projects, subagents included) or Codex's rollouts (codex, below
~/.codex/sessions); auto tells each file by its content (both folders by default). Each becomes
the sessions it maps to (docs/import.md), named after the tool's session id, so importing again
changes nothing and a transcript that grew gets only its new events appended; one that was
rewritten or cut is reported (diverged) and left as stored. A line no seedline event expresses is
kept whole (verbatim); a line that is not JSON is refused. Each file gets a report line: its
sessions and how many lines were mapped, kept verbatim or refused, then each refused line and
each line of an unknown record type as FILE:LINE. --strict stores nothing of a file with a line
not mapped and lists them all. --follow goes on watching the files and folders (new transcripts
too) and appends what the tools write, until interrupted; seedline ui and session/watch show it
live. Exit status 1 when a file failed.`,
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
    from: {
      type: "string",
      arg: "TOOL",
      choices: ["claude-code", "codex", "auto"],
      description: "the files are this tool's transcripts (auto: tell each by its content)",
    },
    strict: {
      type: "boolean",
      description:
        "with --from: store nothing of a transcript with a line not mapped, and list them",
    },
    follow: {
      type: "boolean",
      description: "with --from: keep importing what the tools write until interrupted",
    },
    store: STORE_OPTION,
  },
  positionals: { name: "FILE|DIR|-…", min: 0, files: true },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const from = args.values.from;
    if (typeof from === "string") {
      return importTranscripts(
        from as TranscriptSource,
        args.positionals,
        args.values,
        out,
        env,
        url,
      );
    }
    for (const option of ["strict", "follow"]) {
      if (args.values[option] === true)
        throw new UsageError(`expected --${option} only with --from`);
    }
    if (args.positionals.length === 0) throw new UsageError("expected FILE|DIR|-…, got nothing");
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

/**
 * Imports transcripts (`--from`): each file reported, a summary at the end; with `--follow`, then
 * keeps importing what grows until a signal.
 * @throws UsageError for options that go with seedline logs only, or stdin with --follow.
 */
async function importTranscripts(
  from: TranscriptSource,
  paths: readonly string[],
  values: CommandContext["args"]["values"],
  out: Output,
  env: NodeJS.ProcessEnv,
  url: string,
): Promise<number> {
  for (const option of ["session-id", "skip-existing"]) {
    if (values[option] !== undefined) {
      throw new UsageError(
        `expected no --${option} with --from (a transcript's sessions are named by the tool)`,
      );
    }
  }
  const follow = values.follow === true;
  if (follow && paths.includes(STDIN))
    throw new UsageError("expected files or folders with --follow, got - (stdin)");
  const { files, roots } = await transcriptFiles(paths, from, env);
  const run: TranscriptRun = { from, strict: values.strict === true, out, env, url };
  return withStore(url, async (store) => {
    const importer = new TranscriptImporter(store, { keepLoaded: follow });
    const follower = follow ? new TranscriptFollower(importer, run, roots) : undefined;
    const tally = await importTranscriptFiles(importer, files, run, (file, text, result) => {
      if (file.path !== undefined) follower?.imported(file.path, text, result);
    });
    out.out(tally.summary(out, url));
    if (follower === undefined) return exitOf(tally);
    out.out(
      `following ${plural(files.length, "transcript")}${paths.length === 0 ? "" : ` in ${paths.join(", ")}`} (interrupt to stop)\n`,
    );
    const stop = interruption();
    try {
      await follower.follow(stop.signal);
    } finally {
      stop.dispose();
    }
    return EXIT_OK;
  });
}

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
