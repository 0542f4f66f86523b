// Renders generated/types.gen.ts: one immutable TypeScript type per titled root schema.
import { posix } from "node:path";
import { compile, type JSONSchema } from "json-schema-to-typescript";
import { generatedHeader } from "./lib/header.js";
import { makeReadonly } from "./lib/readonly.js";
import { rootSchemas, type SchemaSet } from "./lib/schema-set.js";

/** The name of the synthetic schema that references every root; it is removed from the output. */
const ROOT_NAME = "SeedlineGeneratedTypesRoot";

/**
 * Renders every titled root schema of `set` into one module of `readonly` declarations.
 * `$ref`s are resolved from the in-memory set (never from disk), so a check run sees exactly `set`.
 * @throws Error when a `$ref` names a file outside the set, or when two schemas produce one name.
 */
export async function renderTypes(set: SchemaSet): Promise<string> {
  const roots = rootSchemas(set);
  const root = {
    title: ROOT_NAME,
    type: "object",
    additionalProperties: false,
    properties: Object.fromEntries(roots.map((r) => [r.path, { $ref: r.path }])),
  };
  const cwd = posix.join("/", "seedline-schema");
  const compiled = await compile(root as JSONSchema, ROOT_NAME, {
    cwd,
    bannerComment: "",
    additionalProperties: false,
    declareExternallyReferenced: true,
    unknownAny: true,
    strictIndexSignatures: true,
    format: true,
    style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
    $refOptions: {
      resolve: {
        http: false,
        file: {
          order: 1,
          canRead: true,
          read: (file: { url: string }) => readFromSet(set, cwd, file.url),
        },
      },
    },
  });
  const body = removeRoot(compiled);
  assertNoRenamedDuplicates(body);
  return (
    generatedHeader({
      generator: "scripts/render-types.ts",
      sources: ["schema/**/*.schema.json"],
      comment: "//",
    }) + makeReadonly(body)
  );
}

function readFromSet(set: SchemaSet, cwd: string, url: string): string {
  const path = decodeURI(url.replace(/^file:\/\//, ""));
  const key = posix.relative(cwd, path);
  if (key.startsWith("..") || !set.files.has(key)) {
    throw new Error(`expected $ref to name a file of the schema folder, got ${url}`);
  }
  // A fresh copy each time: the compiler annotates the objects it is given.
  return JSON.stringify(set.files.get(key));
}

function removeRoot(text: string): string {
  const start = text.indexOf(`export interface ${ROOT_NAME} {`);
  if (start < 0) throw new Error(`expected the synthetic ${ROOT_NAME} in the compiler output`);
  const end = text.indexOf("\n}\n", start);
  return (text.slice(0, start) + text.slice(end + 3)).replace(/^\n+/, "");
}

/** json-schema-to-typescript renames a second schema with a taken name to `Name1`; refuse that. */
function assertNoRenamedDuplicates(text: string): void {
  const names = new Set([...text.matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]));
  for (const name of names) {
    const base = name?.replace(/\d+$/, "");
    if (base !== undefined && base !== name && names.has(base)) {
      throw new Error(
        `expected each generated type name once, got ${base} and ${name}: give the second schema its own title, or $ref the first`,
      );
    }
  }
}
