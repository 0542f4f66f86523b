// Session titles: the one derived from the first user prompt, and the checks an explicit title passes.
import { cutToWidth, displayWidth, oneLine } from "../util/text-width.js";
import { isWellFormed } from "../util/well-formed.js";

/** How many display columns a derived title takes at most. */
export const DERIVED_TITLE_WIDTH = 80;

/** The longest explicit title, in characters (code points). */
export const MAX_TITLE_LENGTH = 256;

/**
 * The title `events` give a session when the first of them that is a `user/message` is among
 * them: its text blocks joined, on one line, cut to {@link DERIVED_TITLE_WIDTH} columns.
 * U+0000 counts as white space. Undefined when no event is a user message, or its text is blank
 * (or only U+0000 and white space). Takes parsed events as they
 * are (a stored row is checked elsewhere): anything unexpected yields no title.
 */
export function derivedTitle(events: readonly unknown[]): string | undefined {
  for (const event of events) {
    const { type, data } = (event ?? {}) as { type?: unknown; data?: { content?: unknown } };
    if (type !== "user/message") continue;
    return titleFromContent(data?.content);
  }
  return undefined;
}

/** The derived title of one user message's `content` (see {@link derivedTitle}). */
export function titleFromContent(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter(
      (b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string",
    )
    .map((b) => b.text);
  // U+0000 shows as a space: a title is stored as text, which PostgreSQL cannot hold it in, and
  // every backend derives the same title from the same prompt.
  const joined = texts.join(" ").replaceAll("\u0000", " ");
  // A long prompt: its title is the title of its start, once that start is wide enough that
  // every grapheme the cut keeps ends well inside it (a grapheme takes at most two columns, and
  // its bounds depend only on the text before it). Spares a prompt of pages the whole-text passes.
  if (joined.length > TITLE_PREFIX) {
    const start = oneLine(joined.slice(0, TITLE_PREFIX));
    if (displayWidth(start) > 2 * DERIVED_TITLE_WIDTH)
      return cutToWidth(start, DERIVED_TITLE_WIDTH);
  }
  const text = oneLine(joined);
  return text === "" ? undefined : cutToWidth(text, DERIVED_TITLE_WIDTH);
}

/** How much of a long prompt's text {@link titleFromContent} looks at first. */
const TITLE_PREFIX = 1024;

/** Why `title` is not an acceptable explicit title, or undefined when it is. */
export function titleProblem(title: unknown): string | undefined {
  if (typeof title !== "string") return `expected a title string or null, got ${typeof title}`;
  const length = [...title].length;
  if (length === 0 || length > MAX_TITLE_LENGTH) {
    return `expected a title of 1 to ${MAX_TITLE_LENGTH} characters, got ${length}`;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/u.test(title)) {
    return "expected a title without control characters, got one with a control character";
  }
  if (!isWellFormed(title)) {
    return "expected a title of well-formed Unicode (no lone UTF-16 surrogate), got one with a lone surrogate";
  }
  return undefined;
}
