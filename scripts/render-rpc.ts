// Renders the JSON-RPC method table and error table (schema/rpc/methods.json, errors.json) into
// generated/rpc-methods.gen.ts, rpc-errors.gen.ts and the typed client's rpc-client.gen.ts,
// after checking both documents.
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { compile, type JSONSchema } from "json-schema-to-typescript";
import { generatedHeader } from "./lib/header.js";
import { makeReadonly } from "./lib/readonly.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";

const METHODS_DOC = "rpc/methods.json";
const METHODS_SCHEMA = "rpc/methods.schema.json";
const ERRORS_DOC = "rpc/errors.json";
const ERRORS_SCHEMA = "rpc/errors.schema.json";
/** Paths inside methods.json are relative to the folder that holds it. */
const RPC_DIR = "rpc/";

/** Every request is validated and every handler wrapped, so every method may return these. */
const UNIVERSAL_ERRORS = ["INVALID_PARAMS", "INTERNAL"] as const;

/** One entry of methods.json. */
export interface RpcMethodDoc {
  readonly method: string;
  readonly params: string;
  readonly result: string;
  readonly errors: readonly string[];
  readonly orderingKey?: string;
  readonly summary: string;
}

/** One entry of methods.json's `notifications`: a message the server sends, never answered. */
export interface RpcNotificationDoc {
  readonly method: string;
  readonly params: string;
  readonly summary: string;
}

/** A notification entry with the names the generated code uses. */
export interface RpcNotification extends RpcNotificationDoc {
  /** The wire name in camelCase. */
  readonly clientName: string;
  /** The params schema's title (the type; its validator is `validate<title>`). */
  readonly paramsTitle: string;
}

/** A closed object schema from errors.json (restricted by errors.schema.json). */
export type ErrorDataSchema = Readonly<Record<string, unknown>> & {
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required: readonly string[];
};

/** A JSON-RPC protocol error of errors.json. */
export interface RpcProtocolErrorDoc {
  readonly name: string;
  readonly jsonrpcCode: number;
  readonly when: string;
  readonly data?: ErrorDataSchema;
}

/** A domain error of errors.json, matched by clients on `data.code`. */
export interface RpcDomainErrorDoc {
  readonly code: string;
  readonly jsonrpcCode: number;
  readonly when: string;
  readonly data: ErrorDataSchema;
}

/** errors.json. */
export interface RpcErrorTableDoc {
  readonly protocolErrors: readonly RpcProtocolErrorDoc[];
  readonly domainErrors: readonly RpcDomainErrorDoc[];
}

/** A method entry with the names the generated code uses. */
export interface RpcMethod extends RpcMethodDoc {
  /** The typed client's method name: the wire name in camelCase. */
  readonly clientName: string;
  /** The params schema's title (the type; its validator is `validate<title>`). */
  readonly paramsTitle: string;
  /** The result schema's title. */
  readonly resultTitle: string;
}

/** Both tables, checked against their schemas and against each other. */
export interface RpcTables {
  readonly methods: readonly RpcMethod[];
  readonly notifications: readonly RpcNotification[];
  readonly errors: RpcErrorTableDoc;
}

/**
 * Reads methods.json and errors.json from `set` and checks them: each against its schema (strict
 * ajv), the error table for unique codes and numbers and data schemas whose `code` is the entry's,
 * and every method for its params/result files, their titles, its error codes (known, in table
 * order, INVALID_PARAMS and INTERNAL included) and its orderingKey (a params member).
 * @throws Error naming the document path, what was expected and what was found.
 */
