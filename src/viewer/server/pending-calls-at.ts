// The tool calls pending where a page of a session's log starts, for a page whose results answer calls read before it.
import type { SessionEvent } from "../../generated.js";
import { PendingCalls } from "../../log/pending-calls.js";
import type { SessionStore } from "../../store/session-store.js";

/** How many events are read at a time going back to a step's start. */
const BACK_PAGE = 2000;

/**
 * Whether `events` (a page or live batch, in seq order) holds a `tool/result` of the step open at
 * its first event that no call of the same events answers: only then can a result answer a call
 * read before them, and only then is {@link pendingCallsAt} worth reading back for.
 */
export function answersEarlierCalls(events: readonly SessionEvent[]): boolean {
  const calls = new PendingCalls();
  for (const e of events) {
    if (e.type === "step/start" || e.type === "step/end" || e.type.startsWith("turn/"))
      return false;
    if (calls.follow(e) === undefined && e.type === "tool/result") return true;
  }
  return false;
}

/**
 * The calls pending just before `seq` in session `id`: the tool calls of the step open there
 * that no result before `seq` answered, by the log's own rule (see {@link PendingCalls}). Reads
 * back from `seq` to that step's `step/start`, keeping only its tool calls and results; none when
 * no step is open there.
 * @throws StorageError SESSION_NOT_FOUND and the store's read errors.
 */
export async function pendingCallsAt(
  store: SessionStore,
  id: string,
  seq: number,
): Promise<PendingCalls> {
  const calls = new PendingCalls();
  const tools: SessionEvent[] = [];
  scan: for (let end = seq; end > 0; end = Math.max(0, end - BACK_PAGE)) {
    const window = await eventsBetween(store, id, Math.max(0, end - BACK_PAGE), end);
    for (let i = window.length - 1; i >= 0; i--) {
      const e = window[i] as SessionEvent;
      if (e.type === "step/start") break scan;
      // A step that ended (or a turn boundary) before `seq`: no step is open there.
      if (e.type === "step/end" || e.type === "turn/end" || e.type === "turn/start") return calls;
      if (e.type === "tool/call" || e.type === "tool/result") tools.push(e);
    }
  }
  for (let i = tools.length - 1; i >= 0; i--) calls.follow(tools[i] as SessionEvent);
  return calls;
}

/** The events `from` to `end - 1`, read in as many pages as the store answers them in. */
async function eventsBetween(
  store: SessionStore,
  id: string,
  from: number,
  end: number,
): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for (let at = from; at < end; ) {
    const page = await store.read(id, { fromSeq: at, limit: end - at });
    if (page.events.length === 0) break;
    events.push(...page.events);
    at = page.nextSeq;
  }
  return events;
}
