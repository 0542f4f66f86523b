// `seedline import --from claude-code|codex|auto`: transcripts of other tools found in files and folders (the tool's own folder by default), reported file by file and summed up.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { text as readText } from "node:stream/consumers";
import type { TranscriptImported } from "../generated.js";
import type { TranscriptImporter } from "../import/import-transcript.js";
import type { TranscriptFormat } from "../import/transcript.js";
import { EXIT_FAILED, EXIT_OK, UsageError } from "./command.js";
import { type ImportProgress, importProgress } from "./import-progress.js";
import { collectLogFiles } from "./log-files.js";
import { type Output, plural } from "./output.js";
import { reportError } from "./report.js";

/** Where a tool keeps its transcripts, under the home folder. */
export const TRANSCRIPT_FOLDERS: Readonly<Record<TranscriptFormat, string>> = {
  "claude-code": join(".claude", "projects"),
  codex: join(".codex", "sessions"),
};

/** What `--from` takes. */
export type TranscriptSource = TranscriptFormat | "auto";

/** How a transcript import runs. */
export interface TranscriptRun {
  readonly from: TranscriptSource;
  readonly strict: boolean;
  readonly out: Output;
  readonly env: NodeJS.ProcessEnv;
  /** Stored under this name in messages. */
  readonly url: string;
}

/** A transcript to import: a file, or stdin. */
export interface TranscriptFile {
  /** The path, or "stdin". */
  readonly name: string;
  readonly path: string | undefined;
  read(): Promise<string>;
}

/**
 * The transcripts the positionals name, in order: files, every `*.jsonl` below a folder, stdin
 * for "-"; with none, the tool's own folder under `$HOME` (both tools' for `auto`, those that
 * exist). `roots` are the paths looked in (the positionals, or those folders).
 * @throws UsageError when no path is given and no tool folder exists; the file system's errors.
 */
export async function transcriptFiles(
  paths: readonly string[],
  from: TranscriptSource,
  env: NodeJS.ProcessEnv,
): Promise<{ files: TranscriptFile[]; roots: string[] }> {
  const roots = paths.length > 0 ? [...paths] : await defaultFolders(from, env);
  const files: TranscriptFile[] = [];
  for (const path of roots) {
    if (path === "-") {
      if (files.some((f) => f.path === undefined)) {
        throw new UsageError("expected - (stdin) at most once, got it twice");
      }
      files.push({ name: "stdin", path: undefined, read: () => readText(process.stdin) });
      continue;
    }
    for (const file of await collectLogFiles([path])) {
      if (files.some((f) => f.path === file)) continue;
      files.push({ name: file, path: file, read: () => readFile(file, "utf8") });
    }
  }
  return { files, roots };
}

async function defaultFolders(from: TranscriptSource, env: NodeJS.ProcessEnv): Promise<string[]> {
  const home = env.HOME ?? env.USERPROFILE;
  const formats: TranscriptFormat[] = from === "auto" ? ["claude-code", "codex"] : [from];
  if (home === undefined || home === "") {
    throw new UsageError(
      `expected FILE|DIR, or $HOME to find ${formats.map((f) => `~/${TRANSCRIPT_FOLDERS[f]}`).join(" and ")}, got neither`,
    );
  }
  const folders = formats.map((f) => join(home, TRANSCRIPT_FOLDERS[f]));
  const found: string[] = [];
  for (const folder of folders) {
    if ((await stat(folder).catch(() => undefined))?.isDirectory()) found.push(folder);
  }
  if (found.length === 0) {
    throw new UsageError(
      `expected a transcript folder at ${folders.join(" or ")}, found none; name FILE|DIR`,
    );
  }
  return found;
}

/** What the files of an import came to, summed. */
export class ImportTally {
  files = 0;
  failed = 0;
  readonly outcomes = new Map<string, number>();
  mapped = 0;
  verbatim = 0;
  refused = 0;

  add(result: TranscriptImported): void {
    this.files++;
    for (const session of result.sessions) {
      this.outcomes.set(session.outcome, (this.outcomes.get(session.outcome) ?? 0) + 1);
    }
    this.mapped += result.counts.mapped;
    this.verbatim += result.counts.verbatim;
    this.refused += result.counts.refused;
    if (result.sessions.some((s) => s.outcome === "diverged" || s.outcome === "refused"))
      this.failed++;
  }