export function readRpcTables(set: SchemaSet): RpcTables {
  // One ajv for every check: each instance compiles the draft 2020-12 meta-schema again (~0.2 s).
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  const errors = checkErrorTable(
    ajv,
    validateDocument(ajv, set, ERRORS_DOC, ERRORS_SCHEMA) as unknown as RpcErrorTableDoc,
  );
  const doc = validateDocument(ajv, set, METHODS_DOC, METHODS_SCHEMA) as {
    methods: readonly RpcMethodDoc[];
    notifications?: readonly RpcNotificationDoc[];
  };
  const order = new Map(errors.domainErrors.map((e, i) => [e.code, i]));
  const seen = new Map<string, string>();
  const methods = doc.methods.map((entry, i): RpcMethod => {
    const at = `/methods/${i}`;
    const clientName = camelCase(entry.method);
    for (const name of new Set([entry.method, clientName])) {
      const clash = seen.get(name);
      if (clash !== undefined) {
        throw new Error(
          `expected each method (and its client name) once in ${METHODS_DOC}, got "${name}" at ${clash} and ${at}`,
        );
      }
      seen.set(name, at);
    }
    const paramsTitle = checkMethodSchema(set, entry, "params", at);
    const resultTitle = checkMethodSchema(set, entry, "result", at);
    checkMethodErrors(entry, at, order);
    if (entry.orderingKey !== undefined) {
      const params = set.files.get(RPC_DIR + entry.params) as { properties?: object };
      if (!Object.hasOwn(params.properties ?? {}, entry.orderingKey)) {
        throw new Error(
          `expected ${at}/orderingKey of ${METHODS_DOC} to name a member of ${RPC_DIR}${entry.params}, got "${entry.orderingKey}"`,
        );
      }
    }
    return { ...entry, clientName, paramsTitle, resultTitle };
  });
  const notifications = (doc.notifications ?? []).map((entry, i): RpcNotification => {
    const at = `/notifications/${i}`;
    const clientName = camelCase(entry.method);
    for (const name of new Set([entry.method, clientName])) {
      const clash = seen.get(name);
      if (clash !== undefined) {
        throw new Error(
          `expected each method and notification (and its client name) once in ${METHODS_DOC}, got "${name}" at ${clash} and ${at}`,
        );
      }
      seen.set(name, at);
    }
    const paramsTitle = checkMethodSchema(set, entry, "params", at);
    return { ...entry, clientName, paramsTitle };
  });
  return { methods, notifications, errors };
}

/**
 * Renders generated/rpc-methods.gen.ts: the `RpcMethods` type map, `RPC_METHODS` (the dispatch and
 * validation table, one entry per method with its generated params and result validators) and
 * `RPC_METHOD_NAMES` in table order.
 * @throws Error as {@link readRpcTables} does.
 */
