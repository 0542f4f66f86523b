// Forking a session: the child's header and id checked, the source's fork point asked of the store, the child made by the backend at once.
import { SessionForkError, StorageError, show } from "../../errors.js";
import { type SessionHeader, validateAbsolutePath } from "../../generated.js";
import { resolveForkBoundary } from "../../log/fork-rules.js";
import type { SessionBackend } from "../backend.js";
import { invalidParams } from "../errors/storage-errors.js";
import { checkSessionId, checkText, forkChildTaken, makeHeader } from "./checks.js";
import type { ForkOptions } from "./options.js";

/** What a fork needs of its store. */
export interface ForkContext {
  readonly backend: SessionBackend;
  readonly now: () => number;
  readonly newId: () => string;
  /** Ids being created right now (by create or fork), so that two creators cannot both take one. */
  readonly reserved: Set<string>;
  /** The store's live object of a session, if it holds one. */
  liveOf(id: string): object | undefined;
  /** Runs `task` after every earlier task of the same id. */
  serial<T>(id: string, task: () => Promise<T>): Promise<T>;
}

/** Forks `source` (an id, or the store's live object of it); see `SessionStore.fork`. */
export async function forkSession(
  ctx: ForkContext,
  source: { readonly id: string } | string,
  options: ForkOptions,
): Promise<SessionHeader> {
  const { boundary, childSessionId } = options;
  const childId = childSessionId ?? ctx.newId();
  checkSessionId(childId, "/childSessionId");
  // Read once, now: the cwd checked here is the one stored, whatever the caller changes meanwhile.
  const cwd = options.cwd;
  if (cwd !== undefined && !validateAbsolutePath(cwd)) {
    throw invalidParams("/cwd", `expected an absolute cwd, got ${show(cwd)}`);
  }
  checkText(cwd, "/cwd");
  const sourceId = typeof source === "string" ? source : source.id;
  checkSessionId(sourceId, "/sessionId");
  if (ctx.reserved.has(childId)) throw forkChildTaken(childId);
  ctx.reserved.add(childId);
  try {
    return await ctx.serial(sourceId, async () => {
      if (ctx.liveOf(childId) !== undefined || (await ctx.backend.has(childId)))
        throw forkChildTaken(childId);
      const live = ctx.liveOf(sourceId);
      const stored = live === undefined ? await ctx.backend.has(sourceId) : true;
      if (live === undefined && !stored) {
        throw new SessionForkError(
          "SESSION_NOT_FOUND",
          `expected a session ${show(sourceId)} to fork, found none`,
          {
            sessionId: sourceId,
          },
        );
      }
      if (typeof source !== "string" && live !== source) {
        throw new SessionForkError(
          "SESSION_NOT_LIVE",
          `expected the store's current Session for ${show(sourceId)}, got a stale or detached one`,
          { sessionId: sourceId },
        );
      }
      // Asked of the store, the writer's own sessions too: it holds their state, not their events.
      const asked =
        typeof boundary === "number" && Number.isSafeInteger(boundary) && boundary >= 0
          ? boundary
          : undefined;
      const point = await ctx.backend.forkPoint(sourceId, asked);
      if (point === undefined) {
        throw new SessionForkError(
          "SESSION_NOT_FOUND",
          `expected a session ${show(sourceId)} to fork, found none`,
          {
            sessionId: sourceId,
          },
        );
      }
      const at = resolveForkBoundary(point.length, boundary, () => point.marker, point.closedAt);
      const sourceHeader = point.header;
      const header = makeHeader({
        id: childId,
        createdAt: ctx.now(),
        cwd: cwd ?? sourceHeader.cwd,
        parentSession: sourceId,
        seedLength: at + 1,
      });
      // No writer lock of the child: the backend makes it atomically, and a child another
      // process stored meanwhile is refused, as the check above refuses one stored before.
      try {
        await ctx.backend.fork(sourceId, at, header);
      } catch (error) {
        if (error instanceof StorageError && error.code === "SESSION_ALREADY_EXISTS") {
          throw forkChildTaken(childId);
        }
        throw error;
      }
      return header;
    });
  } finally {
    ctx.reserved.delete(childId);
  }
}
