// Paging long output: through $PAGER (default `less -FRX`) when stdout is a terminal, straight to stdout otherwise.
import { spawn } from "node:child_process";
import type { Output } from "./output.js";

/** The pager when $PAGER is unset: quits at once when the text fits a screen, keeps colour. */
export const DEFAULT_PAGER = "less -FRX";

/** Where paged text goes. `write` resolves once the text may be followed by more (backpressure). */
export interface TextSink {
  write(text: string): Promise<void>;
  /** Ends the text and waits for the pager to quit. */
  close(): Promise<void>;
  /** Whether the reader went away (the pager quit early): what is still written is dropped. */
  readonly closed: boolean;
}

/**
 * The sink for a command's long output: a pager when stdout is a terminal, `page` is true and
 * `$PAGER` is not the empty string; stdout otherwise. While the pager runs, SIGINT is left to it
 * (as git does), so that Ctrl-C in `less` does not kill the command under it.
 */
export function openSink(out: Output, env: NodeJS.ProcessEnv, page: boolean): TextSink {
  const command = env.PAGER ?? DEFAULT_PAGER;
  if (!page || !out.outIsTTY || command.trim() === "") return stdoutSink(out);
  return pagerSink(command, env);
}

function stdoutSink(out: Output): TextSink {
  return {
    write: async (text) => out.out(text),
    close: async () => {},
    closed: false,
  };
}

function pagerSink(command: string, env: NodeJS.ProcessEnv): TextSink {
  const child = spawn(command, {
    shell: true,
    stdio: ["pipe", "inherit", "inherit"],
    env: { LESS: "FRX", ...env },
  });
  const ignoreInterrupt = () => {};
  process.on("SIGINT", ignoreInterrupt);
  let closed = false;
  const exited = new Promise<void>((resolve) => {
    child.on("close", () => {
      closed = true;
      process.off("SIGINT", ignoreInterrupt);
      resolve();
    });
    child.on("error", () => {
      closed = true;
    });
  });
  // The pager quitting before the end (q in less) closes the pipe: not a failure of ours.
  child.stdin.on("error", () => {
    closed = true;
  });
  return {
    get closed() {
      return closed;
    },
    write: async (text) => {
      if (closed || text === "") return;
      if (!child.stdin.write(text)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            child.stdin.off("drain", done);
            child.off("close", done);
            resolve();
          };
          child.stdin.on("drain", done);
          child.on("close", done);
        });
      }
    },
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
