// What the viewer's API answers about stored sessions: listed entries, lineage, pages of view items, the turn index, a fork beside its parent.
import type { SessionEvent, SessionHeader, TurnEndReason } from "../../generated.js";
import { sessionNotFound } from "../../store/errors/storage-errors.js";
import type { SessionStore, StoreListedSession } from "../../store/session-store.js";
import {
  type LineageJson,
  type LineageNode,
  lineageJson,
  lineageTrees,
} from "../../view/lineage-tree.js";
import { pageCut, type ViewItem, type ViewPage, viewItemsOfPage } from "../../view/view-items.js";
import { cutTexts } from "./cut-texts.js";
import { HttpError } from "./http-errors.js";
import { answersEarlierCalls, pendingCallsAt } from "./pending-calls-at.js";

/** The events a timeline page holds unless asked otherwise, and the most it may hold. */
export const DEFAULT_PAGE_EVENTS = 500;
export const MAX_PAGE_EVENTS = 2000;

/**
 * The most stored bytes of events one timeline or raw-events page reads (always at least one
 * event): a screen of a session of huge tool outputs is a few of them, and the viewer sends
 * their heads only.
 */
export const VIEW_PAGE_BYTES = 4 * 1024 * 1024;

/** How many events the server reads at a time when it must go through a whole log (the turn index). */
const SCAN_PAGE = 2000;

/**
 * One stored session as the list would give it, read without listing: its header and length, its
 * title, and its last activity (the time of its last event, else its creation).
 * @throws StorageError SESSION_NOT_FOUND.
 */
export async function storedListed(store: SessionStore, id: string): Promise<StoreListedSession> {
  const point = await store.backend.forkPoint(id, undefined);
  if (point === undefined) throw sessionNotFound(id);
  const { header, length } = point;
  const title = await store.title(id);
  let time = header.createdAt;
  if (length > 0) {
    const last = await store.read(id, { fromSeq: length - 1, limit: 1 });
    time = last.events[0]?.time ?? time;
  }
  return {
    header,
    eventCount: length,
    updatedAt: new Date(time).toISOString(),
    ...(title === undefined ? {} : { title }),
  };
}

/**
 * The lineage tree a session belongs to: from its root ancestor (following `parentSession` while
 * the parent is stored) down through every descendant, each fork with the turn its seed ends after.
 */
