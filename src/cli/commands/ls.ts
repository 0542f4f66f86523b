// `seedline ls`: the sessions of a store as lineage trees, with event counts and creation times.
import { resolve } from "node:path";
import type { StoreListedSession as ListedSession } from "../../store/session-store.js";
import { lineageJson, lineageTrees } from "../../view/lineage-tree.js";
import { type CommandSpec, EXIT_OK } from "../command.js";
import { renderLineage } from "../lineage.js";
import { plural } from "../output.js";
import { STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

export const lsCommand: CommandSpec = {
  name: "ls",
  summary: "list stored sessions as lineage trees",
  synopsis: "[--store URL] [--cwd DIR] [--order activity|created] [--json]",
  description: `
Lists the sessions of a store, children indented under the session they were forked from
(their header's parentSession), with event counts (and how many were inherited), creation times,
working directories and titles (cut to the terminal's width). A title is the one set with
session/set_title, else the session's first prompt on one line. Trees are listed by last
activity, most recent first (--order created: newest first by creation), children in the order
they were made.
A session is stored, and listed, from its creation: one never appended to is listed with 0
events. A store that does not exist lists nothing (and is not created).`,
  options: {
    store: STORE_OPTION,
    cwd: {
      type: "string",
      arg: "DIR",
      files: true,
      description: "only sessions whose header cwd is DIR (a relative DIR is resolved first)",
    },
    order: {
      type: "string",
      arg: "ORDER",
      choices: ["activity", "created"],
      description: "activity (default: most recent activity first) or created (newest first)",
    },
    json: {
      type: "boolean",
      description:
        "print {sessions: [{sessionId, cwd?, title?, createdAt, updatedAt?, eventCount, header, children}]}",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const cwd = typeof args.values.cwd === "string" ? resolve(args.values.cwd) : undefined;
    const sessions: ListedSession[] = [];
    if (storeExists(url)) {
      await withStore(url, async (store) => {
        let cursor: string | undefined;
        do {
          const page = await store.list({
            order: args.values.order === "created" ? "created" : "activity",
            ...(cwd === undefined ? {} : { cwd }),
            ...(cursor === undefined ? {} : { cursor }),
          });
          sessions.push(...page.sessions);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
      });
    }
    const trees = lineageTrees(sessions);
    if (args.values.json) {
      out.out(`${JSON.stringify({ sessions: trees.map((tree) => lineageJson(tree)) }, null, 2)}\n`);
      return EXIT_OK;
    }
    if (sessions.length === 0) {
      out.out(
        `${out.paint.dim(`no sessions in ${url}${cwd === undefined ? "" : ` with cwd ${cwd}`}`)}\n`,
      );
      return EXIT_OK;
    }
    for (const line of renderLineage(trees, out.paint, out.columns)) out.out(`${line}\n`);
    out.out(`${out.paint.dim(`${plural(sessions.length, "session")} in ${url}`)}\n`);
    return EXIT_OK;
  },
};
