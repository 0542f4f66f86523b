// Checks that a valid log replays: every step has a faithful replay, or an override replaces the script.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ReplayError } from "../errors.js";
import { replayProblems } from "../replay/derive.js";
import { FIXTURE_OVERRIDE_FILE, FIXTURE_PRIMARY_FILE } from "../replay/fixture-scripts.js";
import { parseReplayOverride, parseSessionFile } from "../replay/session-file.js";
import type { LogProblem } from "./validate-log.js";

/**
 * What `seedline replay` would refuse in a log that `checkLogText` found no problem in: each step
 * after the header's `seedLength` with no faithful replay (rule `REPLAY_INCOMPLETE`, on the line
 * of its `step/start`), as replay derives the script. The primary log of a fixture folder
 * (`session.jsonl` beside a `replay.override.json`) is replayed from the override instead: then
 * the override is checked (rule `INVALID_PARAMS`, on the override file) and the log's steps are not.
 */
export async function checkReplayable(text: string, file: string): Promise<LogProblem[]> {
  const override = join(dirname(file), FIXTURE_OVERRIDE_FILE);
  if (basename(file) === FIXTURE_PRIMARY_FILE && existsSync(override)) {
    try {
      parseReplayOverride(await readFile(override, "utf8"), override);
      return [];
    } catch (error) {
      if (!(error instanceof ReplayError)) throw error;
      return [{ file: override, line: 1, rule: error.code, message: error.message }];
    }
  }
  const session = parseSessionFile(text, file);
  const events = session.events;
  return replayProblems(events.slice(session.seedLength), session.id).map((error) => {
    const { turn, step } = error.details;
    const start = events.findIndex(
      (e, i) =>
        i >= session.seedLength &&
        e.type === "step/start" &&
        e.data.turn === turn &&
        e.data.step === step,
    );
    // Line 1 is the header and every event line holds the seq of its position (the log is valid).
    return { file, line: start + 2, rule: error.code, message: error.message, seq: start };
  });
}
