// What a caller asks a store to store whole — a new session's options and seed, or an imported log's text — checked and turned into the header to store; an imported log stored whole, and a log opened for writing repaired.
import { StorageError, show } from "../../errors.js";
import {
  type CreateSessionOptions,
  type SessionHeader,
  validateAbsolutePath,
  validateCreateSessionOptions,
} from "../../generated.js";
import { closersFor } from "../../log/repair.js";
import { SessionLog } from "../../log/session-log.js";
import { problemText, schemaProblem } from "../../util/schema-problem.js";
import type { SessionBackend } from "../backend.js";
import { invalidParams } from "../errors/storage-errors.js";
import { parseLogText } from "../jsonl/log-reader.js";
import { checkSessionId, checkText, makeHeader } from "./checks.js";

/**
 * The header of a session to create and its seed (unread: taken by the caller), from
 * `SessionStore.create`'s options; a new id from `newId` and the creation time from `now` when
 * the options name none.
 * @throws StorageError INVALID_PARAMS, naming the member.
 */
export function createdSessionOf(
  options: CreateSessionOptions,
  newId: () => string,
  now: () => number,
): { header: SessionHeader; seed: readonly unknown[] | undefined } {
  const { id, seed, ...rest } = options as { id?: unknown; seed?: unknown };
  if (id !== undefined && typeof id !== "string") {
    throw invalidParams("/sessionId", `expected a session id string, got ${show(id)}`);
  }
  const sessionId = id ?? newId();
  checkSessionId(sessionId, "/sessionId");
  if (seed !== undefined && !Array.isArray(seed)) {
    throw invalidParams("/seed", `expected an array of events, got ${show(seed)}`);
  }
  if (!validateCreateSessionOptions(rest)) {
    const found = schemaProblem(validateCreateSessionOptions.errors);
    throw invalidParams(
      found.instancePath,
      `expected valid create options, got ${problemText(found)}`,
    );
  }
  const meta = options.meta ?? {};
  if (meta.cwd !== undefined && !validateAbsolutePath(meta.cwd)) {
    throw invalidParams("/meta/cwd", `expected an absolute cwd, got ${show(meta.cwd)}`);
  }
  checkText(meta.cwd, "/meta/cwd");
  checkText(meta.parentSession, "/meta/parentSession");
  const seedLength = meta.seedLength ?? 0;
  const seedCount = seed?.length ?? 0;
  if (seedLength > seedCount) {
    throw invalidParams(
      "/meta/seedLength",
      `expected a seedLength of at most ${seedCount} (the seed's length), got ${seedLength}`,
    );
  }
  const header = makeHeader({
    id: sessionId,
    createdAt: meta.createdAt ?? now(),
    cwd: meta.cwd,
    parentSession: meta.parentSession,
    seedLength,
  });
  return { header, seed: seed as readonly unknown[] | undefined };
}

/**
 * The header (under `sessionId` when given) and the parsed events of a log to import, read from
 * its JSONL text with every line held to be an event.
 * @throws StorageError CORRUPT_LOG (a missing or bad header, a bad line: nothing is dropped on
 *   import), FORMAT_UNSUPPORTED, INVALID_PARAMS.
 */
export function importedLogOf(
  text: string,
  options: { sessionId?: string },
): { header: SessionHeader; parsed: unknown[] } {
  const location =
    options.sessionId === undefined
      ? "imported log"
      : `imported log for ${show(options.sessionId)}`;
  const parsed = parseLogText(text.endsWith("\n") ? text : `${text}\n`, location);
  if (parsed.tornTail) {
    throw new StorageError(
      "CORRUPT_LOG",
      `expected every line of the ${location} to be an event, got a bad line after line ${parsed.events.length + 1}`,
      {
        location,
        line: parsed.events.length + 2,
      },
    );
  }
  const header: SessionHeader =
    options.sessionId === undefined ? parsed.header : { ...parsed.header, id: options.sessionId };
  checkSessionId(header.id, options.sessionId === undefined ? "/log" : "/sessionId");
  checkText(header.cwd, "/log");
  checkText(header.parentSession, "/log");
  if ((header.seedLength ?? 0) > parsed.events.length) {
    throw invalidParams(
      "/log",
      `expected a seedLength of at most ${parsed.events.length} (the log's length), got ${header.seedLength}`,
    );
  }
  return { header, parsed: parsed.events };
}

/**
 * Stores an imported log whole under its writer lock (let go of afterwards); returns its header.
 * @throws StorageError SESSION_ALREADY_EXISTS; InvalidEventError for an event that breaks a rule.
 */
export async function storeWhole(
  backend: SessionBackend,
  header: SessionHeader,
  parsed: readonly unknown[],
): Promise<SessionHeader> {
  const log = new SessionLog(header);
  const events = log.admitSerialized(parsed, "parsed");
  const release = await backend.lock(header.id);
  try {
    await backend.create(log.header, events);
  } finally {
    await release();
  }
  return log.header;
}

/**
 * Repairs a log just opened for writing, as stored: an open turn that is not the opener's `own`
 * (one it left open itself) is closed as interrupted, and a torn tail cut; the closers are
 * stored and committed to `log`. Returns whether anything was stored.
 */
export async function repairOpened(
  backend: SessionBackend,
  log: SessionLog,
  tornTail: boolean,
  own: boolean,
): Promise<boolean> {
  const closers = own ? [] : closersFor(log.stateCopy(), log.lastTime ?? 0);
  const repaired = closers.length > 0 || tornTail;
  if (repaired) {
    const prepared = log.prepare(closers, "parsed");
    await backend.repair(log.header.id, log.length, prepared.serialized);
    log.commit(prepared);
  }
  return repaired;
}
