// Cuts a JSONL log text into parts that each fit one session/import message, at line ends where it can.

/**
 * `text` cut into parts whose JSON-escaped size (as a JSON string member, quotes left out) is at
 * most `budget` bytes, in order, concatenating back to `text`. Parts end at line ends; a single
 * line over the budget is cut inside, between UTF-16 code points (the server joins the parts'
 * text before reading any line, so a cut inside a line is harmless).
 */
export function logParts(text: string, budget: number): string[] {
  const parts: string[] = [];
  let part = "";
  let used = 0;
  const flush = () => {
    if (part !== "") parts.push(part);
    part = "";
    used = 0;
  };
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline < 0 ? text.length : newline + 1;
    const line = text.slice(start, end);
    start = end;
    const cost = escapedBytes(line);
    if (used + cost <= budget) {
      part += line;
      used += cost;
      continue;
    }
    flush();
    if (cost <= budget) {
      part = line;
      used = cost;
      continue;
    }
    for (const piece of pieces(line, budget)) parts.push(piece);
  }
  flush();
  return parts;
}

/** How many bytes `text` takes inside a JSON string (escapes included, quotes left out). */
function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), "utf8") - 2;
}

/**
 * `line` in pieces of at most `budget` escaped bytes: a UTF-16 code unit escapes to at most 6
 * bytes, so pieces of `budget / 6` code units fit, shortened by one where they would split a
 * surrogate pair.
 */
function pieces(line: string, budget: number): string[] {
  const step = Math.max(2, Math.floor(budget / 6));
  const out: string[] = [];
  let at = 0;
  while (at < line.length) {
    let end = Math.min(line.length, at + step);
    const last = line.charCodeAt(end - 1);
    if (end < line.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(line.slice(at, end));
    at = end;
  }
  return out;
}
