// A session's log as the store holds it now, read from the backend: a cached log brought up to date with what is new, or read anew — for a writer, its settled part without the chunks.
import { isDeepStrictEqual } from "node:util";
import { SessionLog } from "../../log/session-log.js";
import type { SessionBackend, StoredSuffix } from "../backend.js";
import {
  admitStored,
  asCorruption,
  checkSeedLength,
  checkStoredHeader,
  DEFAULT_PAGE_BYTES,
} from "../reads/event-pages.js";
import { locationOf, STREAM_PAGE } from "./paged-reads.js";

/**
 * The log of session `id` as stored now: `cached` (a log read before) brought up to date from its
 * end while the stored log extends it, or — when there is none, or the stored log was replaced
 * (deleted and created again) — read anew from seq 0 (`fresh`). A log read anew reads its settled
 * part's message-producing events first, where the backend can: a writer resuming and a reader
 * loading need the same state (length, open turn, messages), and the chunks and markers of the
 * settled part — most of a log — are checked when they are read (`readEvents`, `read`), not to
 * load it. Undefined when it is not stored.
 * @throws StorageError FORMAT_UNSUPPORTED, CORRUPT_LOG.
 */
export async function storedLog(
  backend: SessionBackend,
  id: string,
  cached: SessionLog | undefined,
): Promise<{ log: SessionLog; fresh: boolean; tornTail: boolean } | undefined> {
  const location = locationOf(backend, id);
  // The cached state goes on from its end while the stored log extends it; any sign that the
  // log was replaced (deleted and created again) starts a new state from seq 0.
  let log = cached;
  let fresh = false;
  // The first page after the settled part, when the backend read it along.
  let next: StoredSuffix | undefined;
  if (log === undefined && backend.loadSettled !== undefined) {
    // A log read anew: its settled part without the chunks first, where the backend can.
    const part = await settledLog(backend, id, location);
    if (part === undefined) return undefined;
    ({ log, next } = part);
    fresh = true;
  }
  for (;;) {
    const from = log?.length ?? 0;
    const stored = next ?? (await backend.loadFrom(id, from, STREAM_PAGE, DEFAULT_PAGE_BYTES));
    next = undefined;
    if (stored === undefined) return undefined;
    if (
      log === undefined ||
      stored.from !== from ||
      !isDeepStrictEqual(stored.header, log.header)
    ) {
      // The same seq of another log (another header): read that log again from 0.
      if (log !== undefined && stored.from === from) {
        log = undefined;
        continue;
      }
      // Otherwise `stored` is a first page (from 0): of a new log, or of a shorter one.
      checkStoredHeader(stored.header, location);
      log = new SessionLog(stored.header);
      fresh = true;
    }
    admitStored(stored.events, stored.from, location, log);
    if (stored.events.length < STREAM_PAGE && stored.cut !== true) {
      checkSeedLength(log.header, log.length, location);
      return { log, fresh, tornTail: stored.tornTail };
    }
  }
}

/**
 * The state of a log's settled part (up to its last `turn/end`): its message-producing events,
 * then the last `turn/end`, with the page after it when the backend read it along; undefined
 * when there is no such session. A log replaced meanwhile is read again.
 */
async function settledLog(
  backend: SessionBackend,
  id: string,
  location: string,
): Promise<{ log: SessionLog; next?: StoredSuffix } | undefined> {
  const loadSettled = backend.loadSettled?.bind(backend);
  if (loadSettled === undefined) throw new Error("expected a backend with loadSettled");
  for (;;) {
    const part = await loadSettled(id, STREAM_PAGE);
    if (part === undefined) return undefined;
    checkStoredHeader(part.header, location);
    const log = new SessionLog(part.header);
    asCorruption(location, () => log.admitSurface(part.events));
    if (part.tail !== undefined) {
      const end = part.end;
      if (part.settled > 0) asCorruption(location, () => log.settleAt(end));
      return { log, next: part.tail };
    }
    if (part.settled === 0) return { log };
    const end = await backend.loadFrom(id, part.settled - 1, 1);
    if (end === undefined) return undefined;
    const turnEnd = end.events[0];
    // Deleted and created again between the two reads: read the new log.
    if (end.from !== part.settled - 1 || turnEnd === undefined) continue;
    if (!isDeepStrictEqual(end.header, log.header)) continue;
    asCorruption(location, () => log.settleAt(turnEnd));
    return { log };
  }
}
