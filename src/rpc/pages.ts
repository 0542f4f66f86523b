// Pages and parts cut to the frame limit: session/read's events and session/export's log text, by bytes.
import type { SessionEvent, SessionExportResult } from "../generated.js";
import { formatEventLine, formatHeaderLine } from "../log/jsonl-codec.js";
import type { Session } from "../store/session-store.js";
import {
  countWithin,
  cuttable,
  jsonBytes,
  MAX_MESSAGE_BYTES,
  PAGE_BYTES,
  responseTooLarge,
} from "./frame-limit.js";

/**
 * The first of `events` that fit in `budget` bytes of JSON, at least one when there is any (an
 * event alone over the frame limit makes the answer RESPONSE_TOO_LARGE on its way out).
 */
export function firstPage(
  events: readonly SessionEvent[],
  budget = PAGE_BYTES,
): readonly SessionEvent[] {
  // Each event takes its JSON and a comma.
  const count = countWithin(events, budget, (event) => jsonBytes(event) + 1);
  return count === events.length ? events : events.slice(0, count);
}

/**
 * `answer(events)`, marked {@link cuttable} to `answer(firstPage(events))`: the writer sends every
 * event asked for when the answer fits in one message, and a first page of at most
 * {@link PAGE_BYTES} of events otherwise.
 */
export function pagedAnswer<T extends object>(
  events: readonly SessionEvent[],
  answer: (events: readonly SessionEvent[]) => T,
): T {
  const whole = answer(events);
  return events.length > 1 ? cuttable(whole, () => answer(firstPage(events))) : whole;
}

/** A session/export answer: the log text (whole or a part), where the next part starts, and whether it is the last. */
export type ExportAnswer = SessionExportResult;

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
 * The export of `session` from `fromSeq` (the header line first from 0): the rest of the log when
 * it fits in one message, else a part of whole lines within `budget` bytes of JSON-escaped text
 * (at least one line when any remain). The parts from 0, each from the previous `nextSeq`,
 * concatenate to {@link wholeExport}'s text.
 */
export function exportFrom(session: Session, fromSeq: number, budget = PAGE_BYTES): ExportAnswer {
  const head = fromSeq === 0 ? formatHeaderLine(session.header) : "";
  if (fromSeq >= session.nextSeq) {
    return { log: head, nextSeq: Math.max(fromSeq, session.nextSeq), done: true };
  }
  const lines: string[] = [];
  // Text past the frame limit in code units is past it in bytes: stop there, and cut a part.
  let units = head.length;
  for (const event of session.eventsBetween(fromSeq)) {
    const line = formatEventLine(event);
    lines.push(line);
    units += line.length;
    if (units > MAX_MESSAGE_BYTES) return exportPart(head, lines, fromSeq, session, budget);
  }
  const rest = { log: head + lines.join(""), nextSeq: session.nextSeq, done: true };
  return lines.length > 1
    ? cuttable(rest, () => exportPart(head, lines, fromSeq, session, budget))
    : rest;
}

/** `head` and the first of `lines` (from `fromSeq`) within `budget` escaped bytes, at least one line. */
function exportPart(
  head: string,
  lines: readonly string[],
  fromSeq: number,
  session: Session,
  budget: number,
): ExportAnswer {
  // A line's cost is its text as a JSON string member (escapes included, quotes left out).
  const headCost = head === "" ? 0 : jsonBytes(head) - 2;
  const count = countWithin(lines, Math.max(0, budget - headCost), (line) => jsonBytes(line) - 2);
  const nextSeq = fromSeq + count;
  return {
    log: head + lines.slice(0, count).join(""),
    nextSeq,
    done: nextSeq >= session.nextSeq,
  };
}
