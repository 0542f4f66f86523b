// Assertions of the backend contract, on node:assert/strict: error codes, bounded waits, stored logs.
import assert from "node:assert/strict";
import { type SeedlineErrorCode, show } from "../errors.js";
import type { SessionEvent, SessionHeader } from "../generated.js";
import type { SessionBackend } from "../store/backend.js";

/** How long the contract waits for something that must happen (a change notification). */
export const WAIT_MS = 10_000;

/**
 * Awaits `operation` and checks that it failed with an error whose `code` is `code`.
 * @returns the error, for checks of its details.
 * @throws AssertionError when it succeeded or failed otherwise.
 */
export async function rejectsWithCode(
  operation: Promise<unknown>,
  code: SeedlineErrorCode,
  what: string,
): Promise<{ readonly code: string; readonly details?: Record<string, unknown> }> {
  let outcome: unknown;
  try {
    outcome = await operation;
  } catch (error) {
    const found = (error as { code?: unknown } | null)?.code;
    assert.equal(
      found,
      code,
      `expected ${what} to fail with code ${code}, got ${found === undefined ? show(String(error)) : found}`,
    );
    return error as { code: string; details?: Record<string, unknown> };
  }
  assert.fail(`expected ${what} to fail with code ${code}, it succeeded with ${show(outcome)}`);
}

/**
 * `promise`, or a rejection naming `what` when it has not settled within {@link WAIT_MS}.
 * @throws Error when the wait runs out.
 */
export async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`expected ${what} within ${WAIT_MS} ms`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks that `load(id)` reads `header` and `events`, with or without a torn tail.
 * @throws AssertionError naming the first difference.
 */
export async function assertStored(
  backend: SessionBackend,
  id: string,
  header: SessionHeader,
  events: readonly SessionEvent[],
  tornTail = false,
): Promise<void> {
  const log = await backend.load(id);
  assert.ok(log !== undefined, `expected load(${show(id)}) to find the session, got undefined`);
  assert.deepStrictEqual(log.header, header, `expected the stored header of ${show(id)}`);
  assert.deepStrictEqual(log.events, events, `expected the stored events of ${show(id)}`);
  assert.equal(log.tornTail, tornTail, `expected tornTail ${tornTail} for ${show(id)}`);
}

/**
 * Checks that `loadFrom(id, fromSeq)` answers `from` and `events`, without a torn tail.
 * @throws AssertionError naming the first difference.
 */
export async function assertSuffix(
  backend: SessionBackend,
  id: string,
  fromSeq: number,
  from: number,
  events: readonly SessionEvent[],
): Promise<void> {
  const suffix = await backend.loadFrom(id, fromSeq);
  const call = `loadFrom(${show(id)}, ${fromSeq})`;
  assert.ok(suffix !== undefined, `expected ${call} to find the session, got undefined`);
  assert.equal(suffix.from, from, `expected ${call} to answer from ${from}`);
  assert.deepStrictEqual(suffix.events, events, `expected the events ${call} answers`);
  assert.equal(suffix.tornTail, false, `expected ${call} to report no torn tail`);
}

/** Where `actual` differs from the pattern `expected`, or undefined when it matches. */
function mismatch(actual: unknown, expected: unknown, path: string): string | undefined {
  if (expected === null || typeof expected !== "object") {
    return Object.is(actual, expected)
      ? undefined
      : `${path}: expected ${show(expected)}, got ${show(actual)}`;
  }
  if (actual === null || typeof actual !== "object") {
    return `${path}: expected an object like ${show(expected)}, got ${show(actual)}`;
  }
  if (Array.isArray(expected) && (!Array.isArray(actual) || actual.length !== expected.length)) {
    return `${path}: expected an array like ${show(expected)}, got ${show(actual)}`;
  }
  for (const [key, value] of Object.entries(expected)) {
    const found = mismatch((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Checks that `actual` has every member of the pattern `expected`, at any depth, with equal
 * values (members the pattern leaves out are not compared; arrays must have its length).
 * @throws AssertionError naming `what` and the first member that differs.
 */
export function assertMatch(actual: unknown, expected: unknown, what: string): void {
  const found = mismatch(actual, expected, "");
  if (found !== undefined) assert.fail(`expected ${what} to match, at ${found}`);
}
