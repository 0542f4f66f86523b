// The InvalidEventError of an event that breaks a rule: one form for admission, the invariants and derivation.
import { InvalidEventError, type InvalidEventProblem, type InvariantRule } from "../errors.js";

/**
 * The most problems an INVALID_EVENT lists (the error table's `maxItems` of `problems`); the
 * rest are counted in `problemCount`.
 */
export const MAX_LISTED_PROBLEMS = 100;

/**
 * The error of the event `type` at `seq` (batch index `index`) that breaks `rule`; `message` says
 * what was expected and what was found, `instancePath` points into the event when given.
 */
export function invalidEvent(
  type: unknown,
  index: number,
  seq: number,
  rule: InvariantRule,
  message: string,
  instancePath?: string,
): InvalidEventError {
  const what = typeof type === "string" ? type : "event";
  const problem = { seq, index, rule, instancePath: instancePath ?? "", message };
  return new InvalidEventError(
    "INVALID_EVENT",
    `${what} at seq ${seq} (index ${index}) breaks ${rule}: ${message}`,
    {
      seq,
      index,
      rule,
      ...(instancePath === undefined ? {} : { instancePath }),
      problems: [problem],
      problemCount: 1,
    },
  );
}

/**
 * The error of a batch whose first problem is `first` and whose later events break the rules
 * `more` names (in batch order): `first`'s fields, every problem listed up to
 * {@link MAX_LISTED_PROBLEMS} and all of them counted. `first` itself when there are no more.
 */
export function withProblems(
  first: InvalidEventError,
  more: readonly InvalidEventProblem[],
): InvalidEventError {
  if (more.length === 0) return first;
  const all = [...first.details.problems, ...more];
  const rest = all.length - 1;
  return new InvalidEventError(
    "INVALID_EVENT",
    `${first.message} (and ${rest} more ${rest === 1 ? "problem" : "problems"})`,
    { ...first.details, problems: all.slice(0, MAX_LISTED_PROBLEMS), problemCount: all.length },
    { cause: first },
  );
}

/** What a surface-eligible event of `type` without `surfaceOp` breaks (rule surface-marker). */
export function missingSurfaceOpMessage(type: string): string {
  return `expected surfaceOp on ${type} (a surface-eligible type), got none`;
}

/** The error of a surface-eligible event of `type` that carries no `surfaceOp` (rule surface-marker). */
export function missingSurfaceOp(type: string, index: number, seq: number): InvalidEventError {
  return invalidEvent(type, index, seq, "surface-marker", missingSurfaceOpMessage(type), "");
}

/** Whether `value` can be a seq: a safe integer, 0 or more. */
export function isSeq(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
