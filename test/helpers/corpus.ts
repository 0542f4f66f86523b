// Loads the recorded corpus (another project's logs, read where CI keeps them: ../shared/corpus) for tests: every log, split into header and event lines.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The recorded corpus: logs another project wrote, kept beside the repository (never copied into
 * it). `SEEDLINE_CORPUS` names another folder.
 */
export const CORPUS_DIR =
  process.env.SEEDLINE_CORPUS ?? join(import.meta.dirname, "..", "..", "..", "shared", "corpus");

/** One recorded log file. */
export interface CorpusLog {
  /** Path relative to the corpus folder, e.g. `subagent-fork/session.1.jsonl`. */
  readonly name: string;
  readonly text: string;
  /** Line 1, parsed. */
  readonly header: unknown;
  /** Lines 2…, parsed. */
  readonly events: readonly unknown[];
}

/** Every `*.jsonl` file of the corpus, sorted by path. */
export function corpusLogs(): CorpusLog[] {
  const logs: CorpusLog[] = [];
  for (const scenario of readdirSync(CORPUS_DIR, { withFileTypes: true })) {
    if (!scenario.isDirectory()) continue;
    for (const file of readdirSync(join(CORPUS_DIR, scenario.name))) {
      if (!file.endsWith(".jsonl")) continue;
      const path = join(CORPUS_DIR, scenario.name, file);
      const text = readFileSync(path, "utf8");
      const [head, ...rest] = text.split("\n").filter((line) => line !== "");
      logs.push({
        name: relative(CORPUS_DIR, path),
        text,
        header: JSON.parse(head as string),
        events: rest.map((line) => JSON.parse(line)),
      });
    }
  }
  return logs.sort((a, b) => a.name.localeCompare(b.name));
}
