// `seedline rm ID…`: deletes stored sessions, naming each one removed; a missing id fails unless --force.
import { hasCode } from "../../errors.js";
import { type CommandSpec, EXIT_FAILED, EXIT_OK } from "../command.js";
import { reportError } from "../report.js";
import { resolveSessionArg } from "../session-arg.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

export const rmCommand: CommandSpec = {
  name: "rm",
  summary: "delete stored sessions",
  synopsis: "ID… [--force] [--store URL]",
  description: `
Deletes each session named, printing "removed ID" for each. A fork child of a removed session
keeps its own copy of what it inherited (its header still names the removed parent). A session
another live process is writing is not removed (SESSION_BUSY).

An id with no session is reported on stderr (SESSION_NOT_FOUND) after the others are removed,
and the exit status is 1; with --force missing ids are passed over in silence (exit 0), as
rm -f does.`,
  options: {
    force: { type: "boolean", short: "f", description: "pass over ids with no session (exit 0)" },
    store: STORE_OPTION,
  },
  positionals: { name: "ID…", min: 1 },
  async run({ args, out, env }) {
    const ids = [...new Set(args.positionals)];
    const force = args.values.force === true;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) {
      if (force) return EXIT_OK;
      for (const id of ids) reportError("rm", noStore(id, url), out, env);
      return EXIT_FAILED;
    }
    let failed = 0;
    await withStore(url, async (store) => {
      for (const arg of ids) {
        try {
          const id = await resolveSessionArg(store, arg);
          await store.delete(id);
          out.out(`removed ${id}\n`);
        } catch (error) {
          if (force && hasCode(error, "SESSION_NOT_FOUND")) continue;
          failed++;
          reportError("rm", error, out, env);
        }
      }
    });
    return failed === 0 ? EXIT_OK : EXIT_FAILED;
  },
};
