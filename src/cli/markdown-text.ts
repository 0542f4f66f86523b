// Putting untrusted text into Markdown: prose escaped so nothing in it is markup, code in fences and spans it cannot close.

/**
 * Characters that are markup anywhere in a line: emphasis, code spans, links and images (escaping
 * the brackets disarms `![…](…)` too), raw HTML and autolinks, entities, table cells, strikethrough.
 */
const INLINE = /[\\`*_[\]<>|~&]/g;

/**
 * Markup at the start of a line: headings, list items and thematic breaks, setext underlines,
 * ordered list numbers (`1.` or `1)`).
 */
const LINE_START = /^(\s*)(?:([#+\-=])|(\d+)([.)]))/;

/**
 * `text` as Markdown prose that renders as the text itself: every markup character escaped, each
 * line break a hard break (a trailing backslash), blank lines kept as paragraph breaks.
 */
export function prose(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const escaped = lines.map((line) =>
    line
      .replace(INLINE, "\\$&")
      .replace(LINE_START, (_, space: string, mark?: string, digits?: string, dot?: string) =>
        mark === undefined ? `${space}${digits}\\${dot}` : `${space}\\${mark}`,
      ),
  );
  const out: string[] = [];
  for (let i = 0; i < escaped.length; i++) {
    const line = escaped[i] as string;
    const next = escaped[i + 1];
    // A hard break only between two lines of one paragraph.
    out.push(line !== "" && next !== undefined && next.trim() !== "" ? `${line}\\` : line);
  }
  return out.join("\n").trim();
}

/** The longest run of `char` in `text`. */
function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/**
 * `text` in a fenced code block whose fence is longer than any run of backticks inside it, so no
 * line of the text can close it. `info` names the language (letters only).
 */
export function fenced(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  const body = text.endsWith("\n") ? text : `${text}\n`;
  return `${fence}${info.replace(/[^a-z]/gi, "")}\n${body}${fence}`;
}

/** `text` as an inline code span, its delimiters longer than any run of backticks inside it. */
export function inlineCode(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ") || " ";
  const ticks = "`".repeat(longestRun(flat, "`") + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat.startsWith(" ") ? " " : "";
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}
