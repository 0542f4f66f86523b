// `seedline show ID`: a stored session as a readable timeline, the seed boundary marked.
import { type CommandSpec, EXIT_OK } from "../command.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";
import { buildTimeline, renderTimeline } from "../timeline.js";

export const showCommand: CommandSpec = {
  name: "show",
  summary: "show a stored session as a timeline (turns, steps, tool calls, seed boundary)",
  synopsis: "ID [--store URL] [--json]",
  description: `
Shows a session as a timeline, one line per event that matters, numbered by seq: turns and how
they ended, steps with their chunk counts, user and assistant text (excerpts), tool calls with
their names and arguments, tool results, injected context, hooks and todos. In a fork child the
inherited events are dimmed and a line marks where they end:
  ── seed boundary (38 inherited events) ──
A stored log that ends inside a turn is repaired first, as every load does.`,
  options: {
    store: STORE_OPTION,
    json: {
      type: "boolean",
      description: "print {header, eventCount, seedLength, rows: [{kind, seq, …}]}",
    },
  },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const id = args.positionals[0] as string;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) throw noStore(id, url);
    const timeline = await withStore(url, async (store) => {
      const session = await store.load(id);
      return buildTimeline(session.header, session.events);
    });
    if (args.values.json) {
      out.out(`${JSON.stringify(timeline, null, 2)}\n`);
      return EXIT_OK;
    }
    for (const line of renderTimeline(timeline, out.paint)) out.out(`${line}\n`);
    return EXIT_OK;
  },
};
