// Stands in for the Codex rollout mapping, which is written apart; the merge takes that module in place of this one.
import { SeedlineError } from "../errors.js";
import type { MappedTranscript } from "./transcript.js";

/**
 * Maps the text of a Codex rollout to seedline sessions. This build has no Codex mapping yet.
 * @throws SeedlineError INVALID_PARAMS always.
 */
export function mapCodexRollout(text: string): MappedTranscript {
  const message = `expected a Claude Code transcript, got a Codex rollout (${text.length} characters): this build does not map Codex rollouts yet`;
  throw new SeedlineError("INVALID_PARAMS", message, {
    errors: [{ instancePath: "/log", message }],
  });
}
