// The lines of a Codex rollout as an import reads them: numbered, with where each ends, a torn last line held back.
import { cutToWidth } from "../../util/text-width.js";

/** One line of the source text. */
export interface SourceLine {
  /** 1-based line number in the source file. */
  readonly number: number;
  /** The line without its newline (and without a `\r` before it). */
  readonly text: string;
  /** The offset (UTF-16 units) just past the line and its newline. */
  readonly end: number;
}

/** A line read as JSON: the parsed value, or why it is not JSON. */
export type ParsedLine =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string };

/**
 * The lines of `text` an import takes now, in order: every line ended by `\n`, and a last line
 * without its newline only when it parses as JSON (one that does not is a line the tool is still
 * writing: it is left for the next import). Each line comes with its parse; a line holding only
 * white space is no record and comes without one.
 */
export function* sourceLines(
  text: string,
): Generator<{ line: SourceLine; parsed: ParsedLine | undefined }> {
  let start = 0;
  let number = 0;
  while (start < text.length) {
    number++;
    const newline = text.indexOf("\n", start);
    const terminated = newline >= 0;
    const stop = terminated ? newline : text.length;
    const end = terminated ? newline + 1 : text.length;
    const raw = text.slice(start, stop);
    const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    start = end;
    const parsed = body.trim() === "" ? undefined : parseLine(body);
    if (!terminated && parsed?.ok !== true) return;
    yield { line: { number, text: body, end }, parsed };
  }
}

/** Parses one line as JSON, naming what was found when it is not JSON. */
export function parseLine(text: string): ParsedLine {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return {
      ok: false,
      message: `expected a JSON object, found ${JSON.stringify(cutToWidth(text, 60))}`,
    };
  }
}
