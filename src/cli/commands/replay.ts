// `seedline replay FILE|DIR`: prints the replay scripts derived from a recorded log or a fixture folder, as JSON.
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { SessionScript } from "../../generated.js";
import { FIXTURE_PRIMARY_FILE, loadFixtureScripts } from "../../replay/fixture-scripts.js";
import { parseSessionFile } from "../../replay/session-file.js";
import { sessionScript } from "../../replay/session-script.js";
import { type CommandSpec, EXIT_OK } from "../command.js";

export const replayCommand: CommandSpec = {
  name: "replay",
  summary: "print the replay scripts of a recorded log or fixture folder as JSON",
  synopsis: "FILE|DIR [--json]",
  description: `
Derives replay scripts (one entry per recorded model call) and prints them as JSON:
{"scripts": [{sessionId, createdAt, primary, seedLength, entries}]}.

A DIR is a fixture folder: session.jsonl (the primary), session.N.jsonl (its children) and an
optional replay.override.json that replaces the primary's script. The primary comes first, then
the children by createdAt. A FILE gives the one script of that log. Every script is derived from
the events after its own header's seedLength, so a fork child never replays its parent's calls.

Exits 1 when a log is broken or a step has no faithful replay (REPLAY_INCOMPLETE).`,
  options: {
    json: { type: "boolean", description: "accepted for symmetry: the output is always JSON" },
  },
  positionals: { name: "FILE|DIR", min: 1, max: 1, files: true },
  async run({ args, out }) {
    const path = args.positionals[0] as string;
    let scripts: SessionScript[];
    if ((await stat(path)).isDirectory()) {
      if (!existsSync(join(path, FIXTURE_PRIMARY_FILE))) {
        throw new Error(`expected a fixture folder holding ${FIXTURE_PRIMARY_FILE}, got ${path}`);
      }
      scripts = await loadFixtureScripts(path);
    } else {
      const file = parseSessionFile(await readFile(path, "utf8"), path);
      scripts = [sessionScript(file, { primary: true })];
    }
    out.out(`${JSON.stringify({ scripts }, null, 2)}\n`);
    return EXIT_OK;
  },
};