  /** "16 transcripts: 24 sessions (20 created, 4 unchanged); 1,100 lines mapped, …". */
  summary(out: Output, url: string): string {
    const sessions = [...this.outcomes.values()].reduce((a, b) => a + b, 0);
    const kinds = [...this.outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(", ");
    const parts = [
      `imported ${plural(this.files, "transcript")} into ${url}: ${plural(sessions, "session")}${kinds === "" ? "" : ` (${kinds})`}`,
      `${count(this.mapped)} lines mapped, ${count(this.verbatim)} kept verbatim, ${count(this.refused)} refused`,
    ];
    if (this.failed > 0) parts.push(out.paint.red(`${this.failed} failed`));
    return `${parts.join("; ")}\n`;
  }
}

/**
 * Imports each file with `importer`, one report line per file (and a line per refused line and
 * per unknown record type, with --strict per line not mapped), never stopping at a file that
 * fails; a progress bar on a terminal for more than one file. Returns the tally.
 */
export async function importTranscriptFiles(
  importer: TranscriptImporter,
  files: readonly TranscriptFile[],
  run: TranscriptRun,
  onImported?: (file: TranscriptFile, text: string, result: TranscriptImported) => void,
): Promise<ImportTally> {
  const { out, env } = run;
  const tally = new ImportTally();
  // A bar on a terminal (each file's report says the rest); with the bar on the terminal stdout
  // shares, report lines go above it.
  const bar = files.length > 1 && out.errTerminal !== undefined;
  const progress = bar ? importProgress(out, files.length, "transcripts") : QUIET;
  const report = bar && out.outIsTTY ? progress.note : (text: string) => out.out(text);
  try {
    for (const [i, file] of files.entries()) {
      let main: string | undefined;
      try {
        const text = await file.read();
        const result = await importer.import(text, {
          format: run.from,
          strict: run.strict,
          ...(file.path === undefined ? {} : { path: file.path }),
        });
        tally.add(result);
        onImported?.(file, text, result);
        main = result.sessions[0]?.sessionId;
        report(fileReport(file.name, result, run));
      } catch (error) {
        tally.files++;
        tally.failed++;
        const err = bar ? progress.note : (text: string) => out.err(text);
        reportError("import", error, { ...out, err }, env, `${file.name}: `);
      }
      progress.done(i, file.name, main);
    }
  } finally {
    progress.stop();
  }
  return tally;
}

/** No progress shown: each file's report line says it. */
const QUIET: ImportProgress = { done: () => {}, note: () => {}, stop: () => {} };

/** One file's lines: what became of its sessions and lines, then the lines worth naming. */
export function fileReport(name: string, result: TranscriptImported, run: TranscriptRun): string {
  const { paint } = run.out;
  const outcomes = new Map<string, number>();
  for (const s of result.sessions) outcomes.set(s.outcome, (outcomes.get(s.outcome) ?? 0) + 1);
  const sessions =
    result.sessions.length === 0
      ? "no session"
      : [...outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(", ");
  const appended = result.sessions.reduce((n, s) => n + s.events, 0);
  const { mapped, verbatim, refused } = result.counts;
  const lines = [
    `${paint.bold(name)}: ${result.format}, ${sessions}${appended > 0 ? ` (${plural(appended, "event")} stored)` : ""}; ${count(mapped)} mapped, ${count(verbatim)} verbatim, ${count(refused)} refused\n`,
  ];
  for (const session of result.sessions) {
    if (session.reason !== undefined && session.outcome !== "refused") {
      lines.push(
        `${name}: ${paint.red(session.outcome)} ${session.sessionId}: ${session.reason}\n`,
      );
    }
  }
  const refusedAll = result.sessions.some((s) => s.outcome === "refused");
  for (const problem of result.problems) {
    if (refusedAll || problem.outcome === "refused" || problem.unknown === true) {
      const what = problem.outcome === "refused" ? paint.red("refused") : "kept verbatim";
      lines.push(`${name}:${problem.line}: ${what}: ${problem.message}\n`);
    }
  }
  if (refusedAll) {
    lines.push(
      `${name}: ${paint.red("refused")} (--strict): ${plural(result.problems.length, "line")} not mapped, nothing stored\n`,
    );
  }
  return lines.join("");
}

function count(n: number): string {
  return n.toLocaleString("en");
}

/** The exit status of an import: 1 when a file failed (unreadable, diverged, refused). */
export function exitOf(tally: ImportTally): number {
  return tally.failed > 0 ? EXIT_FAILED : EXIT_OK;
}
