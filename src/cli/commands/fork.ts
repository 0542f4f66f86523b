// `seedline fork ID`: forks a stored session at an event boundary and prints the child.

import { type CommandSpec, EXIT_OK, UsageError } from "../command.js";
import { plural } from "../output.js";
import { resolveSessionArg } from "../session-arg.js";
import { noStore, STORE_OPTION, storeExists, storeUrl, withStore } from "../store.js";
import { turnEndBoundary } from "../turn-boundary.js";

export const forkCommand: CommandSpec = {
  name: "fork",
  summary: "fork a stored session at a seq into a child session",
  synopsis: "ID [--at SEQ | --at-turn N] [--child-id ID] [--store URL] [--json]",
  description: `
ID is a session id or a unique prefix of one (at least 4 characters). Creates a child session whose log begins with a copy of the source's events 0…SEQ (inclusive),
with the source as its parentSession and seedLength = SEQ + 1. Without --at the whole log is
copied. --at-turn N forks after the end of turn N instead: the boundary is that turn's turn/end
(a turn that does not exist or has not ended is INVALID_BOUNDARY, naming the closed turns). A
boundary inside an open turn is refused (OPEN_TURN, naming the nearest valid boundaries before and
after it), never clipped; a seq with no event is INVALID_BOUNDARY. Prints a line naming the child,
or with --json {sessionId, header}.`,
  options: {
    at: {
      type: "string",
      arg: "SEQ",
      description: "the last inherited event (default: the last event)",
    },
    "at-turn": {
      type: "string",
      arg: "N",
      description: "fork after the end of turn N (its turn/end is the last inherited event)",
    },
    "child-id": { type: "string", arg: "ID", description: "the child's id (default: a new UUID)" },
    store: STORE_OPTION,
    json: { type: "boolean", description: "print {sessionId, header} as session/fork answers" },
  },
  positionals: { name: "ID", min: 1, max: 1 },
  async run({ args, out, env }) {
    const id = args.positionals[0] as string;
    const { at, "at-turn": atTurn } = args.values;
    if (at !== undefined && atTurn !== undefined) {
      throw new UsageError("expected one of --at and --at-turn, got both");
    }
    const boundary = wholeNumber("--at", "a seq", at);
    const turn = wholeNumber("--at-turn", "a turn number", atTurn);
    const childId =
      typeof args.values["child-id"] === "string" ? args.values["child-id"] : undefined;
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) throw noStore(id, url);
    const { source, header } = await withStore(url, async (store) => {
      const source = await resolveSessionArg(store, id);
      const at = turn === undefined ? boundary : await turnEndBoundary(store, source, turn);
      return {
        source,
        header: await store.fork(source, { boundary: at, childSessionId: childId }),
      };
    });
    if (args.values.json) {
      out.out(`${JSON.stringify({ sessionId: header.id, header }, null, 2)}\n`);
      return EXIT_OK;
    }
    const seed = header.seedLength ?? 0;
    const where = seed === 0 ? "" : ` at seq ${seed - 1}`;
    out.out(
      `forked ${source}${where} into ${out.paint.bold(header.id)} (${plural(seed, "inherited event")})\n`,
    );
    return EXIT_OK;
  },
};

/**
 * The non-negative integer an option gives, undefined when it is absent.
 * @throws UsageError for anything else.
 */
function wholeNumber(flag: string, what: string, value: string | boolean | undefined) {
  if (typeof value !== "string") return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(
      `expected ${flag} to be ${what} (a non-negative integer), got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}
