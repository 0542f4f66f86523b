// Renders generated/search-fields.gen.ts: which members of events and content blocks text search reads (`"searchable": true`).

import { generatedHeader } from "./lib/header.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";
import { readEventCatalogue } from "./render-event-catalogue.js";

/** The content block union, whose variants are told apart by their `type` const. */
export const CONTENT_BLOCK_PATH = "common/content-block.schema.json";

interface PropertySchema {
  readonly searchable?: unknown;
  readonly const?: unknown;
}
interface ObjectSchema {
  readonly properties?: Record<string, PropertySchema & ObjectSchema>;
}

/** The members of an object schema marked `"searchable": true`, in schema order. */
function searchableMembers(schema: ObjectSchema | undefined): string[] {
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => property.searchable === true)
    .map(([name]) => name);
}

/**
 * The searchable members of each event type's `data` (types without any are left out) and of each
 * content block type. A searchable string member is searched as it is; a searchable member that
 * holds content blocks is searched through the blocks' own searchable members.
 */
export function readSearchFields(set: SchemaSet): {
  events: [string, string[]][];
  blocks: [string, string[]][];
} {
  const events = readEventCatalogue(set)
    .map((entry): [string, string[]] => {
      const schema = schemaFile(set, entry.schemaPath) as ObjectSchema;
      return [entry.type, searchableMembers(schema.properties?.data)];
    })
    .filter(([, members]) => members.length > 0);
  const union = set.files.has(CONTENT_BLOCK_PATH)
    ? (schemaFile(set, CONTENT_BLOCK_PATH) as { oneOf?: ObjectSchema[] })
    : {};
  const blocks = (union.oneOf ?? [])
    .map((variant): [string, string[]] => [
      String(variant.properties?.type?.const),
      searchableMembers(variant),
    ])
    .filter(([, members]) => members.length > 0);
  return { events, blocks };
}

/** Renders the module. */
export function renderSearchFields(set: SchemaSet): string {
  const { events, blocks } = readSearchFields(set);
  const table = (rows: [string, string[]][]) =>
    `{\n${rows.map(([key, members]) => `  ${JSON.stringify(key)}: ${JSON.stringify(members)},`).join("\n")}\n}`;
  return `${generatedHeader({
    generator: "scripts/render-search-fields.ts",
    sources: ["schema/events/", `schema/${CONTENT_BLOCK_PATH}`],
    comment: "//",
  })}/** The members of each event type's \`data\` that text search reads; types not named carry no searchable text. */
export const SEARCHABLE_EVENT_MEMBERS: Readonly<Record<string, readonly string[]>> = ${table(events)};

/** The members of each content block type that text search reads, where a searchable member holds blocks. */
export const SEARCHABLE_BLOCK_MEMBERS: Readonly<Record<string, readonly string[]>> = ${table(blocks)};
`;
}
