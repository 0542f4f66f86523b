// Renders generated/validators.gen.ts: ajv validators compiled ahead of time, typed as guards.
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import { generatedHeader } from "./lib/header.js";
import { rootSchemas, type SchemaSet, schemaDocuments } from "./lib/schema-set.js";

/** The options every seedline validator is compiled with (also used by tests that compile at run time). */
export const AJV_OPTIONS = {
  strict: true,
  discriminator: true,
  allErrors: false,
  // Patterns count UTF-16 units, as session ids are specified.
  unicodeRegExp: false,
  // The annotation that marks the text search reads (scripts/render-search-fields.ts); no assertion.
  keywords: ["searchable"] as string[],
} as const;

/** An ajv instance holding every schema of `set`, for generators and tests that need one live. */
export function ajvForSchemaSet(set: SchemaSet, code?: { source: true; esm: true }): Ajv2020 {
  const ajv = new Ajv2020({ ...AJV_OPTIONS, ...(code === undefined ? {} : { code }) });
  for (const [path, schema] of schemaDocuments(set)) {
    try {
      ajv.addSchema(schema);
    } catch (cause) {
      throw new Error(`expected ${path} to be a valid strict JSON Schema`, { cause });
    }
  }
  return ajv;
}

/**
 * Renders one validator per titled root schema, named `validate<Title>` and typed as
 * `Validator<Title>`. ajv's ESM output still `require`s its runtime helpers; those calls are
 * given a module-scoped `require` (see {@link withRequireShim}).
 */
export function renderValidators(set: SchemaSet): string {
  const roots = rootSchemas(set);
  const ajv = ajvForSchemaSet(set, { source: true, esm: true });
  const internal = (title: string) => `__validate${title}`;
  const code = standalone.default(
    ajv,
    Object.fromEntries(roots.map((r) => [internal(r.title), r.id])),
  );
  const { imports, body } = withRequireShim(code);
  const typed = roots
    .map(
      (r) =>
        `/** Validates a {@link ${r.title}} (${r.path}). */\n` +
        `export const validate${r.title}: Validator<${r.title}> = ${internal(r.title)};`,
    )
    .join("\n");
  return [
    generatedHeader({
      generator: "scripts/render-validators.ts",
      sources: ["schema/**/*.schema.json"],
      comment: "//",
    }).trimEnd(),
    "// @ts-nocheck -- ajv's generated code is checked by ajv, not by the compiler; the exports are typed.",
    "",
    'import type { ErrorObject } from "ajv";',
    `import type { ${roots.map((r) => r.title).join(", ")} } from "./types.gen.js";`,
    ...imports,
    "",
    "/** A generated validator: a type guard that leaves the errors of its last failed call on `errors`. */",
    "export interface Validator<T> {",
    "  (value: unknown): value is T;",
    "  errors?: ErrorObject[] | null;",
    "}",
    "",
    // ajv exports its functions under the internal names, mid-line after other statements; only
    // the typed names are public (test/consumer-package.test.ts checks the built module's exports).
    hideInternalExports(body),
    "",
    typed,
    "",
  ].join("\n");
}

/**
 * Turns ajv's `export const __validateX = validateN;` statements into module-local constants.
 * ajv joins statements with `;` on one line, so the match is not anchored to a line start.
 * @throws Error when an internal name would still be exported.
 */
export function hideInternalExports(body: string): string {
  const hidden = body.replace(/\bexport const (__validate\w+)\b/g, "const $1");
  if (/(?:^|[;}])\s*export\s/m.test(hidden)) {
    throw new Error(
      "expected ajv's standalone output to export only __validate* names, found another export",
    );
  }
  return hidden;
}

/**
 * Makes ajv's standalone ESM output loadable as ESM: it still calls `require` for its runtime
 * helpers (ucs2length, equal…), which ESM modules do not have. A module-scoped `require` made by
 * `createRequire` keeps CommonJS semantics exactly (`require(x).default`), whatever the loader's
 * default-import interop does.
 */
export function withRequireShim(code: string): { imports: string[]; body: string } {
  const body = code.replace(/^"use strict";\n?/, "");
  if (!/\brequire\(/.test(body)) return { imports: [], body };
  return {
    imports: [
      'import { createRequire } from "node:module";',
      "",
      "const require = createRequire(import.meta.url);",
    ],
    body,
  };
}
