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
  const { imports, body } = withRequireShim(positionalContext(code));
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

/** ajv's signature of every validator function: its call context as one destructured object. */
const CONTEXT_SIGNATURE =
  /function (validate\d+)\(data, \{instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors=\{\}\}=\{\}\)/g;
/**
 * A call of a validator from another with a context of its own: `{instancePath:…,parentData:…,…}`.
 * The path is an expression that may hold calls and commas (a key escaped for a JSON pointer):
 * it runs to the first `,parentData:`, which no path expression holds.
 */
const CONTEXT_CALL =
  /\b(validate\d+)\(([^()]*?), \{instancePath:(.*?),parentData:([^,{}()]*),parentDataProperty:([^,{}()]*),rootData,dynamicAnchors\}\)/g;
/** A call that hands its own context on (a discriminator's branch). */
const PASSED_CONTEXT_CALL =
  /\b(validate\d+)\(([^()]*?), \{instancePath,parentData,parentDataProperty,rootData,dynamicAnchors\}\)/g;
/** The shared, empty `dynamicAnchors` of a call from outside (no schema declares a dynamic anchor). */
const NO_ANCHORS = "NO_DYNAMIC_ANCHORS";

/**
 * Passes ajv's call context (instancePath, parentData, parentDataProperty, rootData,
 * dynamicAnchors) as five arguments instead of one object, and gives calls from outside one
 * shared, frozen `dynamicAnchors`: ajv makes a context object for every nested call and two more
 * for every outside call (`{}` and its `dynamicAnchors` default), which cost a validation of
 * 100,000 events about a quarter of its time and most of what it allocates. Only the way the
 * context travels changes; every check and error is ajv's.
 * @throws Error when ajv's output holds a validator signature or a nested call of another form,
 *   or uses `dynamicAnchors` other than by passing it on (the shared object would then be wrong).
 */
export function positionalContext(code: string): string {
  const functions = code.match(/\bfunction validate\d+\(/g)?.length ?? 0;
  const signatures = code.match(CONTEXT_SIGNATURE)?.length ?? 0;
  if (signatures !== functions) {
    throw new Error(
      `expected every ajv validator to take its context as ajv 8 writes it, found ${functions - signatures} of ${functions} in another form`,
    );
  }
  if (/\bdynamicAnchors\s*[.[]/.test(code)) {
    throw new Error("expected ajv's validators to pass dynamicAnchors on only, found a use of it");
  }
  const positional = code
    .replace(
      CONTEXT_SIGNATURE,
      `function $1(data, instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors=${NO_ANCHORS})`,
    )
    .replace(CONTEXT_CALL, "$1($2, $3, $4, $5, rootData, dynamicAnchors)")
    .replace(
      PASSED_CONTEXT_CALL,
      "$1($2, instancePath, parentData, parentDataProperty, rootData, dynamicAnchors)",
    );
  const left = /\bvalidate\d+\([^()]*?, \{instancePath/.exec(positional);
  if (left !== null) {
    throw new Error(`expected every nested validator call to be rewritten, found ${left[0]}`);
  }
  return signatures === 0
    ? positional
    : positional.replace(/^("use strict";\n?)?/, `$1const ${NO_ANCHORS} = Object.freeze({});\n`);
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
