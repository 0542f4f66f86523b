// The corpus round trip: recorded logs created through the backend read back as the same text.

import assert from "node:assert/strict";
import type { SessionEvent } from "../../generated.js";
import { formatEventLine, formatHeaderLine, parseHeaderLine } from "../../log/jsonl-codec.js";
import { serializeEvents } from "../../log/serialized-event.js";
import type { SessionBackend } from "../../store/backend.js";
import { catalogOf } from "../../store/listing/scan-catalog.js";
import { assertSuffix } from "../expect.js";
import type { CaseRegistry } from "../registry.js";
import type { ContractCorpusLog } from "../types.js";

/**
 * The header and events of a corpus log.
 * @throws StorageError CORRUPT_LOG or FORMAT_UNSUPPORTED for a header line that is not one.
 * @throws AssertionError for an event line that is not a JSON object.
 */
function parseLog(log: ContractCorpusLog) {
  const [head = "", ...rest] = log.text.split("\n");
  assert.equal(rest.pop(), "", `expected corpus log ${log.name} to end in a newline`);
  const events = rest.map((line, i) => {
    const event: unknown = JSON.parse(line);
    assert.ok(
      typeof event === "object" && event !== null && !Array.isArray(event),
      `expected an event object on line ${i + 2} of corpus log ${log.name}`,
    );
    return event as SessionEvent;
  });
  return { header: parseHeaderLine(head, log.name), events };
}

/**
 * Stores one corpus log through `writer`, reads it back through `reader` and checks it, then
 * deletes it (corpus logs of different scenarios may share an id).
 * @throws AssertionError naming the log and the first difference.
 */
async function roundTrip(
  writer: SessionBackend,
  reader: SessionBackend,
  log: ContractCorpusLog,
): Promise<void> {
  const { header, events } = parseLog(log);
  await writer.create(header, serializeEvents(events));
  const stored = await reader.load(header.id);
  assert.ok(stored !== undefined, `expected load(${header.id}) to find corpus log ${log.name}`);
  assert.deepStrictEqual(stored.header, header, `expected the header of ${log.name}`);
  assert.deepStrictEqual(stored.events, events, `expected the events of ${log.name}`);
  assert.equal(stored.tornTail, false, `expected no torn tail in ${log.name}`);
  const text =
    formatHeaderLine(stored.header) +
    (stored.events as SessionEvent[]).map(formatEventLine).join("");
  assert.equal(text, log.text, `expected ${log.name} to read back byte for byte`);
  const half = Math.floor(events.length / 2);
  await assertSuffix(reader, header.id, half, half, events.slice(half));
  const listed = (await catalogOf(reader).list({ limit: 1 })).sessions[0];
  assert.equal(listed?.eventCount, events.length, `expected list to count ${log.name}'s events`);
  assert.equal(await writer.delete(header.id), true, `expected ${log.name} to be deleted`);
}

/**
 * Registers the corpus round trip: one case over every log (one storage for all of them keeps
 * it fast on a database server), failing with the name of the first log that differs.
 */
export function corpusCases(cases: CaseRegistry, corpus: readonly ContractCorpusLog[]): void {
  if (corpus.length === 0) return;
  cases.add(
    `every corpus log (${corpus.length}) round-trips through create, load, loadFrom and list unchanged`,
    async (storage) => {
      const writer = await storage.open();
      const reader = await storage.open();
      for (const log of corpus) await roundTrip(writer, reader, log);
    },
  );
}
