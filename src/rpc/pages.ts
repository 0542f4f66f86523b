// Pages and parts cut to the frame limit: session/read's events and session/export's log text, by bytes.
import type { SessionEvent, SessionExportResult, SessionReadResult } from "../generated.js";
import { formatEventLine, formatHeaderLine } from "../log/jsonl-codec.js";
import { type EventPage, MAX_READ_LIMIT } from "../store/event-pages.js";
import type { SessionStore } from "../store/session-store.js";
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
 * The whole export of session `id`: its header line then one line per event (the text
 * `SessionStore.exportLog` returns), in one answer, read page by page.
 * @throws SeedlineError RESPONSE_TOO_LARGE as soon as the text read is over the frame limit.
 */
export async function wholeExport(store: SessionStore, id: string): Promise<ExportAnswer> {
  const parts: string[] = [];
  let units = 0;
  let nextSeq = 0;
  for await (const page of store.pages(id, { limit: MAX_READ_LIMIT })) {
    if (parts.length === 0) parts.push(formatHeaderLine(page.header));
    for (const event of page.events) {
      const line = formatEventLine(event);
      parts.push(line);
      // Text past the frame limit in code units is past it in bytes.
      units += line.length;
    }
    nextSeq = page.nextSeq;
    if (units > MAX_MESSAGE_BYTES) break;
  }
  const log = parts.join("");
  const size = Buffer.byteLength(log, "utf8");
  if (size > MAX_MESSAGE_BYTES) {
    throw responseTooLarge(size, "a log text (export it in parts: session/export with fromSeq)");
  }
  return { log, nextSeq, done: true };
}

/**
 * The export of session `id` from `fromSeq` (the header line first from 0): the rest of the log
 * when it fits in one message, else a part of whole lines within `budget` bytes of JSON-escaped
 * text (at least one line when any remain). The parts from 0, each from the previous `nextSeq`,
 * concatenate to {@link wholeExport}'s text. Reads no more of the log than one message holds.
 */
export async function exportFrom(
  store: SessionStore,
  id: string,
  fromSeq: number,
  budget = PAGE_BYTES,
): Promise<ExportAnswer> {
  let head = "";
  const lines: string[] = [];
  // Text past the frame limit in code units is past it in bytes: stop there, and cut a part.
  let units = 0;
  let nextSeq = fromSeq;
  for await (const page of store.pages(id, { fromSeq, limit: MAX_READ_LIMIT })) {
    if (fromSeq === 0 && head === "") {
      head = formatHeaderLine(page.header);
      units += head.length;
    }
    for (const event of page.events) {
      const line = formatEventLine(event);
      lines.push(line);
      units += line.length;
      if (units > MAX_MESSAGE_BYTES) return exportPart(head, lines, fromSeq, budget, false);
    }
    nextSeq = page.pastEnd ? fromSeq : page.nextSeq;
  }
  const rest = { log: head + lines.join(""), nextSeq, done: true };
  return lines.length > 1
    ? cuttable(rest, () => exportPart(head, lines, fromSeq, budget, true))
    : rest;
}

/**
 * `head` and the first of `lines` (from `fromSeq`) within `budget` escaped bytes, at least one
 * line; the last part when `rest` (the lines are the rest of the log) and all of them fit.
 */
function exportPart(
  head: string,
  lines: readonly string[],
  fromSeq: number,
  budget: number,
  rest: boolean,
): ExportAnswer {
  // A line's cost is its text as a JSON string member (escapes included, quotes left out).
  const headCost = head === "" ? 0 : jsonBytes(head) - 2;
  const count = countWithin(lines, Math.max(0, budget - headCost), (line) => jsonBytes(line) - 2);
  const done = rest && count === lines.length;
  return { log: head + lines.slice(0, count).join(""), nextSeq: fromSeq + count, done };
}

/** How much JSON of events a session/read without `limit` gathers before it answers. */
export const READ_BYTES = 4 * 1024 * 1024;

/**
 * A session/read answer: the events from `fromSeq` (at most `limit`), read page by page until
 * about {@link READ_BYTES} of JSON, so that an answer holds a page of a long log, never the log;
 * `done` once the end is reached. A `limit` lets a client ask for more in one answer, up to what
 * one message holds.
 * @throws StorageError SESSION_NOT_FOUND and the store's read errors.
 */
export async function readAnswer(
  store: SessionStore,
  id: string,
  fromSeq: number,
  limit: number | undefined,
): Promise<SessionReadResult> {
  const end = limit === undefined ? Number.POSITIVE_INFINITY : fromSeq + limit;
  const budget = limit === undefined ? READ_BYTES : PAGE_BYTES;
  const events: SessionEvent[] = [];
  let units = 0;
  let next = fromSeq;
  // `limit` is at least 1: there is always a first page.
  let last: EventPage;
  do {
    last = await store.read(id, { fromSeq: next, limit: Math.min(MAX_READ_LIMIT, end - next) });
    for (const event of last.events) events.push(event);
    next = last.nextSeq;
    units += JSON.stringify(last.events).length;
  } while (!last.done && units < budget && next < end);
  const { header, done } = last;
  const openTurn = await store.openTurn(id);
  return pagedAnswer(events, (page) => ({
    header,
    events: page,
    nextSeq: fromSeq + page.length,
    ...(openTurn === undefined ? {} : { openTurn }),
    done: page.length === events.length ? done : false,
  }));
}
