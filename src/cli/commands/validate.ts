// `seedline validate FILE|DIR…`: checks recorded logs (schema, header, invariants) and reports every problem by line.
import { readFile } from "node:fs/promises";
import { type CommandSpec, EXIT_FAILED, EXIT_OK } from "../command.js";
import { collectLogFiles } from "../log-files.js";
import { plural } from "../output.js";
import { checkReplayable } from "../replayable-log.js";
import { checkLogText, type LogProblem } from "../validate-log.js";

export const validateCommand: CommandSpec = {
  name: "validate",
  summary: "check session logs: header, schema, invariants (exit 1 on any problem)",
  synopsis: "FILE|DIR… [--replayable] [--json]",
  description: `
Checks JSONL session logs as the store reads them: line 1 is the session header, every later
line one event with seq equal to its position, each matching its schema, and the log keeping its
invariants (turn and step order, surface markers, tool pairing, provenance, replace). A DIR means
every *.jsonl below it.

Prints one line per problem, "file:line: rule: message", and exits 1 if there is any; prints a
one-line summary and exits 0 otherwise. Invariants that depend on earlier events are checked up
to a file's first problem; the per-line checks (JSON, seq, schema, surface marker) run on every
line.

With --replayable, a log with no such problem is also checked as \`seedline replay\` derives its
script: each step after the header's seedLength with no faithful replay (no finish chunk, no
recorded error, not the last step of an aborted turn) is a REPLAY_INCOMPLETE problem on the line
of its step/start. A session.jsonl beside a replay.override.json replays from the override: the
override is checked instead (INVALID_PARAMS).`,
  options: {
    replayable: {
      type: "boolean",
      description: "also report what replay would refuse (REPLAY_INCOMPLETE)",
    },
    json: {
      type: "boolean",
      description:
        "print {ok, files, events, problems: [{file, line, rule, message, seq?, instancePath?}]}",
    },
  },
  positionals: { name: "FILE|DIR…", min: 1, files: true },
  async run({ args, out }) {
    const files = await collectLogFiles(args.positionals);
    const problems: LogProblem[] = [];
    let events = 0;
    for (const file of files) {
      const text = await readFile(file, "utf8");
      const check = checkLogText(text, file);
      events += check.events;
      problems.push(...check.problems);
      if (args.values.replayable && check.problems.length === 0) {
        problems.push(...(await checkReplayable(text, file)));
      }
    }
    const ok = problems.length === 0 && files.length > 0;
    if (args.values.json) {
      out.out(`${JSON.stringify({ ok, files: files.length, events, problems }, null, 2)}\n`);
      return ok ? EXIT_OK : EXIT_FAILED;
    }
    const { paint } = out;
    for (const p of problems) {
      out.out(`${paint.bold(`${p.file}:${p.line}:`)} ${paint.red(p.rule)}: ${p.message}\n`);
    }
    if (files.length === 0) {
      out.out(`${paint.red("no *.jsonl files")} under ${args.positionals.join(", ")}\n`);
    } else if (problems.length === 0) {
      out.out(
        `${paint.green("ok")}: ${plural(files.length, "log")}, ${plural(events, "event")}, no problems\n`,
      );
    } else {
      const broken = new Set(problems.map((p) => p.file)).size;
      out.out(
        `${paint.red(plural(problems.length, "problem"))} in ${broken} of ${plural(files.length, "log")}\n`,
      );
    }
    return ok ? EXIT_OK : EXIT_FAILED;
  },
};
