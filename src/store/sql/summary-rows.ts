// The summary rows of both SQL dialects: titles as the backend reports them, and the title of a stored user message.
import type { SerializedEvent } from "../../log/serialized-event.js";
import { titleFromContent } from "../../log/session-title.js";
import type { StoredTitles } from "../backend.js";

/**
 * The derived-title column of a session whose first `user/message` gives no title: stored, unlike
 * NULL (no user message yet), so that a later prompt's title is not taken (an append keeps the
 * column once it is set). Read as no title.
 */
export const NO_DERIVED_TITLE = "";

/** The derived title a summary's column holds: none for NULL and {@link NO_DERIVED_TITLE}. */
export function derivedOf(column: string | null): string | undefined {
  return column === null || column === NO_DERIVED_TITLE ? undefined : column;
}

/** The titles of a `sessionTitles` row (NULL: none). */
export function titlesOf(row: { title: string | null; derivedTitle: string | null }): StoredTitles {
  const derived = derivedOf(row.derivedTitle);
  return {
    ...(row.title === null ? {} : { explicit: row.title }),
    ...(derived === undefined ? {} : { derived }),
  };
}

/**
 * The derived-title column a session's first user message gives, from its data column (damaged
 * JSON: no title): {@link NO_DERIVED_TITLE} when it gives none.
 */
export function titleOfData(data: string): string {
  try {
    return (
      titleFromContent((JSON.parse(data) as { content?: unknown }).content) ?? NO_DERIVED_TITLE
    );
  } catch {
    return NO_DERIVED_TITLE;
  }
}

/**
 * What a batch of events written to a session sets its derived-title column to, where none is set
 * yet: NULL when the batch holds no `user/message`; else what its first one gives
 * ({@link NO_DERIVED_TITLE} when that is no title).
 */
export function batchTitle(events: readonly SerializedEvent[]): string | null {
  for (const event of events) {
    if (event.type !== "user/message") continue;
    return (
      titleFromContent((event.readData() as { content?: unknown }).content) ?? NO_DERIVED_TITLE
    );
  }
  return null;
}
