// Codex rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) as seedline sessions: the mapping of docs/import-codex.md.
import { sourceLines } from "./codex/lines.js";
import { RolloutMapper } from "./codex/rollout-mapper.js";
import type { MappedTranscript } from "./transcript.js";

/**
 * Maps the text of a Codex rollout to one seedline session (`importedSessionId("codex", id)`,
 * `id` from its `session_meta`), as docs/import-codex.md lays out. A pure function of the text's
 * complete lines: a longer version of the same rollout gives these events as a prefix of its own.
 * A last line without its newline that does not parse is left for the next import, and so is a
 * user-role message on the last line (the line after it tells whether the user typed it); neither
 * is counted in `consumed`. A rollout that stops inside a turn gives a session whose last turn is
 * open: no closer is invented at the end.
 *
 * Lines that are not JSON are `refused`; unknown record types, and known ones of a shape or in a
 * place the mapping does not expect, are kept whole as foreign records and reported `verbatim`,
 * each with its line number. Without a `session_meta` line the rollout gives no session.
 */
export function mapCodexRollout(text: string): MappedTranscript {
  const mapper = new RolloutMapper();
  for (const { line, parsed } of sourceLines(text)) mapper.take(line, parsed);
  const { header, title } = mapper;
  return {
    format: "codex",
    sessions:
      header === undefined
        ? []
        : [{ header, events: mapper.log.events, ...(title === undefined ? {} : { title }) }],
    counts: { mapped: mapper.mapped, verbatim: mapper.verbatim, refused: mapper.refused },
    problems: mapper.problems,
    consumed: mapper.consumed,
  };
}
