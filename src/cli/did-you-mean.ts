// Did-you-mean for a mistyped command or option: the nearest known name by edit distance, when it is near enough.
import { distance } from "fastest-levenshtein";

/**
 * The candidate nearest to `word`, when it is near enough to be what was meant: at most 2 edits
 * (a swapped pair of letters is 2), or a third of the word's length for long words, and fewer
 * edits than the word has letters (so two letters of noise suggest nothing).
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(word, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const bare = word.replace(/^-+/, "");
  const near = bestDistance <= Math.max(2, Math.floor(bare.length / 3));
  return near && bestDistance < bare.length ? best : undefined;
}

/** `word` quoted for a message: in single quotes when printable, else as a JSON string. */
export function quoted(word: string): string {
  return /^[\x21-\x26\x28-\x7e]+$/.test(word) ? `'${word}'` : JSON.stringify(word);
}

/** `unknown <what> 'word'`, followed by `; did you mean 'x'?` when a candidate is near. */
export function unknownName(what: string, word: string, candidates: readonly string[]): string {
  const guess = nearest(word, candidates);
  return `unknown ${what} ${quoted(word)}${guess === undefined ? "" : `; did you mean ${quoted(guess)}?`}`;
}
