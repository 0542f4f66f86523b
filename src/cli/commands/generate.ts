// `seedline generate`: the generation pipeline (types, validators, DDL, RPC tables) over a user's schema folder.
import { CliError } from "../cli-error.js";
import { type CommandSpec, EXIT_USAGE } from "../command.js";

/** The generator the pipeline needs; a devDependency of seedline, so not in a production install. */
const GENERATOR_PACKAGE = "json-schema-to-typescript";

/** Whether `error` is the loader failing to find the generator package. */
function isGeneratorMissing(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" &&
    error.message.includes(`'${GENERATOR_PACKAGE}'`)
  );
}

export const generateCommand: CommandSpec = {
  name: "generate",
  summary: "generate types, validators, DDL and RPC tables from a schema folder",
  synopsis: "[--schema DIR] [--out DIR] [--check]",
  description: `
Runs seedline's generation pipeline over a schema folder laid out as seedline's own schema/
(common/, events/, session/, and optionally storage/ and rpc/): writes the TypeScript types, the
ajv validators, the event catalogue and, when their documents are present, the SQLite layout and
the RPC tables into the output folder as *.gen.ts / *.gen.sql. Needs the package
json-schema-to-typescript, which a production install of seedline does not carry: install it in
your project (npm install --save-dev json-schema-to-typescript). Files whose content is unchanged
are not rewritten; *.gen.* files no longer generated are removed.

With --check nothing is written: exits 1 and names each file that is missing, differs or is
stale (a CI gate).`,
  options: {
    schema: {
      type: "string",
      arg: "DIR",
      files: true,
      description: "the schema folder (default: schema)",
    },
    out: {
      type: "string",
      arg: "DIR",
      files: true,
      description: "the output folder (default: generated)",
    },
    check: { type: "boolean", description: "compare instead of writing; exit 1 on any difference" },
  },
  positionals: { name: "", min: 0, max: 0 },
  async run({ args, out }) {
    // Loaded here: the pipeline pulls in json-schema-to-typescript, which no other command needs
    // and a production install of seedline does not carry.
    let main: (
      argv: readonly string[],
      io: { out: { write(text: string): unknown }; err: { write(text: string): unknown } },
    ) => Promise<number>;
    try {
      ({ main } = await import("../../../scripts/pipeline.js"));
    } catch (error) {
      if (!isGeneratorMissing(error)) throw error;
      throw new CliError(
        "GENERATOR_MISSING",
        `expected the package ${GENERATOR_PACKAGE} to be installed, found none: run \`npm install --save-dev ${GENERATOR_PACKAGE}\` in your project, then generate again`,
      );
    }
    const argv = [
      ...(typeof args.values.schema === "string" ? ["--schema", args.values.schema] : []),
      ...(typeof args.values.out === "string" ? ["--out", args.values.out] : []),
      ...(args.values.check ? ["--check"] : []),
    ];
    // Through the command's output, so that a caller running the CLI in-process reads it too.
    const code = await main(argv, {
      out: { write: (text: string) => out.out(text) },
      err: { write: (text: string) => out.err(text) },
    });
    return code === 2 ? EXIT_USAGE : code;
  },
};
