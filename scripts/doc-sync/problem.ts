// What a doc-sync rule reports: where, what differs, and how to fix it.

/** The rules of the doc-sync check, as problems name them. */
export type DocSyncRule =
  | "generated-drift"
  | "type-equiv"
  | "unknown-type"
  | "manifest"
  | "region"
  | "example"
  | "markdown"
  | "tsc";

/** One thing the docs (or the generated code they are checked against) get wrong. */
export interface Problem {
  readonly rule: DocSyncRule;
  /** The file, relative to the folder the check was given (absent for problems of no file). */
  readonly file?: string;
  /** The 1-based line in `file`. */
  readonly line?: number;
  /** What differs, naming the block, type and member or the region. */
  readonly message: string;
  /** How to fix it. */
  readonly fix: string;
}

/** How to fix a type-equiv block. */
export const FIX_TYPE_EQUIV = "edit the block, or run npm run generate if the schema changed";
/** How to fix a generated region. */
export const FIX_REGION =
  "run npm run doc-sync -- --write to rewrite the generated regions (never edit them by hand)";
/** How to fix generated code that the schema no longer gives. */
export const FIX_GENERATE = "run npm run generate";

/** `file:line: message`, as compilers print it. */
export function formatProblem(problem: Problem): string {
  const where =
    problem.file === undefined
      ? ""
      : problem.line === undefined
        ? `${problem.file}: `
        : `${problem.file}:${problem.line}: `;
  return `${where}${problem.message}`;
}

/** The problems one per line, then each distinct fix once. */
export function formatReport(problems: readonly Problem[]): string {
  if (problems.length === 0) return "";
  const lines = problems.map(formatProblem);
  const fixes = [...new Set(problems.map((p) => p.fix))];
  lines.push("", `doc-sync: ${problems.length} problem(s). To fix:`);
  for (const fix of fixes) lines.push(`  - ${fix}`);
  return `${lines.join("\n")}\n`;
}