export function renderRpcMethods(set: SchemaSet): string {
  const { methods, notifications } = readRpcTables(set);
  const types = [
    ...methods.flatMap((m) => [m.paramsTitle, m.resultTitle]),
    ...notifications.map((n) => n.paramsTitle),
  ];
  const validators = types.map((t) => `validate${t}`);
  const out: string[] = [
    generatedHeader({
      generator: "scripts/render-rpc.ts",
      sources: [`schema/${METHODS_DOC}`, `schema/${ERRORS_DOC}`],
      comment: "//",
    }).trimEnd(),
    "",
    'import type { RpcErrorCode } from "./rpc-errors.gen.js";',
    `import type {\n${types.map((t) => `  ${t},\n`).join("")}} from "./types.gen.js";`,
    'import type { Validator } from "./validators.gen.js";',
    `import {\n${validators.map((v) => `  ${v},\n`).join("")}} from "./validators.gen.js";`,
    "",
    "/** Every JSON-RPC method: its params and result types and the domain error codes it may return. */",
    "export interface RpcMethods {",
  ];
  for (const m of methods) {
    out.push(
      `  /** ${jsdocText(m.summary)} */`,
      `  readonly ${propertyKey(m.method)}: {`,
      `    readonly params: ${m.paramsTitle};`,
      `    readonly result: ${m.resultTitle};`,
      ...wrapList("    readonly errors:", m.errors, { open: "", separator: " | ", close: ";" }),
      "  };",
    );
  }
  out.push(
    "}",
    "",
    "/** A method's wire name. */",
    "export type RpcMethodName = keyof RpcMethods;",
    "/** The params of method `M`. */",
    'export type RpcParams<M extends RpcMethodName> = RpcMethods[M]["params"];',
    "/** The result of method `M`. */",
    'export type RpcResult<M extends RpcMethodName> = RpcMethods[M]["result"];',
    "/** The domain error codes method `M` may return. */",
    'export type RpcMethodErrorCode<M extends RpcMethodName> = RpcMethods[M]["errors"];',
    "",
    "/** What the server needs to dispatch and validate one method, and the typed client to expose it. */",
    "export interface RpcMethodSpec<M extends RpcMethodName> {",
    "  /** The wire name. */",
    "  readonly method: M;",
    "  /** The typed client's method name: the wire name in camelCase. */",
    "  readonly clientName: string;",
    "  /** The generated params validator; a failure is INVALID_PARAMS listing its errors. */",
    "  readonly validateParams: Validator<RpcParams<M>>;",
    "  /** The generated result validator, for tests and clients that check responses. */",
    "  readonly validateResult: Validator<RpcResult<M>>;",
    "  /** The domain error codes the method may return, in the error table's order. */",
    "  readonly errors: readonly (RpcMethodErrorCode<M> & RpcErrorCode)[];",
    "  /**",
    "   * The params member naming what the request works on: requests with the same value run in",
    "   * arrival order, others concurrently. Absent: the request is never queued.",
    "   */",
    "  readonly orderingKey?: keyof RpcParams<M> & string;",
    "  /** One sentence: what the method does. */",
    "  readonly summary: string;",
    "}",
    "",
    "/** The method table, keyed by wire name: it drives dispatch, params validation and the typed client. */",
    "export const RPC_METHODS = {",
  );
  for (const m of methods) {
    out.push(
      `  ${propertyKey(m.method)}: {`,
      `    method: ${JSON.stringify(m.method)},`,
      `    clientName: ${JSON.stringify(m.clientName)},`,
      `    validateParams: validate${m.paramsTitle},`,
      `    validateResult: validate${m.resultTitle},`,
      ...wrapList("    errors:", m.errors, { open: "[", separator: ", ", close: "]," }),
      ...(m.orderingKey === undefined
        ? []
        : [`    orderingKey: ${JSON.stringify(m.orderingKey)},`]),
      `    summary: ${JSON.stringify(m.summary)},`,
      "  },",
    );
  }
  out.push(
    "} as const satisfies { readonly [M in RpcMethodName]: RpcMethodSpec<M> };",
    "",
    ...renderParamBounds(set, methods),
    "/** Every method's wire name, in table order. */",
    "export const RPC_METHOD_NAMES = [",
    ...methods.map((m) => `  ${JSON.stringify(m.method)},`),
    "] as const satisfies readonly RpcMethodName[];",
    "",
    "/** Whether `name` is a method of the table (own keys only, so `constructor` is not). */",
    "export function isRpcMethodName(name: string): name is RpcMethodName {",
    "  return Object.hasOwn(RPC_METHODS, name);",
    "}",
    "",
    "/**",
    " * Each method's wire name under its client name, so that code can key a map by wire name",
    " * (`[RPC_METHOD.sessionCreate]: …`) without spelling the wire string.",
    " */",
    "export const RPC_METHOD = {",
    ...methods.map((m) => `  ${m.clientName}: ${JSON.stringify(m.method)},`),
    "} as const satisfies { readonly [clientName: string]: RpcMethodName };",
    "",
    "/** Every notification the server sends: its params type. */",
    "export interface RpcNotifications {",
  );
  for (const n of notifications) {
    out.push(
      `  /** ${jsdocText(n.summary)} */`,
      `  readonly ${propertyKey(n.method)}: { readonly params: ${n.paramsTitle} };`,
    );
  }
  out.push(
    "}",
    "",
    "/** A notification's wire name. */",
    "export type RpcNotificationName = keyof RpcNotifications;",
    "/** The params of notification `N`. */",
    'export type RpcNotificationParams<N extends RpcNotificationName> = RpcNotifications[N]["params"];',
    "",
    "/** What a client needs to recognise and check one notification. */",
    "export interface RpcNotificationSpec<N extends RpcNotificationName> {",
    "  /** The wire name. */",
    "  readonly method: N;",
    "  /** The generated params validator. */",
    "  readonly validateParams: Validator<RpcNotificationParams<N>>;",
    "  /** One sentence: what the notification carries. */",
    "  readonly summary: string;",
    "}",
    "",
    "/** The notification table, keyed by wire name. */",
    "export const RPC_NOTIFICATIONS = {",
  );
  for (const n of notifications) {
    out.push(
      `  ${propertyKey(n.method)}: {`,
      `    method: ${JSON.stringify(n.method)},`,
      `    validateParams: validate${n.paramsTitle},`,
      `    summary: ${JSON.stringify(n.summary)},`,
      "  },",
    );
  }
  out.push(
    "} as const satisfies { readonly [N in RpcNotificationName]: RpcNotificationSpec<N> };",
    "",
    "/** Each notification's wire name under its camelCase name. */",
    "export const RPC_NOTIFICATION = {",
    ...notifications.map((n) => `  ${n.clientName}: ${JSON.stringify(n.method)},`),
    "} as const satisfies { readonly [clientName: string]: RpcNotificationName };",
    "",
  );
  return out.join("\n");
}

