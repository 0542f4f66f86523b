// Cutting text for a terminal or a title: by grapheme (never inside an emoji or a combined
// character) and by display width (a CJK character or an emoji takes two columns).
import stringWidth from "string-width";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Text of printable ASCII characters only (space to tilde). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The columns `text` takes on a terminal (ANSI colour codes take none). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * `text` cut to at most `maxWidth` display columns, ending in `…` when something was cut. Cuts
 * only between graphemes, so an emoji, a flag or a letter with its accents is whole or absent.
 * @throws RangeError when `maxWidth` is not a positive integer.
 */
export function cutToWidth(text: string, maxWidth: number): string {
  if (!Number.isSafeInteger(maxWidth) || maxWidth < 1) {
    throw new RangeError(`expected maxWidth to be a positive integer, got ${maxWidth}`);
  }
  // Printable ASCII up to just past the cut (the common case, and a derived title is cut on every
  // append that holds a prompt): each character is a grapheme of one column, so the cut is a
  // slice. A grapheme could reach across the cut only with a mark or joiner after it, not ASCII.
  if (PRINTABLE_ASCII.test(text.length > maxWidth ? text.slice(0, maxWidth + 1) : text)) {
    return text.length <= maxWidth ? text : `${text.slice(0, maxWidth - 1)}…`;
  }
  if (text.length <= maxWidth && stringWidth(text) <= maxWidth) return text;
  const room = maxWidth - 1; // the ellipsis takes one column
  let used = 0;
  let end = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    const width = stringWidth(segment);
    if (used + width > maxWidth) break;
    used += width;
    end = index + segment.length;
  }
  if (end === text.length) return text;
  // It does not fit: take graphemes up to `room` columns, then the ellipsis.
  used = 0;
  end = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    const width = stringWidth(segment);
    if (used + width > room) break;
    used += width;
    end = index + segment.length;
  }
  return `${text.slice(0, end)}…`;
}

/** `text` on one line: every run of white space (new lines included) becomes one space, trimmed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: splitting at ANSI SGR codes is the point.
const SGR = /(\u001b\[[0-9;]*m)/;

/**
 * Like {@link cutToWidth} for text coloured with ANSI SGR codes: the codes take no columns and
 * are never cut, and a cut line ends with a reset so that no colour runs on past it.
 * @throws RangeError when `maxWidth` is not a positive integer.
 */
export function cutStyledToWidth(text: string, maxWidth: number): string {
  if (!Number.isSafeInteger(maxWidth) || maxWidth < 1) {
    throw new RangeError(`expected maxWidth to be a positive integer, got ${maxWidth}`);
  }
  if (stringWidth(text) <= maxWidth) return text;
  let room = maxWidth - 1; // the ellipsis takes one column
  let kept = "";
  let styled = false;
  for (const part of text.split(SGR)) {
    if (SGR.test(part)) {
      kept += part;
      styled = true;
      continue;
    }
    for (const { segment } of graphemes.segment(part)) {
      const width = stringWidth(segment);
      if (width > room) return `${kept}…${styled ? "\u001b[0m" : ""}`;
      room -= width;
      kept += segment;
    }
  }
  return kept;
}
