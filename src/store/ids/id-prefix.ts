// Id prefixes: which stored ids start with one, and the one id a prefix (or an exact id) names.
import { StorageError, show } from "../../errors.js";
import type { IdMatches } from "../backend.js";
import { sessionNotFound } from "../errors/storage-errors.js";

/** The shortest prefix that may name a session other than by its exact id. */
export const MIN_ID_PREFIX = 4;

/** How many candidates an AMBIGUOUS_ID error names. */
export const MAX_ID_CANDIDATES = 10;

/** {@link IdMatches} by a scan of `ids` (for backends that hold every id at hand). */
export function matchIds(ids: Iterable<string>, prefix: string, limit: number): IdMatches {
  const matching = [...ids].filter((id) => id.startsWith(prefix));
  matching.sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
  return { ids: matching.slice(0, limit), count: matching.length };
}

/**
 * The least text above every text that starts with `prefix`, in code point order (the byte order
 * of UTF-8): the prefix without its trailing U+10FFFF, its last code point plus one (past the
 * surrogates). Undefined when there is none (a prefix of U+10FFFF alone, or empty): every text
 * from the prefix on starts with it. For range scans of an index; `prefix` is well-formed.
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.at(-1) === "\u{10FFFF}") points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  const code = (last.codePointAt(0) as number) + 1;
  return points.join("") + String.fromCodePoint(code === 0xd800 ? 0xe000 : code);
}

/**
 * The one id that `matches` (the ids starting with `prefix`, exact id first checked by the
 * caller) leaves for a prefix.
 * @throws StorageError SESSION_NOT_FOUND when none matches or the prefix is shorter than
 *   {@link MIN_ID_PREFIX}; AMBIGUOUS_ID when more than one does.
 */
export function onlyMatch(prefix: string, matches: IdMatches): string {
  const [only] = matches.ids;
  if (matches.count === 1 && only !== undefined && [...prefix].length >= MIN_ID_PREFIX) return only;
  if (matches.count <= 1 || [...prefix].length < MIN_ID_PREFIX) throw sessionNotFound(prefix);
  throw new StorageError(
    "AMBIGUOUS_ID",
    `expected an id or a prefix of exactly one session's id, got ${show(prefix)}, which starts ${matches.count} ids`,
    { prefix, candidates: [...matches.ids], count: matches.count },
  );
}
