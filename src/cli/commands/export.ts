// `seedline export ID`: writes a stored session as JSONL text (header line, then events) to stdout.
import { type CommandSpec, EXIT_OK } from "../command.js";
import { resolveSessionArg } from "../session-arg.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";

export const exportCommand: CommandSpec = {
  name: "export",
  summary: "write a stored session as JSONL to stdout",
  synopsis: "ID [--store URL]",
  description: `
ID is a session id or a unique prefix of one (at least 4 characters). Writes the session as JSONL to stdout: its header line, then one line per event. A log that was
imported in canonical form (as JSON.stringify writes it) comes back byte for byte. A stored log
that ends inside a turn is repaired first (its closers are stored), as every load does.`,
  options: { store: STORE_OPTION },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const id = args.positionals[0] as string;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) throw noStore(id, url);
    const text = await withStore(url, async (store) =>
      store.exportLog(await resolveSessionArg(store, id)),
    );
    out.out(text);
    return EXIT_OK;
  },
};
