// Following a stored session from the CLI: its new events as they land, whoever writes them, until a signal or its deletion.
import { isDeepStrictEqual } from "node:util";
import { hasCode } from "../errors.js";
import type { SessionEvent, SessionHeader } from "../generated.js";
import type { SessionStore } from "../store/session-store.js";
import { EXIT_FAILED } from "./command.js";

/** How following a session ended. */
export type FollowEnd = "stopped" | "deleted";

/** Where to follow from, and what to do with what lands. */
export interface FollowOptions {
  /** The seq of the first event to hand on: the `nextSeq` of the read the caller already showed. */
  readonly fromSeq: number;
  /** The header of that read: a session stored anew under the id since is a deleted one. */
  readonly header: SessionHeader;
  /** Ends following (resolving "stopped") when aborted. */
  readonly signal: AbortSignal;
  /** Called with each batch of new events, in seq order, each event once. */
  readonly onEvents: (events: readonly SessionEvent[]) => void;
}

/**
 * Hands on a session's events from `fromSeq` as they land, through `store.watch`: a pure reader,
 * it never takes the writer lock. Resolves "stopped" once `signal` aborts, "deleted" when the
 * session is deleted (or deleted and stored anew: a different log).
 * @throws the store's read errors (StorageError CORRUPT_LOG, FORMAT_UNSUPPORTED).
 */
export async function followSession(
  store: SessionStore,
  id: string,
  options: FollowOptions,
): Promise<FollowEnd> {
  const { signal } = options;
  const watch = store.watch(id, { fromSeq: options.fromSeq, signal });
  try {
    try {
      const { header } = await watch.ready;
      if (!isDeepStrictEqual(header, options.header)) return "deleted";
    } catch (error) {
      // Deleted between the caller's read and the watch's.
      if (hasCode(error, "SESSION_NOT_FOUND")) return "deleted";
      throw error;
    }
    for await (const batch of watch) {
      if (batch.events.length > 0) options.onEvents(batch.events);
      if (batch.deleted === true) return "deleted";
    }
    return "stopped";
  } finally {
    await watch.return();
  }
}

/** A signal for "the user asked to stop", and the end of listening for it. */
export interface Interruption {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Listens for SIGINT and SIGTERM: the first aborts the returned signal (the command then ends
 * cleanly, exit 0), a second exits at once with status 1. Until `dispose`, it also keeps the
 * process alive: waiting for a session to change holds no handle of its own (the backends'
 * timers and file watches do not keep a process alive).
 */
export function interruption(): Interruption {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT_FAILED);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const keepAlive = setInterval(() => {}, 2 ** 30);
  return {
    signal: controller.signal,
    dispose() {
      clearInterval(keepAlive);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
