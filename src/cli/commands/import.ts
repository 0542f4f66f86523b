// `seedline import FILE|DIR…`: stores recorded logs with their ids and headers, reporting progress on stderr.
import { readFile } from "node:fs/promises";
import { type CommandSpec, EXIT_FAILED, EXIT_OK } from "../command.js";
import { collectLogFiles } from "../log-files.js";
import { plural } from "../output.js";
import { reportError } from "../report.js";
import { STORE_OPTION, storeUrl, withStore } from "../store.js";

export const importCommand: CommandSpec = {
  name: "import",
  summary: "store logs (files or fixture folders) with ids and headers preserved",
  synopsis: "FILE|DIR… [--store URL]",
  description: `
Stores JSONL session logs in a store, each under the id, lineage and seedLength of its header
(a fixture folder's children keep pointing at their parent). A DIR means every *.jsonl below it,
a fixture's session.jsonl before its session.N.jsonl. Each log is checked as it enters and stored
all or nothing; a log ending inside a turn is stored as written and repaired when first opened.

On a failure (a broken log, an id already in the store) the file is named on stderr and the
import goes on with the next file; the exit status is 1 if any file failed. Progress goes to
stderr when there is more than one file; the summary goes to stdout.`,
  options: { store: STORE_OPTION },
  positionals: { name: "FILE|DIR…", min: 1, files: true },
  async run({ args, out, env }) {
    const url = storeUrl(args.values.store, env);
    const files = await collectLogFiles(args.positionals);
    if (files.length === 0) {
      throw new Error(`expected *.jsonl files under ${args.positionals.join(", ")}, found none`);
    }
    let imported = 0;
    await withStore(url, async (store) => {
      for (const [i, file] of files.entries()) {
        try {
          const header = await store.importLog(await readFile(file, "utf8"));
          imported++;
          if (files.length > 1) {
            out.err(
              `imported ${i + 1}/${files.length} ${file} ${out.errPaint.dim(`→ ${header.id}`)}\n`,
            );
          } else {
            out.out(`imported ${file} as ${header.id} into ${url}\n`);
          }
        } catch (error) {
          reportError("import", error, out, env, `${file}: `);
        }
      }
    });
    const failed = files.length - imported;
    if (files.length > 1 || failed > 0) {
      const summary = `imported ${imported} of ${plural(files.length, "log")} into ${url}`;
      out.out(failed === 0 ? `${summary}\n` : `${summary}; ${out.paint.red(`${failed} failed`)}\n`);
    }
    return failed === 0 ? EXIT_OK : EXIT_FAILED;
  },
};