/** The bounds of an integer params member that code outside the schema needs. */
interface ParamBounds {
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

/**
 * Renders `RPC_PARAM_BOUNDS`: for each method, the `minimum`, `maximum` and `default` of its
 * top-level integer params members that have a default or a maximum below 2^53 - 1, so that code
 * applying a default or checking a bound outside the wire (the SDK) reads them instead of
 * restating them.
 */
function renderParamBounds(set: SchemaSet, methods: readonly RpcMethod[]): string[] {
  const out = [
    "/**",
    " * The bounds of integer params members that have a default or a real maximum, per method, as",
    " * the params schemas state them (the SDK applies and checks the same ones).",
    " */",
    "export const RPC_PARAM_BOUNDS = {",
  ];
  for (const m of methods) {
    const params = set.files.get(RPC_DIR + m.params) as {
      properties?: Record<string, Record<string, unknown>>;
    };
    const members: string[] = [];
    for (const [name, member] of Object.entries(params.properties ?? {})) {
      if (member.type !== "integer") continue;
      const bounds: ParamBounds = {
        ...(typeof member.minimum === "number" ? { minimum: member.minimum } : {}),
        ...(typeof member.maximum === "number" && member.maximum < Number.MAX_SAFE_INTEGER
          ? { maximum: member.maximum }
          : {}),
        ...(typeof member.default === "number" ? { default: member.default } : {}),
      };
      if (bounds.maximum === undefined && bounds.default === undefined) continue;
      const text = Object.entries(bounds).map(([key, value]) => `${key}: ${value}`);
      members.push(`    ${propertyKey(name)}: { ${text.join(", ")} },`);
    }
    if (members.length > 0) out.push(`  ${propertyKey(m.method)}: {`, ...members, "  },");
  }
  out.push(
    "} as const satisfies {",
    "  readonly [M in RpcMethodName]?: {",
    "    readonly [K in keyof RpcParams<M>]?: {",
    "      readonly minimum?: number;",
    "      readonly maximum?: number;",
    "      readonly default?: number;",
    "    };",
    "  };",
    "};",
    "",
  );
  return out;
}

/**
 * Renders generated/rpc-client.gen.ts: `RpcClientMethods`, an abstract class with one typed
 * method per table row (named by its `clientName`, documented by its summary) that forwards to
 * the one abstract `request`; a concrete client supplies the transport. A method whose params
 * schema requires nothing takes its params optionally.
 * @throws Error as {@link readRpcTables} does.
 */
export function renderRpcClient(set: SchemaSet): string {
  const { methods } = readRpcTables(set);
  const out: string[] = [
    generatedHeader({
      generator: "scripts/render-rpc.ts",
      sources: [`schema/${METHODS_DOC}`],
      comment: "//",
    }).trimEnd(),
    "",
    'import type { RpcMethodName, RpcMethods } from "./rpc-methods.gen.js";',
    "",
    "/**",
    " * One typed method per JSON-RPC method of the table. A subclass supplies the transport by",
    " * implementing `request`; each method here only names its wire method and forwards.",
    " */",
    "export abstract class RpcClientMethods {",
    "  /** Sends one request; resolves with its result, rejects on an error response. */",
    "  protected abstract request<M extends RpcMethodName>(",
    "    method: M,",
    '    params: RpcMethods[M]["params"],',
    '  ): Promise<RpcMethods[M]["result"]>;',
  ];
  for (const m of methods) {
    const key = JSON.stringify(m.method);
    const params = set.files.get(RPC_DIR + m.params) as { required?: readonly string[] };
    const optional = (params.required ?? []).length === 0;
    const paramType = `RpcMethods[${key}]["params"]`;
    const head = `  ${m.clientName}(params: ${paramType}${optional ? " = {}" : ""}): Promise<RpcMethods[${key}]["result"]> {`;
    out.push(
      "",
      `  /** ${jsdocText(m.summary)} */`,
      ...(head.length <= 100
        ? [head]
        : [
            `  ${m.clientName}(`,
            `    params: ${paramType}${optional ? " = {}" : ""},`,
            `  ): Promise<RpcMethods[${key}]["result"]> {`,
          ]),
      `    return this.request(${key}, params);`,
      "  }",
    );
  }
  out.push("}", "");
  return out.join("\n");
}

/**
 * Renders generated/rpc-errors.gen.ts: the protocol error numbers, `RPC_ERROR_CODES` (data.code →
 * fixed JSON-RPC number), `RpcErrorCode`, and `RpcErrorData` with one interface per error's
 * `data`. Each data schema is compiled by json-schema-to-typescript and made readonly, like
 * types.gen.ts; the `when` sentence becomes its JSDoc.
 * @throws Error as {@link readRpcTables} does.
 */
export async function renderRpcErrors(set: SchemaSet): Promise<string> {
  const { errors } = readRpcTables(set);
  const { protocolErrors, domainErrors } = errors;
  const withData = protocolErrors.filter(
    (e): e is RpcProtocolErrorDoc & { data: ErrorDataSchema } => e.data !== undefined,
  );
  const dataTypes: string[] = [];
  for (const e of withData) dataTypes.push(await compileData(e.data, dataTypeName(e.name), e.when));
  for (const e of domainErrors)
    dataTypes.push(await compileData(e.data, dataTypeName(e.code), e.when));
  const out: string[] = [
    generatedHeader({
      generator: "scripts/render-rpc.ts",
      sources: [`schema/${ERRORS_DOC}`],
      comment: "//",
    }).trimEnd(),
    "",
    "/** JSON-RPC 2.0 protocol errors, answered before any method runs; they carry no `data.code`. */",
    "export const JSONRPC_PROTOCOL_ERRORS = {",
    ...protocolErrors.flatMap((e) => [
      `  /** ${jsdocText(e.when)} */`,
      `  ${e.name}: ${e.jsonrpcCode},`,
    ]),
    "} as const;",
    "",
    "/** A protocol error's name. */",
    "export type JsonRpcProtocolError = keyof typeof JSONRPC_PROTOCOL_ERRORS;",
    "",
    "/** The `data` of the protocol errors that carry one (the others have no `data` member). */",
    "export interface JsonRpcProtocolErrorData {",
    ...withData.map((e) => `  readonly ${e.name}: ${dataTypeName(e.name)};`),
    "}",
    "",
    "/** seedline's domain errors: `data.code` → its fixed JSON-RPC error code. Clients match on `data.code`. */",
    "export const RPC_ERROR_CODES = {",
    ...domainErrors.flatMap((e) => [
      `  /** ${jsdocText(e.when)} */`,
      `  ${e.code}: ${e.jsonrpcCode},`,
    ]),
    "} as const;",
    "",
    "/** A domain error code, the string in `data.code`. */",
    "export type RpcErrorCode = keyof typeof RPC_ERROR_CODES;",
    "",
    "/** Every domain error code, in the error table's order. */",
    "export const RPC_ERROR_CODE_NAMES = [",
    ...domainErrors.map((e) => `  ${JSON.stringify(e.code)},`),
    "] as const satisfies readonly RpcErrorCode[];",
    "",
    "/** Whether `value` is a domain error code (own keys only), e.g. a response's `data.code`. */",
    "export function isRpcErrorCode(value: unknown): value is RpcErrorCode {",
    '  return typeof value === "string" && Object.hasOwn(RPC_ERROR_CODES, value);',
    "}",
    "",
    "/** The whole `data` member of each domain error, `code` included. */",
    "export interface RpcErrorData {",
    ...domainErrors.map((e) => `  readonly ${e.code}: ${dataTypeName(e.code)};`),
    "}",
    "",
    makeReadonly(dataTypes.join("")).trimEnd(),
    "",
  ];
  return out.join("\n");
}

/** The generated RPC files, with paths relative to generated/. @throws Error as {@link readRpcTables} does. */
export async function renderRpcFiles(set: SchemaSet): Promise<{ path: string; content: string }[]> {
  return [
    { path: "rpc-client.gen.ts", content: renderRpcClient(set) },
    { path: "rpc-errors.gen.ts", content: await renderRpcErrors(set) },
    { path: "rpc-methods.gen.ts", content: renderRpcMethods(set) },
  ];
}

/** "session/create" → "sessionCreate"; "session/set_title" → "sessionSetTitle". */
export function camelCase(method: string): string {
  return method
    .split(/[/_-]/)
    .map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join("");
}

/** "INVALID_PARAMS" → "InvalidParamsErrorData". */
function dataTypeName(code: string): string {
  const pascal = code
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
  return `${pascal}ErrorData`;
}

function validateDocument(
  ajv: Ajv2020,
  set: SchemaSet,
  docPath: string,
  schemaPath: string,
): unknown {
  const doc = schemaFile(set, docPath);
  const schema = structuredClone(schemaFile(set, schemaPath)) as object;
  let validate: ReturnType<Ajv2020["compile"]>;
  try {
    validate = ajv.compile(schema);
  } catch (cause) {
    throw new Error(`expected ${schemaPath} to be a valid strict JSON Schema`, { cause });
  }
  if (!validate(doc)) {
    throw new Error(
      `expected ${docPath} to match ${schemaPath}, got: ${formatAjvErrors(validate.errors ?? [])}`,
    );
  }
  return doc;
}

function formatAjvErrors(errors: readonly ErrorObject[]): string {
  return errors
    .map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}${paramsNote(e)}`)
    .join("; ");
}

function paramsNote(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (typeof p.additionalProperty === "string") return ` ("${p.additionalProperty}")`;
  return "";
}

function checkErrorTable(ajv: Ajv2020, table: RpcErrorTableDoc): RpcErrorTableDoc {
  const numbers = new Map<number, string>();
  const names = new Set<string>();
  const entries = [
    ...table.protocolErrors.map((e, i) => ({ name: e.name, at: `/protocolErrors/${i}`, e })),
    ...table.domainErrors.map((e, i) => ({ name: e.code, at: `/domainErrors/${i}`, e })),
  ];
  for (const { name, at, e } of entries) {
    if (names.has(name)) {
      throw new Error(
        `expected each error name once in ${ERRORS_DOC}, got "${name}" again at ${at}`,
      );
    }
    names.add(name);
    const clash = numbers.get(e.jsonrpcCode);
    if (clash !== undefined) {
      throw new Error(
        `expected each JSON-RPC code once in ${ERRORS_DOC}, got ${e.jsonrpcCode} for ${clash} and ${name} (${at})`,
      );
    }
    numbers.set(e.jsonrpcCode, name);
    if (e.data !== undefined) checkDataSchema(ajv, e.data, `${at}/data`);
  }
  table.domainErrors.forEach((e, i) => {
    const code = e.data.properties.code;
    if (code?.const !== e.code || !e.data.required.includes("code")) {
      throw new Error(
        `expected /domainErrors/${i}/data of ${ERRORS_DOC} to require "code" as {"const": "${e.code}"}, got ${JSON.stringify(code)}`,
      );
    }
  });
  return table;
}

function checkDataSchema(ajv: Ajv2020, schema: ErrorDataSchema, at: string): void {
  try {
    ajv.compile(structuredClone(schema) as object);
  } catch (cause) {
    throw new Error(`expected ${at} of ${ERRORS_DOC} to be a valid strict JSON Schema`, { cause });
  }
}

function checkMethodSchema(
  set: SchemaSet,
  entry: Pick<RpcMethodDoc, "method" | "params"> & Partial<Pick<RpcMethodDoc, "result">>,
  kind: "params" | "result",
  at: string,
): string {
  const expected = `methods/${entry.method.replaceAll(/[/_]/g, "-")}.${kind}.schema.json`;
  if (entry[kind] !== expected) {
    throw new Error(
      `expected ${at}/${kind} of ${METHODS_DOC} to be "${expected}" (the method name with "/" and "_" replaced by "-"), got "${entry[kind]}"`,
    );
  }
  const path = RPC_DIR + (entry[kind] ?? "");
  if (!set.files.has(path)) {
    throw new Error(
      `expected ${path} (named by ${at}/${kind} of ${METHODS_DOC}) in the schema folder, found no such file`,
    );
  }
  const schema = set.files.get(path) as { title?: unknown; type?: unknown };
  if (typeof schema?.title !== "string") {
    throw new Error(`expected a string title in ${path}, got ${JSON.stringify(schema?.title)}`);
  }
  if (schema.type !== "object") {
    throw new Error(
      `expected ${path} to describe an object (params are by name, results are objects), got type ${JSON.stringify(schema.type)}`,
    );
  }
  return schema.title;
}

function checkMethodErrors(
  entry: RpcMethodDoc,
  at: string,
  order: ReadonlyMap<string, number>,
): void {
  let last = -1;
  entry.errors.forEach((code, j) => {
    const index = order.get(code);
    if (index === undefined) {
      throw new Error(
        `expected ${at}/errors/${j} of ${METHODS_DOC} to name a domain error of ${ERRORS_DOC}, got "${code}"`,
      );
    }
    if (index < last) {
      throw new Error(
        `expected the errors of "${entry.method}" in ${METHODS_DOC} in the error table's order, got "${code}" after "${entry.errors[j - 1]}"`,
      );
    }
    last = index;
  });
  for (const code of UNIVERSAL_ERRORS) {
    if (!entry.errors.includes(code)) {
      throw new Error(
        `expected ${at}/errors of ${METHODS_DOC} to include ${code} (every request is validated and every handler wrapped), got ${JSON.stringify(entry.errors)}`,
      );
    }
  }
}

