// Renders generated/event-catalogue.gen.ts: the vocabulary as data (types, surface eligibility, format version).
import { posix } from "node:path";
import { generatedHeader } from "./lib/header.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";

/** The schema of the `SessionEvent` union and of the header, relative to the schema folder. */
export const EVENT_UNION_PATH = "events/session-event.schema.json";
export const HEADER_PATH = "session/session-header.schema.json";

/** One row of the vocabulary, as read from the event schemas. */
export interface CatalogueEntry {
  readonly type: string;
  /** The generated event interface (the schema's title). */
  readonly typeName: string;
  /** The generated type of its `data`. */
  readonly dataTypeName: string;
  /** Whether the event carries `surfaceOp` (and may carry `sourceEventSeqs`). */
  readonly surface: boolean;
  readonly description: string;
  readonly schemaPath: string;
  /** The event's members, in the order its schema lists them. */
  readonly members: readonly string[];
}

interface ObjectSchema {
  readonly title?: string;
  readonly description?: string;
  readonly properties?: Record<string, { const?: unknown; title?: string }>;
  readonly required?: readonly string[];
}

/**
 * Reads the vocabulary, in the union's order, from `events/session-event.schema.json`.
 * @throws Error naming the file when a variant is not a closed object with a `type` const.
 */
export function readEventCatalogue(set: SchemaSet): CatalogueEntry[] {
  const union = schemaFile(set, EVENT_UNION_PATH) as { oneOf?: { $ref?: string }[] };
  if (!Array.isArray(union.oneOf)) throw new Error(`expected oneOf in ${EVENT_UNION_PATH}`);
  return union.oneOf.map((variant, i) => {
    if (typeof variant.$ref !== "string") {
      throw new Error(
        `expected a $ref at ${EVENT_UNION_PATH}#/oneOf/${i}, got ${JSON.stringify(variant)}`,
      );
    }
    const schemaPath = posix.join(posix.dirname(EVENT_UNION_PATH), variant.$ref);
    const schema = schemaFile(set, schemaPath) as ObjectSchema;
    const type = schema.properties?.type?.const;
    const dataTypeName = schema.properties?.data?.title;
    if (
      typeof type !== "string" ||
      typeof schema.title !== "string" ||
      typeof dataTypeName !== "string"
    ) {
      throw new Error(`expected ${schemaPath} to have a title, a "type" const and a titled "data"`);
    }
    const surface = schema.properties?.surfaceOp !== undefined;
    if (surface !== (schema.required?.includes("surfaceOp") ?? false)) {
      throw new Error(`expected surfaceOp in ${schemaPath} to be required where it is allowed`);
    }
    return {
      type,
      typeName: schema.title,
      dataTypeName,
      surface,
      description: schema.description ?? "",
      schemaPath,
      members: Object.keys(schema.properties ?? {}),
    };
  });
}

/**
 * The members of every event in one order, the order each event schema lists its own in (an
 * event holds some of them: the surface markers only where allowed).
 * @throws Error naming the schema whose members stand in another order than the others'.
 */
export function readEnvelopeMembers(entries: readonly CatalogueEntry[]): string[] {
  const order: string[] = [];
  for (const entry of entries) {
    let at = 0;
    for (const member of entry.members) {
      const found = order.indexOf(member);
      if (found === -1) order.splice(at++, 0, member);
      else if (found < at) {
        throw new Error(`expected ${entry.schemaPath} to list its members in the others' order`);
      } else at = found + 1;
    }
  }
  return order;
}

/** The session format version: the `const` of the header's `version`. */
export function readSessionFormatVersion(set: SchemaSet): number {
  const header = schemaFile(set, HEADER_PATH) as ObjectSchema;
  const version = header.properties?.version?.const;
  if (typeof version !== "number") {
    throw new Error(`expected ${HEADER_PATH}#/properties/version/const to be a number`);
  }
  return version;
}

/** Renders the catalogue module. */
export function renderEventCatalogue(set: SchemaSet): string {
  const entries = readEventCatalogue(set);
  const list = (values: string[]) =>
    `[\n${values.map((v) => `  ${JSON.stringify(v)},`).join("\n")}\n] as const`;
  const rows = entries
    .map(
      (e) =>
        `  {\n    type: ${JSON.stringify(e.type)},\n    typeName: ${JSON.stringify(e.typeName)},\n` +
        `    dataTypeName: ${JSON.stringify(e.dataTypeName)},\n    surface: ${e.surface},\n` +
        `    description: ${JSON.stringify(e.description)},\n  },`,
    )
    .join("\n");
  return `${generatedHeader({
    generator: "scripts/render-event-catalogue.ts",
    sources: [`schema/${EVENT_UNION_PATH}`, `schema/${HEADER_PATH}`],
    comment: "//",
  })}/** The session format version this build reads and writes (the header's \`version\`). */
export const SESSION_FORMAT_VERSION = ${readSessionFormatVersion(set)} as const;

/** Every event type of the vocabulary, in the order of the \`SessionEvent\` union. */
export const EVENT_TYPES = ${list(entries.map((e) => e.type))};

/** An event type of the vocabulary. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The event types that carry \`surfaceOp\` and so appear on the surface. */
export const SURFACE_ELIGIBLE_TYPES = ${list(entries.filter((e) => e.surface).map((e) => e.type))};

/** An event type that carries \`surfaceOp\`. */
export type SurfaceEligibleType = (typeof SURFACE_ELIGIBLE_TYPES)[number];

/**
 * The members of an event in the canonical order (each event schema's order), the order of every
 * stored line: \`sourceEventSeqs\` and \`surfaceOp\` only where an event has them.
 */
export const CANONICAL_EVENT_MEMBERS = ${list(readEnvelopeMembers(entries))};

/** The vocabulary with the generated type names and descriptions, for docs and tooling. */
export const EVENT_CATALOGUE = [
${rows}
] as const;
`;
}
