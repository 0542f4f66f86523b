// Pages and parts cut to the frame limit: session/read's events and session/export's log text, by bytes.
import type { SessionEvent } from "../generated.js";
import { formatEventLine, formatHeaderLine } from "../store/jsonl/format.js";
import type { Session } from "../store/session-store.js";
import {
  countWithin,
  jsonBytes,
  MAX_MESSAGE_BYTES,
  PAGE_BYTES,
  responseTooLarge,
} from "./frame-limit.js";

/**
 * The events of a session/read page: those from `from` up to `end` (exclusive; the end of the
 * log when undefined), cut to as many as fit in `budget` bytes of JSON — at least one when any
 * remain. (An event alone over the frame limit makes the answer RESPONSE_TOO_LARGE on its way out.)
 */
export function readPage(
  session: Session,
  from: number,
  end: number | undefined,
  budget = PAGE_BYTES,
): readonly SessionEvent[] {
  if (from >= session.nextSeq) return [];
  const events = session.eventsBetween(from, end);
  // Each event takes its JSON and a comma.
  const count = countWithin(events, budget, (event) => jsonBytes(event) + 1);
  return count === events.length ? events : events.slice(0, count);
}

/** A session/export answer: the log text (whole or a part), where the next part starts, and whether it is the last. */
export interface ExportAnswer {
  readonly log: string;
  readonly nextSeq: number;
  readonly done: boolean;
}

/**
 * The whole export of `session`: its header line then one line per event (the text
 * `SessionStore.exportLog` returns), in one answer.
 * @throws SeedlineError RESPONSE_TOO_LARGE when the text alone is over the frame limit.
 */
export function wholeExport(session: Session): ExportAnswer {
  const log = formatHeaderLine(session.header) + session.events.map(formatEventLine).join("");
  const size = Buffer.byteLength(log, "utf8");
  if (size > MAX_MESSAGE_BYTES) {
    throw responseTooLarge(size, "a log text (export it in parts: session/export with fromSeq)");
  }
  return { log, nextSeq: session.nextSeq, done: true };
}

/**
 * One part of the export of `session`: from `fromSeq` 0 the header line first, then the lines of
 * the events from `fromSeq` on, as many whole lines as fit in `budget` bytes of JSON-escaped text
 * (at least one when any remain). The parts from 0, each from the previous `nextSeq`, concatenate
 * to {@link wholeExport}'s text.
 */
export function exportPart(session: Session, fromSeq: number, budget = PAGE_BYTES): ExportAnswer {
  const head = fromSeq === 0 ? formatHeaderLine(session.header) : "";
  if (fromSeq >= session.nextSeq)
    return { log: head, nextSeq: Math.max(fromSeq, session.nextSeq), done: true };
  // A line's cost is its text as a JSON string member (escapes included, quotes left out).
  let used = head === "" ? 0 : jsonBytes(head) - 2;
  const lines: string[] = [];
  for (const event of session.eventsBetween(fromSeq)) {
    const line = formatEventLine(event);
    used += jsonBytes(line) - 2;
    if (lines.length > 0 && used > budget) break;
    lines.push(line);
  }
  const nextSeq = fromSeq + lines.length;
  return { log: head + lines.join(""), nextSeq, done: nextSeq >= session.nextSeq };
}
