// P1–P3: the proxy in a process of its own (proxy-child.ts), started, asked for its heap, and stopped.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { entryArgs, REPO_ROOT } from "./runtime.js";

/** A running proxy process. */
export interface ProxyProcess {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The proxy's V8 heap in use after a full collection, and the compiled code in it, in bytes. */
  heap(): Promise<{ readonly heapUsed: number; readonly codeSpace: number }>;
  /** Resolves once the calls it answered so far are recorded. */
  settled(): Promise<void>;
  /** Ends its input: it stops taking calls, ends the open turns durably and exits. */
  stop(): Promise<void>;
}

/** Starts proxy-child.ts; resolves once it prints its URL. */
export async function startProxyProcess(
  storeUrl: string,
  mode: "record" | "replay",
  upstream: string,
  sessionId?: string,
): Promise<ProxyProcess> {
  const child = spawn(
    process.execPath,
    [
      ...entryArgs(join(REPO_ROOT, "scripts", "bench", "proxy-child.ts")),
      storeUrl,
      mode,
      upstream,
      ...(sessionId === undefined ? [] : [sessionId]),
    ],
    { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (what: string): Promise<string> => {
    const line = await lines.next();
    if (line.done)
      throw new Error(`expected ${what} from the proxy process, it exited (${await exited})`);
    return line.value;
  };
  const url = await next("its URL");
  return {
    url,
    async heap() {
      child.stdin.write("heap\n");
      return JSON.parse(await next("its heap")) as { heapUsed: number; codeSpace: number };
    },
    async settled() {
      child.stdin.write("settled\n");
      const line = await next("settled");
      if (line !== "settled")
        throw new Error(`expected "settled" from the proxy process, got ${line}`);
    },
    async stop() {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`expected the proxy process to exit 0, got ${code}`);
    },
  };
}
