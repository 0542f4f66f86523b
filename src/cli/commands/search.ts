// `seedline search`: full-text search of a store's sessions, with the matches highlighted.
import { resolve } from "node:path";
import type { SessionSearchResult } from "../../generated.js";
import { type CommandSpec, EXIT_OK, UsageError } from "../command.js";
import { plural } from "../output.js";
import { searchLines } from "../search-render.js";
import { STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

/** The width used when stdout is not a terminal. */
const DEFAULT_COLUMNS = 100;

export const searchCommand: CommandSpec = {
  name: "search",
  summary: "find sessions by the text of their prompts, answers and tool calls",
  synopsis: "QUERY… [--cwd DIR] [--limit N] [--store URL] [--json]",
  description: `
Finds the sessions with an event (a prompt, an answer, a tool call or its result) that holds
every word of QUERY, ignoring case and accents; "a phrase" in double quotes is one word. Sessions
come in the order seedline ls lists them, each with its id, its title (its first prompt) and up to
three excerpts, the matches highlighted. With a SQLite or PostgreSQL store the search uses an
index; a JSONL store is read through (slow for large stores). A store that does not exist finds
nothing (and is not created).`,
  options: {
    store: STORE_OPTION,
    cwd: {
      type: "string",
      arg: "DIR",
      description: "only sessions whose header cwd is DIR (a relative DIR is resolved first)",
    },
    limit: { type: "string", arg: "N", description: "the most sessions to show (1–100; 20)" },
    json: {
      type: "boolean",
      description:
        "print the session/search result: {results: [{sessionId, title, excerpts: [{seq, text, highlight}]}], nextCursor?}",
    },
  },
  positionals: { name: "QUERY…", min: 1 },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const cwd = typeof args.values.cwd === "string" ? resolve(args.values.cwd) : undefined;
    const limit = typeof args.values.limit === "string" ? Number(args.values.limit) : undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      throw new UsageError(
        `expected --limit to be an integer from 1 to 100, got ${JSON.stringify(args.values.limit)}`,
      );
    }
    const query = args.positionals.join(" ");
    let result: SessionSearchResult = { results: [] };
    if (storeExists(url)) {
      result = await withStore(url, (store) =>
        store.search({
          query,
          ...(cwd === undefined ? {} : { cwd }),
          ...(limit === undefined ? {} : { limit }),
        }),
      );
    }
    if (args.values.json) {
      out.out(`${JSON.stringify(result, null, 2)}\n`);
      return EXIT_OK;
    }
    if (result.results.length === 0) {
      out.out(`${out.paint.dim(`no sessions in ${url} match ${JSON.stringify(query)}`)}\n`);
      return EXIT_OK;
    }
    const columns = out.columns ?? (Number(env.COLUMNS) || DEFAULT_COLUMNS);
    for (const line of searchLines(result, columns, out.paint)) out.out(`${line}\n`);
    const more = result.nextCursor === undefined ? "" : " (more: raise --limit)";
    out.out(`${out.paint.dim(`${plural(result.results.length, "session")}${more}`)}\n`);
    return EXIT_OK;
  },
};
