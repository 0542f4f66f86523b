// Stores a transcript's sessions: created the first time, the new events appended when the transcript grew, nothing when it did not, a rewritten transcript reported and left alone.
import { hasCode, SeedlineError } from "../errors.js";
import type {
  ImportedTranscriptSession,
  SessionEvent,
  SessionHeader,
  TranscriptImported,
} from "../generated.js";
import { titleProblem } from "../log/session-title.js";
import type { SessionStore } from "../store/session-store.js";
import { mapClaudeCodeTranscript } from "./claude-code.js";
import { mapCodexRollout } from "./codex.js";
import { detectTranscriptFormat } from "./detect.js";
import type { MappedSession, MappedTranscript, TranscriptFormat } from "./transcript.js";

/** What a transcript is and where it came from. */
export interface TranscriptOptions {
  /** The tool that wrote it, or `auto` to tell by its content. */
  readonly format: TranscriptFormat | "auto";
  /** The file's path (a Claude Code file of summaries is named by its file name). */
  readonly path?: string;
}

/** How to import a transcript. */
export interface ImportTranscriptOptions extends TranscriptOptions {
  /** Refuse the whole transcript (store nothing) when any line is not mapped. */
  readonly strict?: boolean;
}

/**
 * The sessions a transcript maps to, without storing them: Claude Code's (see
 * `mapClaudeCodeTranscript`) or Codex's (`mapCodexRollout`). Pure.
 * @throws SeedlineError INVALID_PARAMS when `auto` recognises neither tool, or the transcript
 *   cannot be named (see the mappings).
 */
export function mapTranscript(text: string, options: TranscriptOptions): MappedTranscript {
  const format = options.format === "auto" ? detectTranscriptFormat(text) : options.format;
  switch (format) {
    case "claude-code":
      return mapClaudeCodeTranscript(
        text,
        options.path === undefined ? {} : { path: options.path },
      );
    case "codex":
      return mapCodexRollout(text);
    case undefined: {
      const message = `expected a Claude Code transcript or a Codex rollout, found neither in its first lines${options.path === undefined ? "" : ` (${options.path})`}`;
      throw new SeedlineError("INVALID_PARAMS", message, {
        errors: [{ instancePath: "/log", message }],
      });
    }
  }
}

/**
 * Imports a transcript into `store`; see {@link TranscriptImporter.import}.
 * @throws as {@link TranscriptImporter.import}.
 */
export function importTranscript(
  store: SessionStore,
  text: string,
  options: ImportTranscriptOptions,
): Promise<TranscriptImported> {
  return new TranscriptImporter(store).import(text, options);
}

/** How a {@link TranscriptImporter} holds what it writes. */
export interface TranscriptImporterOptions {
  /**
   * Keep each session it writes loaded, its writer lock held (for following transcripts as they
   * grow: a turn it left open goes on with the next append). Otherwise each is unloaded once
   * written.
   */
  readonly keepLoaded?: boolean;
}

/**
 * Imports transcripts into a store, session by session (docs/import.md, "Importing again"). A
 * session not stored yet is created; one whose stored events are the start of what the
 * transcript maps to now gets the rest appended (none: unchanged); any other is `diverged` and
 * left as it is. A stored log that ends inside a turn would be closed as interrupted by an
 * append (the store repairs a log its writer left open), so a grown transcript stores such a
 * session anew (`replaced`), unless this importer wrote that turn itself and still holds it.
 */
export class TranscriptImporter {
  readonly #store: SessionStore;
  readonly #keepLoaded: boolean;
  /** What this importer last stored of each session: its length. */
  readonly #written = new Map<string, number>();

  constructor(store: SessionStore, options: TranscriptImporterOptions = {}) {
    this.#store = store;
    this.#keepLoaded = options.keepLoaded === true;
  }

  /**
   * Maps a transcript and stores its sessions, each durable before this resolves; with `strict`
   * and a line that is not mapped, stores nothing. The sessions are stored in the mapping's order
   * (a fork after the session it forks), each with the transcript's title when it gives one.
   * @throws SeedlineError INVALID_PARAMS (see {@link mapTranscript}); the store's errors.
   */
  async import(text: string, options: ImportTranscriptOptions): Promise<TranscriptImported> {
    return this.store(mapTranscript(text, options), options.strict === true);
  }

