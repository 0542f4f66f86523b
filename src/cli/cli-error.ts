// Failures the CLI itself finds (not the store's): a class with a literal `code`, told as `seedline <cmd>: <code>: <message>`.

/** A failure of a CLI command that is not a usage error: exit 1, its code named on stderr. */
export class CliError<C extends string = string> extends Error {
  override readonly name = "CliError";
  readonly code: C;

  constructor(code: C, message: string) {
    super(message);
    this.code = code;
  }
}
