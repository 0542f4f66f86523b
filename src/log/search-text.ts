// Text search over events, written once for every backend: which text an event carries, how it is folded, how a query matches it and what excerpt shows the match.
import {
  SEARCHABLE_BLOCK_MEMBERS,
  SEARCHABLE_EVENT_MEMBERS,
  type SearchExcerpt,
  type TextSpan,
} from "../generated.js";

/** At most this many excerpts (matching events) are shown for one session. */
export const MAX_EXCERPTS = 3;

/** About how many UTF-16 units of text an excerpt shows around its match. */
export const EXCERPT_LENGTH = 160;

/** One matching event, shown as a short text with the matches marked (the wire's SearchExcerpt). */
export type Excerpt = SearchExcerpt;
export type { TextSpan };

function blockTexts(value: unknown, out: string[]): void {
  if (typeof value === "string") {
    out.push(value);
    return;
  }
  if (!Array.isArray(value)) return;
  for (const block of value) {
    if (block === null || typeof block !== "object") continue;
    const members = SEARCHABLE_BLOCK_MEMBERS[String((block as { type?: unknown }).type)] ?? [];
    for (const member of members) blockTexts((block as Record<string, unknown>)[member], out);
  }
}

/** Whether events of `type` carry searchable text at all (their schema marks some member `"searchable"`). */
export function hasSearchableText(type: string): boolean {
  return Object.hasOwn(SEARCHABLE_EVENT_MEMBERS, type);
}

/** Whether any of `events` is of a type that carries searchable text. */
export function anySearchable(events: readonly { readonly type: string }[]): boolean {
  for (const event of events) if (hasSearchableText(event.type)) return true;
  return false;
}

/** The types of event that carry searchable text, as a JSON array (for the SQL backends' filters). */
export const SEARCHABLE_TYPES_JSON = JSON.stringify(Object.keys(SEARCHABLE_EVENT_MEMBERS));

/**
 * The human-readable text of an event that search reads — the members the event schemas mark
 * `"searchable": true`, content blocks through their own searchable members — joined by new
 * lines; "" for an event that carries none.
 */
export function searchableText(event: unknown): string {
  if (event === null || typeof event !== "object") return "";
  const { type, data } = event as { type?: unknown; data?: unknown };
  const members = SEARCHABLE_EVENT_MEMBERS[String(type)];
  if (members === undefined || data === null || typeof data !== "object") return "";
  const out: string[] = [];
  for (const member of members) blockTexts((data as Record<string, unknown>)[member], out);
  return out.join("\n");
}

const MARKS = /\p{M}/gu;
const SPACE = /\s/u;

/**
 * One code point folded: accents dropped, lower case, any white space a plain space, and U+0000
 * a plain space too (PostgreSQL text cannot hold it, and the folded text is stored by every
 * indexed backend: folding it alike everywhere keeps one rule of what matches).
 */
function foldCodePoint(cp: string): string {
  const code = cp.charCodeAt(0);
  if (code < 0x80) {
    // ASCII, most text: no accents to drop, and a lookup instead of normalize() and a regex.
    if (code >= 0x41 && code <= 0x5a) return String.fromCharCode(code + 0x20);
    return code === 0x00 ||
      code === 0x09 ||
      code === 0x0a ||
      code === 0x0b ||
      code === 0x0c ||
      code === 0x0d
      ? " "
      : cp;
  }
  if (SPACE.test(cp)) return " ";
  return cp.normalize("NFD").replace(MARKS, "").toLowerCase();
}

/** Folded text and, for each of its units, the span of the original text it came from. */
interface FoldedText {
  readonly text: string;
  readonly starts: readonly number[];
  readonly ends: number[];
}

function foldWithMap(text: string): FoldedText {
  let folded = "";
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  for (const cp of text) {
    const piece = foldCodePoint(cp);
    const end = i + cp.length;
    if (piece === "" && ends.length > 0) {
      // A mark folded away belongs to the letter before it: a highlight keeps the two together.
      ends[ends.length - 1] = end;
    }
    for (let k = 0; k < piece.length; k++) {
      starts.push(i);
      ends.push(end);
    }
    folded += piece;
    i = end;
  }
  return { text: folded, starts, ends };
}

/**
 * `text` folded for matching: accents removed, lower case, white space and U+0000 as plain
 * spaces. The search indexes store folded text, and queries are folded the same way, so matching
 * is case- and accent-insensitive on every backend, and folded text never holds U+0000.
 */
