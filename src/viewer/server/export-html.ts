// `seedline export --format html`: one session as a single self-contained HTML file, the viewer's app inlined and the session's data embedded as escaped JSON.
import { errorCode } from "../../errors.js";
import { storedSessionScript } from "../../replay/store-scripts.js";
import { listEntryOf } from "../../store/listing/list-entry.js";
import type { SessionStore } from "../../store/session-store.js";
import { type ViewItem, ViewItemBuilder } from "../../view/view-items.js";
import type { ViewerAssets } from "./assets.js";
import { lineageOf, storedListed } from "./session-views.js";

/** The export's Content-Security-Policy: its own inline script and style, nothing from the network. */
export const EXPORT_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/** How many events the export reads at a time. */
const EXPORT_PAGE = 2000;

/**
 * What the export embeds in `#seedline-data`: the session, its header and lineage, every timeline
 * item (the log read page by page through one builder, so no item is partial), and its replay
 * script, or why it has none (`replayError`).
 */
export async function exportData(store: SessionStore, id: string): Promise<unknown> {
  const session = listEntryOf(await storedListed(store, id));
  const builder = new ViewItemBuilder(session.header);
  const items: ViewItem[] = [];
  for await (const page of store.pages(id, { limit: EXPORT_PAGE })) {
    items.push(...builder.add(page.events));
  }
  items.push(...builder.flush(true));
  let replay: unknown;
  let replayError: { code: string; message: string } | undefined;
  try {
    const script = await storedSessionScript(store, id);
    replay = {
      sessionId: script.sessionId,
      seedLength: script.seedLength,
      entries: script.entries,
    };
  } catch (error) {
    const code = errorCode(error);
    if (code !== "REPLAY_INCOMPLETE") throw error;
    replayError = { code, message: (error as Error).message };
  }
  return {
    session,
    header: session.header,
    lineage: await lineageOf(store, id),
    timeline: { items },
    ...(replay === undefined ? {} : { replay }),
    ...(replayError === undefined ? {} : { replayError }),
  };
}

/**
 * JSON that can stand inside a `<script>` element: `<`, `>` and `&` as `\u003c`, `\u003e`,
 * `\u0026`, and U+2028/U+2029 escaped, so no text of the log can close the element or open a
 * comment; `JSON.parse` reads it back unchanged.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** Text for an HTML text node or attribute value. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The export file: the app's style and script inlined, the data embedded. A `</` inside the
 * bundled script or style (never expected: the bundler escapes `</script` in strings) is broken
 * up so it cannot close its element either.
 */
export function renderExportHtml(assets: ViewerAssets, data: unknown, title: string): string {
  const css = assets["app.css"].replace(/<\/(style)/gi, "<\\/$1");
  const js = assets["app.js"].replace(/<\/(script)/gi, "<\\/$1");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${EXPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · seedline</title>
<style>${css}</style>
</head>
<body>
<div id="app"></div>
<script type="application/json" id="seedline-data">${scriptSafeJson(data)}</script>
<script>${js}</script>
</body>
</html>
`;
}
