// One session's script (sliced at its own seed boundary, or overridden) and the order of a tree's scripts.
import type { ReplayEntry, SessionScript } from "../generated.js";
import { deriveReplayScript } from "./derive.js";
import type { SessionFile } from "./session-file.js";

/** How one script is made. */
export interface SessionScriptOptions {
  /** Whether this is the session the scripts were asked for. */
  readonly primary: boolean;
  /** Entries that replace the derived script; the log is then not derived at all. */
  readonly override?: readonly ReplayEntry[] | undefined;
}

/**
 * The script of one recorded session: its override, or derived from its own events — those
 * after its header's `seedLength`. A fork child's log begins with its parent's events, chunks
 * included; deriving from the whole log would serve the parent's recorded responses as the
 * child's model calls, so the boundary the fork persisted is the one place the cut is made.
 * @throws ReplayError REPLAY_INCOMPLETE for a step with no faithful replay (never with an override).
 */
export function sessionScript(session: SessionFile, options: SessionScriptOptions): SessionScript {
  const entries =
    options.override ?? deriveReplayScript(session.events.slice(session.seedLength), session.id);
  return Object.freeze({
    sessionId: session.id,
    createdAt: session.createdAt,
    primary: options.primary,
    seedLength: session.seedLength,
    entries: Object.freeze([...entries]),
  });
}

/**
 * The scripts of a tree in serving order: the primary first, then the others by `createdAt`,
 * ties broken by id (compared as UTF-16 code units, so the order does not depend on a locale).
 */
export function orderScripts(
  primary: SessionScript,
  others: readonly SessionScript[],
): SessionScript[] {
  const sorted = [...others].sort(
    (a, b) =>
      a.createdAt - b.createdAt ||
      (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0),
  );
  return [primary, ...sorted];
}