export function foldForSearch(text: string): string {
  // ASCII-only text (most of it) folds in one pass of built-ins.
  if (ASCII.test(text)) return text.toLowerCase().replace(ASCII_SPACE, " ");
  let folded = "";
  for (const cp of text) folded += foldCodePoint(cp);
  return folded;
}

const ASCII = /^\p{ASCII}*$/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 folds to a space, as white space does.
const ASCII_SPACE = /[\u0000\t\n\v\f\r]/g;

/**
 * The folded terms of a query: words split on white space, and double-quoted phrases kept
 * whole (an unclosed quote runs to the end). Empty terms are dropped.
 */
export function searchTerms(query: string): string[] {
  const terms: string[] = [];
  const pattern = /"([^"]*)"?|(\S+)/gu;
  for (const match of query.matchAll(pattern)) {
    const raw = match[1] ?? match[2] ?? "";
    const term = foldForSearch(raw).trim();
    if (term !== "" && !terms.includes(term)) terms.push(term);
  }
  return terms;
}

/** Whether folded text holds every term. */
export function holdsEveryTerm(folded: string, terms: readonly string[]): boolean {
  return terms.every((term) => folded.includes(term));
}

/** Every occurrence of every term in `text`, as spans of `text`, in order; undefined when a term is missing. */
export function matchSpans(text: string, terms: readonly string[]): TextSpan[] | undefined {
  // ASCII text folds unit for unit: its folded offsets are its own, and no map of a huge text
  // (a tool output of megabytes: two arrays of numbers per unit) is built.
  const folded = ASCII.test(text) ? undefined : foldWithMap(text);
  const haystack = folded?.text ?? foldForSearch(text);
  const spans: TextSpan[] = [];
  for (const term of terms) {
    let at = haystack.indexOf(term);
    if (at < 0) return undefined;
    while (at >= 0) {
      const last = at + term.length - 1;
      spans.push({
        start: folded === undefined ? at : (folded.starts[at] as number),
        end: folded === undefined ? last + 1 : (folded.ends[last] as number),
      });
      at = haystack.indexOf(term, at + term.length);
    }
  }
  return spans.sort((a, b) => a.start - b.start || a.end - b.end);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The grapheme boundaries of `text` near [from, to), looked for in a window around it. */
function boundariesNear(text: string, from: number, to: number): number[] {
  const margin = 32;
  const windowStart = Math.max(0, from - margin);
  const windowEnd = Math.min(text.length, to + margin);
  const out: number[] = [];
  for (const { index } of graphemes.segment(text.slice(windowStart, windowEnd))) {
    out.push(windowStart + index);
  }
  out.push(windowEnd);
  // The window's own edges are boundaries only at the ends of the text.
  return out.filter(
    (b) => (b !== windowStart || b === 0) && (b !== windowEnd || b === text.length),
  );
}

/**
 * The excerpt of an event's text that shows its first match: about {@link EXCERPT_LENGTH} units
 * around it, cut between graphemes, on one line (white space shown as spaces), with `…` where
 * text was cut, and every match inside it highlighted. Undefined when a term is missing.
 */
export function excerptOf(
  seq: number,
  text: string,
  terms: readonly string[],
): Excerpt | undefined {
  const spans = matchSpans(text, terms);
  const first = spans?.[0];
  if (spans === undefined || first === undefined) return undefined;
  let from = Math.max(0, first.start - Math.floor(EXCERPT_LENGTH / 3));
  let to = Math.min(text.length, Math.max(first.end, from + EXCERPT_LENGTH));
  if (to === text.length) from = Math.max(0, Math.min(from, to - EXCERPT_LENGTH));
  const near = boundariesNear(text, from, to);
  from = near.find((b) => b >= from) ?? from;
  from = Math.min(from, first.start);
  to = [...near].reverse().find((b) => b <= to) ?? to;
  to = Math.max(to, first.end);
  const lead = from > 0 ? "…" : "";
  const body = text.slice(from, to).replace(/\s/gu, " ");
  const highlight = spans
    .filter((s) => s.start >= from && s.end <= to)
    .map((s) => ({ start: s.start - from + lead.length, end: s.end - from + lead.length }));
  return { seq, text: `${lead}${body}${to < text.length ? "…" : ""}`, highlight };
}
