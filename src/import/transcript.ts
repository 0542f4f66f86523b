// What a transcript mapping yields: seedline logs (header and events) made from another tool's session file.
import type {
  SessionEvent,
  SessionHeader,
  TranscriptFormat,
  TranscriptImported,
  TranscriptLineCounts,
  TranscriptLineProblem,
} from "../generated.js";

/** The tools whose transcripts seedline imports (the schema's `TranscriptFormat`). */
export type { TranscriptFormat };

/** What happened to one line of the source that did not map to seedline events (see `TranscriptLineProblem`). */
export type LineProblem = TranscriptLineProblem;

/** How many lines of a source were mapped to events, kept verbatim, or refused (see `TranscriptLineCounts`). */
export type LineCounts = TranscriptLineCounts;

/** One seedline session made from a transcript: a complete log, header and events (seq from 0). */
export interface MappedSession {
  readonly header: SessionHeader;
  readonly events: readonly SessionEvent[];
  /** A title the source states (Claude Code's `summary` lines), if any. */
  readonly title?: string;
}

/**
 * The mapping of one transcript file: what an import reports of it (`TranscriptImported`'s format,
 * line counts, problems and `consumed`: how many UTF-16 units at the start of the text were
 * complete lines and were mapped — a last line without its newline that does not parse is left
 * for the next import), with the sessions themselves.
 */
export type MappedTranscript = Omit<TranscriptImported, "sessions"> & {
  /**
   * The sessions the file becomes: its main line first, then one fork per abandoned branch
   * (`parentSession` + `seedLength`), then children (sidechains, subagents; `parentSession`, no
   * `seedLength`). A mapping is a pure function of the complete lines: mapping a longer version
   * of the same file yields each earlier session's events as a prefix of its new events.
   */
  readonly sessions: readonly MappedSession[];
};

/**
 * The stable seedline id of a session imported from `format` whose id in the source tool is
 * `sourceId` (Claude Code's `sessionId`, Codex's `session_meta.payload.id`): importing the same
 * file again names the same session. `part` names a session the file yields besides its main line
 * (a branch `branch-2`, a subagent `agent-a881341`).
 */
export function importedSessionId(
  format: TranscriptFormat,
  sourceId: string,
  part?: string,
): string {
  return part === undefined ? `${format}-${sourceId}` : `${format}-${sourceId}.${part}`;
}
