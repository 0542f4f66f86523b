// `seedline export ID [--format jsonl|md|html]`: writes a stored session to stdout as JSONL (header line, then events), as Markdown, or as one self-contained HTML file.
import { readAssets } from "../../viewer/server/assets.js";
import { exportData, renderExportHtml } from "../../viewer/server/export-html.js";
import { type CommandSpec, EXIT_OK } from "../command.js";
import { resolveSessionArg } from "../session-arg.js";
import { sessionMarkdown } from "../session-markdown.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

export const exportCommand: CommandSpec = {
  name: "export",
  summary: "write a stored session as JSONL (or Markdown, or HTML) to stdout",
  synopsis: "ID [--format jsonl|md|html] [--store URL]",
  description: `
ID is a session id or a unique prefix of one (at least 4 characters). Writes the session to
stdout. As JSONL (the default): its header line, then one line per event. A
log that was imported in canonical form (as JSON.stringify writes it) comes back byte for byte.

With --format md, as Markdown to read: a title, the header's facts (cwd, created, the parent and
seedLength of a fork), then each turn as a section: user and assistant messages as text, reasoning
folded in a <details> block, tool calls with their input and results in code blocks, errors
marked, and in a fork the line where the inherited events end. Text from the log is escaped or
fenced, never read as Markdown or HTML. The log is read page by page.

With --format html, as one self-contained HTML file to share: the session viewer's timeline,
lineage and replay script (see seedline ui), its script and style inlined and the session's data
embedded as JSON in which every <, > and & is escaped, so text from the log stays text. The file
loads nothing from the network (its Content-Security-Policy allows no connection).

A stored log that ends inside a turn is written as stored, its last turn open: export only reads,
and no read repairs a log (its next writer closes the turn).`,
  options: {
    format: {
      type: "string",
      arg: "FORMAT",
      choices: ["jsonl", "md", "html"],
      description: "what to write (default: jsonl)",
    },
    store: STORE_OPTION,
  },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const id = args.positionals[0] as string;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) throw noStore(id, url);
    if (args.values.format === "html") {
      // The app is read first: a checkout never built fails before the store is opened.
      const assets = readAssets();
      const html = await withStore(url, async (store) => {
        const source = await resolveSessionArg(store, id);
        const title = (await store.title(source)) ?? source;
        return renderExportHtml(assets, await exportData(store, source), title);
      });
      out.out(html);
      return EXIT_OK;
    }
    if (args.values.format === "md") {
      await withStore(url, async (store) => {
        const source = await resolveSessionArg(store, id);
        for await (const text of sessionMarkdown(store, source)) out.out(text);
      });
      return EXIT_OK;
    }
    const text = await withStore(url, async (store) =>
      store.exportLog(await resolveSessionArg(store, id)),
    );
    out.out(text);
    return EXIT_OK;
  },
};
