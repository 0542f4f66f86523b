// The summary rows of both SQL dialects: titles as the backend reports them, and the title of a stored user message.
import { titleFromContent } from "../../log/session-title.js";
import type { StoredTitles } from "../backend.js";

/** The titles of a `sessionTitles` row (NULL: none). */
export function titlesOf(row: { title: string | null; derivedTitle: string | null }): StoredTitles {
  return {
    ...(row.title === null ? {} : { explicit: row.title }),
    ...(row.derivedTitle === null ? {} : { derived: row.derivedTitle }),
  };
}

/** The derived title of a stored user message's data column (damaged JSON: none). */
export function titleOfData(data: string): string | undefined {
  try {
    return titleFromContent((JSON.parse(data) as { content?: unknown }).content);
  } catch {
    return undefined;
  }
}
