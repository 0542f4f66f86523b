// `seedline continue`: the session of a folder that was active last — the one to pick up again.
import { resolve } from "node:path";
import { type CommandSpec, EXIT_FAILED, EXIT_OK } from "../command.js";
import { plural } from "../output.js";
import { STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

export const continueCommand: CommandSpec = {
  name: "continue",
  summary: "print the most recently active session of a folder",
  synopsis: "[--cwd DIR] [--store URL] [--json]",
  description: `
Prints the session whose header cwd is DIR (default: the current directory) that was active
last: the one whose last event is the latest (a session without events counts from its
creation). The line gives its id and title, then when it was last active, its event count and its
folder. Exits 1 with a message when the folder has no session.`,
  options: {
    cwd: {
      type: "string",
      arg: "DIR",
      description: "the folder whose sessions count (default: the current directory)",
    },
    store: STORE_OPTION,
    json: {
      type: "boolean",
      description: "print {sessionId, title, updatedAt, cwd, eventCount} (title null when none)",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const cwd = resolve(typeof args.values.cwd === "string" ? args.values.cwd : process.cwd());
    const latest = storeExists(url)
      ? await withStore(url, async (store) => {
          const page = await store.list({ cwd, order: "activity", limit: 1 });
          return page.sessions[0];
        })
      : undefined;
    if (latest === undefined) {
      out.err(`seedline continue: no session in ${cwd} (store ${url})\n`);
      return EXIT_FAILED;
    }
    const { header, title, updatedAt, eventCount } = latest;
    if (args.values.json) {
      const answer = { sessionId: header.id, title: title ?? null, updatedAt, cwd, eventCount };
      out.out(`${JSON.stringify(answer, null, 2)}\n`);
      return EXIT_OK;
    }
    out.out(`${out.paint.bold(header.id)}${title === undefined ? "" : `  ${title}`}\n`);
    const facts = [`last active ${updatedAt ?? "?"}`, plural(eventCount, "event"), cwd];
    out.out(`  ${out.paint.dim(facts.join(" · "))}\n`);
    return EXIT_OK;
  },
};
