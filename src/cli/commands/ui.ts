// `seedline ui`: the session viewer, a local web app over a store, served until SIGINT or SIGTERM.
import { spawn } from "node:child_process";
import { redact } from "../../store/open/redact-url.js";
import { startViewerServer } from "../../viewer/server/server.js";
import { type CommandSpec, EXIT_OK, UsageError } from "../command.js";
import { interruption } from "../follow.js";
import { listenAddress } from "../listen-address.js";
import { openStore, STORE_OPTION, storeExists, storeUrl } from "../store.js";

export const uiCommand: CommandSpec = {
  name: "ui",
  summary: "open the session viewer: a local web app over a store",
  synopsis: "[--store URL] [--port N] [--host H] [--open] [--allow-write]",
  description: `
Serves the session viewer on http://127.0.0.1:PORT and prints its address on stdout, one line:
  seedline ui: http://127.0.0.1:PORT/?token=TOKEN
The sessions list (newest activity first, filtered by cwd, id prefix and text), a session's
lineage, its timeline (turns, steps, assembled assistant text, tool calls beside their results,
the seed boundary), a fork beside its parent, a replay script entry by entry, and live updates
while another process appends. Every asset is served from the package: nothing is fetched from
the network.

TOKEN is 32 random bytes made at start: every API request without it (in an Authorization:
Bearer header, or in the address) is refused with 401; the page keeps it for this viewer's
address only, never in a cookie, which the browser would send to other local servers. A request
whose Host header is not the bound address is refused with 421 (DNS rebinding). The viewer only
reads: any request but GET is refused with 405, unless --allow-write, which allows forking a
session from the viewer and nothing else, and only from its own page (the token in the header,
no other Origin: 403 CROSS_ORIGIN).

--port 0 (the default) picks a free port. --host binds another address (anyone who can reach it
and has the token can read the store). --open starts the system's browser on the address.
It runs until SIGINT (Ctrl-C) or SIGTERM, then closes the store and exits 0.`,
  options: {
    store: STORE_OPTION,
    port: {
      type: "string",
      arg: "N",
      description: "the port to listen on (default: 0, a free one)",
    },
    host: { type: "string", arg: "H", description: "the address to bind (default: 127.0.0.1)" },
    open: { type: "boolean", description: "open the address in the system's browser" },
    "allow-write": {
      type: "boolean",
      description: "allow forking sessions from the viewer (default: read-only)",
    },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out, env }) {
    const address = listenAddress(args.values);
    const url = storeUrl(args.values.store, env);
    if (!storeExists(url)) {
      throw new UsageError(
        `expected a store at ${url}, found none (seedline import or seedline demo makes one)`,
      );
    }
    // Listening starts before the store opens, so that an early Ctrl-C still closes it.
    const stop = interruption();
    try {
      const store = await openStore(url);
      try {
        const server = await startViewerServer({
          store,
          storeLabel: redact(url),
          ...address,
          allowWrite: args.values["allow-write"] === true,
        });
        out.out(`seedline ui: ${server.url}\n`);
        if (args.values.open === true) openBrowser(server.url, (m) => out.err(`${m}\n`));
        if (!stop.signal.aborted) {
          await new Promise<void>((resolve) =>
            stop.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
        }
        await server.close();
      } finally {
        await store.close();
      }
    } finally {
      stop.dispose();
    }
    return EXIT_OK;
  },
};

/** Starts the system's browser on `url`; a failure only warns. */
function openBrowser(url: string, warn: (message: string) => void): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args as string[], { stdio: "ignore", detached: true });
    child.on("error", (error) =>
      warn(`seedline ui: could not open a browser (${error.message}); open the address above`),
    );
    child.unref();
  } catch (error) {
    warn(
      `seedline ui: could not open a browser (${(error as Error).message}); open the address above`,
    );
  }
}
