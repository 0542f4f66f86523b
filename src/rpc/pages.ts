// Pages and parts cut to the frame limit: session/read's events and session/export's log text, by bytes.
import type { SessionEvent, SessionExportResult, SessionReadResult } from "../generated.js";
import { formatEventLine, formatHeaderLine } from "../log/jsonl-codec.js";
import { MAX_READ_LIMIT } from "../store/reads/event-pages.js";
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

/** The most stored bytes of events a session/read without `limit` answers (one event at least). */
export const READ_BYTES = 4 * 1024 * 1024;

/**
 * A session/read answer: the events from `fromSeq` (at most `limit`, at most MAX_READ_LIMIT), read
 * as one page bounded by bytes as it is read — {@link READ_BYTES} of stored events without a
 * `limit`, {@link PAGE_BYTES} with one — so that an answer holds a page of a long log of any
 * events, never the log; `done` once the end is reached. A page holds its first event whatever its
 * size; one that cannot fit in a message is RESPONSE_TOO_LARGE on its way out.
 * @throws StorageError SESSION_NOT_FOUND and the store's read errors.
 */
export async function readAnswer(
  store: SessionStore,
  id: string,
  fromSeq: number,
  limit: number | undefined,
): Promise<SessionReadResult> {
  const maxBytes = limit === undefined ? READ_BYTES : PAGE_BYTES;
  const asked = Math.min(MAX_READ_LIMIT, limit ?? MAX_READ_LIMIT);
  const page = await store.read(id, { fromSeq, limit: asked, maxBytes });
  const { header, events, done } = page;
  const openTurn = await store.openTurn(id);
  return pagedAnswer(events, (cut) => ({
    header,
    events: cut,
    nextSeq: fromSeq + cut.length,
    ...(openTurn === undefined ? {} : { openTurn }),
    done: cut.length === events.length ? done : false,
  }));
}