export async function lineageOf(store: SessionStore, id: string): Promise<LineageJson> {
  let root = await storedListed(store, id);
  const seen = new Set([id]);
  for (let parent = root.header.parentSession; parent !== undefined && !seen.has(parent); ) {
    seen.add(parent);
    const up = await store.backend.forkPoint(parent, undefined);
    if (up === undefined) break;
    root = await storedListed(store, parent);
    parent = root.header.parentSession;
  }
  const sessions: StoreListedSession[] = [root];
  const known = new Set([root.header.id]);
  const queue = [root.header.id];
  for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
    let cursor: string | undefined;
    do {
      const page = await store.list({
        parentSession: parent,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const listed of page.sessions) {
        if (known.has(listed.header.id)) continue;
        known.add(listed.header.id);
        sessions.push(listed);
        queue.push(listed.header.id);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }
  const branchTurns = new Map<string, number>();
  for (const { header } of sessions) {
    const turn = await branchTurn(store, header);
    if (turn !== undefined) branchTurns.set(header.id, turn);
  }
  // The root is listed first and every other session descends from it: one tree.
  const tree = lineageTrees(sessions)[0] as LineageNode;
  return lineageJson(tree, branchTurns);
}

/** The turn of a fork's last inherited event, when it names one. */
async function branchTurn(store: SessionStore, header: SessionHeader): Promise<number | undefined> {
  const seed = header.seedLength ?? 0;
  if (header.parentSession === undefined || seed === 0) return undefined;
  const page = await store.read(header.id, { fromSeq: seed - 1, limit: 1 });
  const turn = (page.events[0]?.data as { turn?: unknown } | undefined)?.turn;
  return typeof turn === "number" ? turn : undefined;
}

/**
 * One page of a session's view items: at most `limit` events from `fromSeq` (and at most
 * {@link VIEW_PAGE_BYTES} of them: big events make short pages), cut before a step that began in
 * the page and did not end in it (`nextSeq` is then that step's start), long texts cut to their
 * heads ({@link cutTexts}). A result of a step that began before the page answers that step's
 * call read before it (its `callSeq`).
 */
export async function timelinePage(
  store: SessionStore,
  id: string,
  fromSeq: number,
  limit: number,
): Promise<ViewPage> {
  const page = await store.read(id, { fromSeq, limit, maxBytes: VIEW_PAGE_BYTES });
  const cut = page.done ? page.events.length : pageCut(page.events);
  const events = page.events.slice(0, cut);
  const done = page.done && cut === page.events.length;
  const nextSeq =
    cut === page.events.length ? page.nextSeq : (page.events[cut] as SessionEvent).seq;
  const length = done ? nextSeq : await logLength(store, id);
  const start =
    fromSeq > 0 && answersEarlierCalls(events)
      ? { pendingCalls: await pendingCallsAt(store, id, fromSeq) }
      : {};
  return {
    items: cutTexts(viewItemsOfPage(page.header, events, done, start)),
    fromSeq,
    nextSeq,
    length,
    done,
  };
}

async function logLength(store: SessionStore, id: string): Promise<number> {
  const point = await store.backend.forkPoint(id, undefined);
  if (point === undefined) throw sessionNotFound(id);
  return point.length;
}

/** One turn in the turn index: where it starts, and where and how it ended when it did. */
export interface TurnEntry {
  readonly turn: number;
  readonly seq: number;
  readonly endSeq?: number;
  readonly reason?: TurnEndReason["kind"];
}

/** Every turn of a session, read page by page (only the index is kept). */
export async function turnIndex(store: SessionStore, id: string): Promise<TurnEntry[]> {
  const turns: TurnEntry[] = [];
  const open = new Map<number, number>();
  for await (const page of store.pages(id, { limit: SCAN_PAGE })) {
    for (const e of page.events) {
      if (e.type === "turn/start") {
        open.set(e.data.turn, turns.length);
        turns.push({ turn: e.data.turn, seq: e.seq });
      } else if (e.type === "turn/end") {
        const at = open.get(e.data.turn);
        if (at === undefined) continue;
        const started = turns[at] as TurnEntry;
        turns[at] = { ...started, endSeq: e.seq, reason: e.data.reason.kind };
        open.delete(e.data.turn);
      }
    }
  }
  return turns;
}

/** One side of a comparison: a page of view items from the fork boundary. */
export interface CompareSide {
  readonly items: ViewItem[];
  readonly nextSeq: number;
  readonly done: boolean;
}

/** A fork beside its parent from the boundary (the child's seedLength) on, one page of each. */
export interface Comparison {
  readonly parentId: string;
  readonly boundary: number;
  readonly parent: CompareSide;
  readonly child: CompareSide;
}

/**
 * A fork and its parent from the boundary on, one page of each.
 * @throws HttpError NOT_A_FORK (400) for a session with no parent or no inherited events;
 *   StorageError SESSION_NOT_FOUND for the child or a parent no longer stored.
 */
export async function compareFork(
  store: SessionStore,
  id: string,
  limit: number,
): Promise<Comparison> {
  const point = await store.backend.forkPoint(id, undefined);
  if (point === undefined) throw sessionNotFound(id);
  const { parentSession, seedLength } = point.header;
  if (parentSession === undefined || seedLength === undefined || seedLength === 0) {
    throw new HttpError(
      400,
      "NOT_A_FORK",
      `expected a fork (a session with parentSession and seedLength), got ${JSON.stringify(id)} with ${parentSession === undefined ? "no parent" : "no inherited events"}`,
    );
  }
  const side = async (sessionId: string): Promise<CompareSide> => {
    const page = await timelinePage(store, sessionId, seedLength, limit);
    return { items: page.items, nextSeq: page.nextSeq, done: page.done };
  };
  return {
    parentId: parentSession,
    boundary: seedLength,
    parent: await side(parentSession),
    child: await side(id),
  };
}

/** One page of raw events, as stored. */
export interface RawPage {
  readonly events: readonly SessionEvent[];
  readonly nextSeq: number;
  readonly done: boolean;
}

/** One page of a session's raw events (the chunks one click away), at most {@link VIEW_PAGE_BYTES} of them or one. */
export async function rawPage(
  store: SessionStore,
  id: string,
  fromSeq: number,
  limit: number,
): Promise<RawPage> {
  const page = await store.read(id, { fromSeq, limit, maxBytes: VIEW_PAGE_BYTES });
  return { events: page.events, nextSeq: page.nextSeq, done: page.done };
}