  /** Stores an already mapped transcript; see {@link import}. */
  async store(mapped: MappedTranscript, strict = false): Promise<TranscriptImported> {
    const sessions: ImportedTranscriptSession[] = [];
    if (strict && mapped.problems.length > 0) {
      const first = mapped.problems[0];
      const reason = `strict: ${mapped.problems.length} line(s) not mapped, the first line ${first?.line}: ${first?.message}`;
      for (const session of mapped.sessions) sessions.push(entry(session, "refused", 0, reason));
    } else {
      for (const session of mapped.sessions) sessions.push(await this.#sync(session));
    }
    return {
      format: mapped.format,
      sessions,
      counts: mapped.counts,
      problems: mapped.problems,
      consumed: mapped.consumed,
    };
  }

  async #sync(session: MappedSession): Promise<ImportedTranscriptSession> {
    const { header, events } = session;
    const id = header.id;
    const stored = await this.#compare(id, events);
    if (stored === undefined) {
      await this.#create(session);
      return entry(session, "created", events.length);
    }
    const was = stored.header;
    if (
      was.parentSession !== header.parentSession ||
      (was.seedLength ?? 0) !== (header.seedLength ?? 0)
    ) {
      return entry(
        session,
        "diverged",
        0,
        `the stored session's header names parent ${JSON.stringify(was.parentSession ?? null)} and seedLength ${was.seedLength ?? 0}, the transcript ${JSON.stringify(header.parentSession ?? null)} and ${header.seedLength ?? 0}`,
      );
    }
    if (stored.difference !== undefined) return entry(session, "diverged", 0, stored.difference);
    const { length } = stored;
    if (length === events.length) return entry(session, "unchanged", 0);
    const store = this.#store;
    if (stored.openTurn && this.#written.get(id) !== length) {
      await store.delete(id);
      await this.#create(session);
      return entry(session, "replaced", events.length);
    }
    await store.append(id, events.slice(length));
    this.#written.set(id, events.length);
    await this.#title(session);
    if (!this.#keepLoaded) await store.unload(id);
    return entry(session, "appended", events.length - length);
  }

  /**
   * The stored session `id` against `events`, read page by page (not loaded): its header and
   * length, whether it ends inside a turn, and where it first differs from `events` (a stored log
   * longer than `events` differs at its end). Only the last event is read of a session this
   * importer wrote last, when it is as long as then. Undefined when no such session is stored.
   */
  async #compare(
    id: string,
    events: readonly SessionEvent[],
  ): Promise<
    { header: SessionHeader; length: number; openTurn: boolean; difference?: string } | undefined
  > {
    const store = this.#store;
    const written = this.#written.get(id);
    try {
      if (written !== undefined && written > 0) {
        const page = await store.read(id, { fromSeq: written - 1 });
        const last = page.events[0];
        if (page.done && page.nextSeq === written && last !== undefined) {
          const difference = differenceAt(last, events);
          return {
            header: page.header,
            length: written,
            openTurn: true,
            ...(difference === undefined ? {} : { difference }),
          };
        }
      }
      let header: SessionHeader | undefined;
      let length = 0;
      let openTurn = false;
      let difference: string | undefined;
      for await (const page of store.pages(id)) {
        header = page.header;
        length = page.nextSeq;
        for (const event of page.events) {
          if (event.type === "turn/start") openTurn = true;
          else if (event.type === "turn/end") openTurn = false;
          difference ??= differenceAt(event, events);
        }
      }
      if (header === undefined) return undefined;
      return { header, length, openTurn, ...(difference === undefined ? {} : { difference }) };
    } catch (error) {
      if (hasCode(error, "SESSION_NOT_FOUND")) return undefined;
      throw error;
    }
  }

  async #create(session: MappedSession): Promise<void> {
    const { header, events } = session;
    await this.#store.create({
      id: header.id,
      seed: events,
      meta: {
        createdAt: header.createdAt,
        ...(header.cwd === undefined ? {} : { cwd: header.cwd }),
        ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
        ...(header.seedLength === undefined ? {} : { seedLength: header.seedLength }),
      },
    });
    this.#written.set(header.id, events.length);
    await this.#title(session);
    if (!this.#keepLoaded) await this.#store.unload(header.id);
  }

  async #title(session: MappedSession): Promise<void> {
    const title = session.title === undefined ? undefined : fitTitle(session.title);
    if (title !== undefined) await this.#store.setTitle(session.header.id, title);
  }
}

/** Why a stored event is not the one the transcript maps to at its seq; undefined when it is. */
function differenceAt(event: SessionEvent, events: readonly SessionEvent[]): string | undefined {
  const mapped = events[event.seq];
  if (mapped !== undefined && JSON.stringify(event) === JSON.stringify(mapped)) return undefined;
  return mapped === undefined
    ? `the stored session goes on past the ${events.length} events the transcript maps to: it was cut or rewritten`
    : `stored event seq ${event.seq} (${event.type}) is not what the transcript maps to there (${mapped.type}): it was rewritten, or the session written since`;
}

function entry(
  session: MappedSession,
  outcome: ImportedTranscriptSession["outcome"],
  stored: number,
  reason?: string,
): ImportedTranscriptSession {
  return {
    sessionId: session.header.id,
    outcome,
    events: stored,
    length: session.events.length,
    header: session.header,
    ...(session.title === undefined ? {} : { title: session.title }),
    ...(reason === undefined ? {} : { reason }),
  };
}

/** A title the store takes: control characters as spaces, at most 256 characters; undefined when nothing is left. */
function fitTitle(title: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const clean = [...title.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()].slice(0, 256).join("");
  return clean === "" || titleProblem(clean) !== undefined ? undefined : clean;
}
