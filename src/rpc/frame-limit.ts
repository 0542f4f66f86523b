// The 32 MiB frame limit's budgets and measures: what a message, an event or a log part takes on the wire.
import { SeedlineError } from "../errors.js";
import { MAX_MESSAGE_BYTES } from "./ndjson-framing.js";

export { MAX_MESSAGE_BYTES };

/**
 * The byte budget of a page or part cut to fit (session/read's events, session/export's log text, a
 * session/events batch, a client's import part): half the frame limit, so that the header and
 * the JSON escaping of a part's text still fit in one message.
 */
export const PAGE_BYTES = 16 * 1024 * 1024;

/** How many UTF-8 bytes `value` takes as JSON (as JSON.stringify writes it). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
}

/** The smaller answers of results marked by {@link cuttable}. */
const smallerAnswers = new WeakMap<object, () => object>();

/**
 * Marks `result` as an answer the writer may cut: when its response would be over the frame
 * limit, the response carries `smaller()` instead (a first page, a first part). Answers that fit
 * are written whole and measured once, on their way out.
 * @returns `result` itself.
 */
export function cuttable<T extends object>(result: T, smaller: () => T): T {
  smallerAnswers.set(result, smaller);
  return result;
}

/** The smaller answer {@link cuttable} registered for `result`, if any. */
export function smallerAnswerOf(result: unknown): (() => object) | undefined {
  return typeof result === "object" && result !== null ? smallerAnswers.get(result) : undefined;
}

/**
 * How many of `items` (from the first) fit in `budget` bytes, each taking `size(item)`; at least
 * one when there is any, so a page always moves on.
 */
export function countWithin<T>(
  items: readonly T[],
  budget: number,
  size: (item: T) => number,
): number {
  let used = 0;
  let count = 0;
  for (const item of items) {
    used += size(item);
    if (count > 0 && used > budget) break;
    count++;
  }
  return count;
}

/**
 * Checks that `items`, answered as a JSON array, fit in one message of `limit` bytes, measuring
 * one item at a time and stopping as soon as they are past it: an answer that cannot be sent is
 * refused before its text is built.
 * @throws SeedlineError RESPONSE_TOO_LARGE naming `what`, with the size measured so far.
 */
export function checkFits(
  items: readonly unknown[],
  what: string,
  limit = MAX_MESSAGE_BYTES,
): void {
  let size = 0;
  for (const item of items) {
    size += jsonBytes(item) + 1;
    if (size > limit) throw responseTooLarge(size, what, limit);
  }
}

/**
 * The RESPONSE_TOO_LARGE error for an answer of at least `size` bytes past `limit`, `what` naming it.
 * @returns a SeedlineError RESPONSE_TOO_LARGE with `{limit, size}`.
 */
export function responseTooLarge(
  size: number,
  what: string,
  limit = MAX_MESSAGE_BYTES,
): SeedlineError<"RESPONSE_TOO_LARGE"> {
  return new SeedlineError(
    "RESPONSE_TOO_LARGE",
    `expected an answer of at most ${limit} bytes (the frame limit), got ${what} of ${size} bytes`,
    { limit, size },
  );
}
