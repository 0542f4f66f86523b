// The InvalidEventError of an event that breaks a rule: one form for admission, the invariants and derivation.
import { InvalidEventError, type InvariantRule } from "../errors.js";

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
  return new InvalidEventError(
    "INVALID_EVENT",
    `${what} at seq ${seq} (index ${index}) breaks ${rule}: ${message}`,
    { seq, index, rule, ...(instancePath === undefined ? {} : { instancePath }) },
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
