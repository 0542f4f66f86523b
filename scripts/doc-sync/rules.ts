// The doc-sync rules that need no compiler: the manifest, the generated regions, generated code against the schema.
import type { Drift } from "../pipeline.js";
import { DOC_REGION_GENERATOR } from "../render-docs.js";
import { PERSISTENCE_DOC, REQUIRED_REGIONS, REQUIRED_TYPE_EQUIV } from "./manifest.js";
import { type MarkdownDoc, splitLines } from "./markdown.js";
import { FIX_GENERATE, FIX_REGION, FIX_TYPE_EQUIV, type Problem } from "./problem.js";

/**
 * The manifest rule: the persistence document exists, declares every required type in a
 * type-equiv block and holds every required generated region.
 * @param declared the names declared by the type-equiv blocks of `persistence`, with their line.
 */
export function checkManifest(
  persistence: MarkdownDoc | undefined,
  declared: ReadonlyMap<string, { readonly file: string }>,
  required: { readonly types: readonly string[]; readonly regions: readonly string[] } = {
    types: REQUIRED_TYPE_EQUIV,
    regions: REQUIRED_REGIONS,
  },
): Problem[] {
  if (persistence === undefined) {
    return [
      {
        rule: "manifest",
        file: PERSISTENCE_DOC,
        message: "the persistence document is missing",
        fix: `write ${PERSISTENCE_DOC}`,
      },
    ];
  }
  const problems: Problem[] = [];
  for (const name of required.types) {
    if (declared.get(name)?.file === persistence.file) continue;
    problems.push({
      rule: "manifest",
      file: persistence.file,
      message: `no type-equiv block declares ${name}, which scripts/doc-sync/manifest.ts requires`,
      fix: `add a \`\`\`ts type-equiv block for each type the manifest requires (${FIX_TYPE_EQUIV})`,
    });
  }
  const present = new Set(persistence.regions.map((r) => r.name));
  for (const name of required.regions) {
    if (present.has(name)) continue;
    problems.push({
      rule: "manifest",
      file: persistence.file,
      message: `the generated region ${name} is missing (<!-- BEGIN GENERATED ${name} --> … <!-- END GENERATED ${name} -->)`,
      fix: `add the two marker lines, then ${FIX_REGION}`,
    });
  }
  return problems;
}

/**
 * The region rule: every generated region of every document equals what the renderer gives now;
 * a region of a name no renderer has is an error too.
 */
export function checkRegions(
  docs: readonly MarkdownDoc[],
  rendered: Readonly<Record<string, string>>,
): Problem[] {
  const problems: Problem[] = [];
  for (const doc of docs) {
    for (const region of doc.regions) {
      const expected = rendered[region.name];
      if (expected === undefined) {
        problems.push({
          rule: "region",
          file: doc.file,
          line: region.beginLine,
          message: `generated region ${region.name} has no renderer (known: ${Object.keys(rendered).join(", ")})`,
          fix: "rename the region to a known one, or remove its markers",
        });
        continue;
      }
      if (region.content === expected) continue;
      const line = region.beginLine + 1 + firstDifference(region.content, expected);
      problems.push({
        rule: "region",
        file: doc.file,
        line,
        message: `generated region ${region.name} differs from what ${DOC_REGION_GENERATOR} renders from the schema now (first difference on this line)`,
        fix: FIX_REGION,
      });
    }
  }
  return problems;
}

/** The generated-code rule: each file `npm run generate` would change is a problem. */
export function checkGeneratedDrift(drift: readonly Drift[], generatedDir: string): Problem[] {
  return drift.map((d) => ({
    rule: "generated-drift" as const,
    file: `${generatedDir}/${d.path}`,
    message:
      d.kind === "stale"
        ? "is no longer generated from the schema"
        : d.kind === "missing"
          ? "is missing"
          : "differs from what the schema gives (the docs are checked against the schema)",
    fix: FIX_GENERATE,
  }));
}

/** The 0-based index of the first line where two texts differ. */
function firstDifference(actual: string, expected: string): number {
  const a = splitLines(actual);
  const b = splitLines(expected);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