async function compileData(schema: ErrorDataSchema, name: string, when: string): Promise<string> {
  // The `when` sentence documents the type unless the data schema has its own description.
  const input = { description: when, ...structuredClone(schema) } as JSONSchema;
  return compile(input, name, {
    bannerComment: "",
    additionalProperties: false,
    declareExternallyReferenced: true,
    unknownAny: true,
    ignoreMinAndMaxItems: true,
    format: true,
    style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
  });
}

/**
 * `lead` followed by the quoted items on one line when it fits in 100 columns, else one item per
 * line (a union with leading `|`, an array with trailing commas), as prettier would print them.
 */
function wrapList(
  lead: string,
  items: readonly string[],
  { open, separator, close }: { open: string; separator: string; close: string },
): string[] {
  const quoted = items.map((i) => JSON.stringify(i));
  const line = `${lead} ${open}${quoted.join(separator)}${close}`;
  if (line.length <= 100) return [line];
  const indent = `${lead.match(/^ */)?.[0] ?? ""}  `;
  if (open === "") {
    return [
      lead,
      ...quoted.map((q, i) => `${indent}| ${q}${i === quoted.length - 1 ? close : ""}`),
    ];
  }
  return [`${lead} ${open}`, ...quoted.map((q) => `${indent}${q},`), `${indent.slice(2)}${close}`];
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function jsdocText(text: string): string {
  return text.replaceAll("*/", "*\\/");
}
