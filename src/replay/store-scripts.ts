// Replay scripts of stored sessions: one session, or a session and all its descendants.
import { ReplayError, show } from "../errors.js";
import type {
  ReplayEntry,
  ReplayOverrides,
  SessionEvent,
  SessionHeader,
  SessionScript,
} from "../generated.js";
import { MAX_READ_LIMIT } from "../store/reads/event-pages.js";
import type { SessionStore } from "../store/session-store.js";
import { orderScripts, type SessionScriptOptions, sessionScript } from "./session-script.js";

/** How the scripts of a stored tree are made. */
export interface StoredScriptsOptions {
  /** Scripts given instead of derived, keyed by the recorded session id they replace. */
  readonly overrides?: ReplayOverrides;
}

/**
 * The script of one stored session (`primary: true`), derived from its events after its
 * `seedLength`, or `override` when given. Loading a cold log that ends inside a turn repairs it
 * first, so such a turn reads as `interrupted`: REPLAY_INCOMPLETE unless overridden.
 * @throws StorageError SESSION_NOT_FOUND and the store's load errors; ReplayError REPLAY_INCOMPLETE.
 */
export async function storedSessionScript(
  store: SessionStore,
  sessionId: string,
  override?: readonly ReplayEntry[],
): Promise<SessionScript> {
  const { header, events } = await storedLog(store, sessionId);
  return scriptOf(header, events, { primary: true, override });
}

/**
 * The scripts of a stored session and all its descendants (children found through
 * `parentSession`, recursively): the session first, then the descendants by `createdAt`, ties
 * by id. A session with an override is not derived (its log may be one with no faithful replay).
 * @throws ReplayError INVALID_PARAMS when an override names no session of the tree,
 *   REPLAY_INCOMPLETE for a step with no faithful replay; StorageError SESSION_NOT_FOUND for
 *   the primary, and the store's load errors.
 */
export async function storedSessionScripts(
  store: SessionStore,
  sessionId: string,
  options: StoredScriptsOptions = {},
): Promise<SessionScript[]> {
  const overrides = options.overrides ?? {};
  const root = await storedLog(store, sessionId);
  const descendants = await descendantHeaders(store, sessionId);
  const treeIds = new Set([sessionId, ...descendants.map((h) => h.id)]);
  for (const key of Object.keys(overrides)) {
    if (!treeIds.has(key)) {
      const message = `expected overrides keyed by sessions of the tree of ${show(sessionId)}, got ${show(key)}`;
      throw new ReplayError("INVALID_PARAMS", message, {
        errors: [{ instancePath: `/overrides/${escapePointer(key)}`, message }],
      });
    }
  }
  const overrideOf = (id: string) => (Object.hasOwn(overrides, id) ? overrides[id] : undefined);
  const primary = scriptOf(root.header, root.events, {
    primary: true,
    override: overrideOf(sessionId),
  });
  const others: SessionScript[] = [];
  for (const header of descendants) {
    const override = overrideOf(header.id);
    // An overridden session is not derived, so its log is not even loaded.
    const events = override === undefined ? await store.readEvents(header.id) : [];
    others.push(scriptOf(header, events, { primary: false, override }));
  }
  return orderScripts(primary, others);
}

/** A stored session's header and every event, read page by page (and checked as a whole). */
async function storedLog(
  store: SessionStore,
  id: string,
): Promise<{ header: SessionHeader; events: SessionEvent[] }> {
  const events: SessionEvent[] = [];
  let header: SessionHeader | undefined;
  for await (const page of store.pages(id, { limit: MAX_READ_LIMIT })) {
    header = page.header;
    for (const event of page.events) events.push(event);
  }
  return { header: header as SessionHeader, events };
}

function scriptOf(
  header: SessionHeader,
  events: readonly SessionEvent[],
  options: SessionScriptOptions,
): SessionScript {
  return sessionScript(
    { id: header.id, createdAt: header.createdAt, seedLength: header.seedLength ?? 0, events },
    options,
  );
}

/**
 * The headers of every stored descendant of `rootId`, breadth first. Each id is visited once, so
 * stored headers whose `parentSession` links form a cycle (possible through import) end the walk.
 */
async function descendantHeaders(store: SessionStore, rootId: string): Promise<SessionHeader[]> {
  const seen = new Set([rootId]);
  const found: SessionHeader[] = [];
  const queue = [rootId];
  for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
    let cursor: string | undefined;
    do {
      const page = await store.list({
        parentSession: parent,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const { header } of page.sessions) {
        if (seen.has(header.id)) continue;
        seen.add(header.id);
        found.push(header);
        queue.push(header.id);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }
  return found;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
