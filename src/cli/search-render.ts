// How `seedline search` shows a result page: each session's id and title, then its excerpts with the matches marked, cut to the terminal.
import type { SessionSearchResult } from "../generated.js";
import { cutToWidth, displayWidth } from "../util/text-width.js";
import type { Palette } from "./output.js";

type Excerpt = SessionSearchResult["results"][number]["excerpts"][number];

/** `text` cut to `width` columns, then its highlighted spans marked (those cut away are not). */
function markedLine(excerpt: Excerpt, width: number, paint: Palette): string {
  const cut = cutToWidth(excerpt.text, width);
  // cutToWidth keeps a prefix and adds `…` when it cut.
  const kept = cut === excerpt.text ? cut.length : cut.length - 1;
  let line = "";
  let at = 0;
  for (const { start, end } of excerpt.highlight) {
    if (start < at || start >= kept) continue;
    const stop = Math.min(end, kept);
    line +=
      excerpt.text.slice(at, start) + paint.bold(paint.yellow(excerpt.text.slice(start, stop)));
    at = stop;
  }
  return line + cut.slice(at);
}

/** The lines of a result page for a terminal `width` columns wide (at least 20). */
export function searchLines(result: SessionSearchResult, width: number, paint: Palette): string[] {
  const columns = Math.max(20, width);
  const lines: string[] = [];
  for (const { sessionId, title, excerpts } of result.results) {
    const head = title === "" ? sessionId : `${sessionId}  ${title}`;
    const cut = cutToWidth(head, columns);
    lines.push(
      cut.startsWith(`${sessionId}  `)
        ? `${paint.bold(sessionId)}${cut.slice(sessionId.length)}`
        : paint.bold(cut),
    );
    for (const excerpt of excerpts) {
      const label = `  #${excerpt.seq}  `;
      const room = Math.max(10, columns - displayWidth(label));
      lines.push(`${paint.dim(label)}${markedLine(excerpt, room, paint)}`);
    }
  }
  return lines;
}
