// Small formatting helpers shared by the views.

/** "1 event", "2 events". */
export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** An ISO time or epoch milliseconds as `YYYY-MM-DD HH:MM:SS` (UTC), or "" when absent. */
export function shortTime(time: string | number | undefined): string {
  if (time === undefined) return "";
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return String(time);
  return date.toISOString().replace("T", " ").slice(0, 19);
}

/** A session id shortened for a narrow column (the full id stays in the title attribute). */
export function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 12)}…` : id;
}
