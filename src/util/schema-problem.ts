// What a generated validator found wrong, told one way everywhere: where in the value, and what the schema expected there.
import type { ErrorObject } from "ajv";

/** One thing a validator refused: the JSON pointer into the value, and what was expected there. */
export interface SchemaProblem {
  /** JSON pointer into the checked value (`""` for the value itself). */
  readonly instancePath: string;
  /** The validator's message, with the member it names when it names one (an unknown property). */
  readonly message: string;
}

/** Every problem a validator reported (ajv stops at the first, so usually one); never empty. */
export function schemaProblems(
  errors: readonly ErrorObject[] | null | undefined,
): [SchemaProblem, ...SchemaProblem[]] {
  const problems = (errors ?? []).map(problemOf);
  const [first, ...rest] = problems;
  return first === undefined ? [{ instancePath: "", message: "is invalid" }] : [first, ...rest];
}

/** The first problem a validator reported. */
export function schemaProblem(errors: readonly ErrorObject[] | null | undefined): SchemaProblem {
  return schemaProblems(errors)[0];
}

/** A problem as text for a message: `/path message` (`/` for the value itself). */
export function problemText(problem: SchemaProblem): string {
  return `${problem.instancePath || "/"} ${problem.message}`;
}

function problemOf(error: ErrorObject): SchemaProblem {
  const params = error.params as Record<string, unknown>;
  const member =
    typeof params.additionalProperty === "string" ? ` (${params.additionalProperty})` : "";
  return { instancePath: error.instancePath, message: `${error.message ?? "is invalid"}${member}` };
}
