// Renders the generated regions of the docs (event catalogue, SQLite DDL, RPC method and error tables) from a schema set.

import { ACP_UPDATE_MAPPING } from "../src/log/acp-updates.js";
import { type SchemaSet, schemaFile } from "./lib/schema-set.js";
import {
  SQLITE_LAYOUT_PATH,
  SQLITE_LAYOUT_SCHEMA_PATH,
  sqliteDdlBody,
  validateSqliteLayout,
} from "./lib/sqlite-layout.js";
import { readEventCatalogue } from "./render-event-catalogue.js";
import { readRpcTables } from "./render-rpc.js";

/** The names of the generated regions, as the docs' `<!-- BEGIN GENERATED <name> -->` markers spell them. */
export const DOC_REGION_NAMES = [
  "event-catalogue",
  "sqlite-ddl",
  "rpc-methods",
  "rpc-errors",
  "acp-updates",
] as const;

/** A generated region of the docs. */
export type DocRegionName = (typeof DOC_REGION_NAMES)[number];

/** The generator a region's text comes from, for messages. */
export const DOC_REGION_GENERATOR = "scripts/render-docs.ts";

/**
 * The vocabulary as a Markdown table: one row per event type in the union's order, whether it is
 * surface-eligible (carries `surfaceOp`), its generated types and its schema description.
 * @throws Error as `readEventCatalogue` does.
 */
export function renderEventCatalogueTable(set: SchemaSet): string {
  const rows = readEventCatalogue(set).map((e) =>
    row([
      code(e.type),
      e.surface ? "yes" : "no",
      `${code(e.typeName)} / ${code(e.dataTypeName)}`,
      cell(e.description),
    ]),
  );
  return table(["type", "surface-eligible", "event / data type", "description"], rows);
}

/**
 * The ACP mapping (src/log/acp-updates.ts) as a Markdown table: one row per event type in the
 * vocabulary's order, the session/update kinds it gives and how.
 * @throws Error when the vocabulary has an event type the mapping lacks.
 */
export function renderAcpUpdateTable(set: SchemaSet): string {
  const mapping: Readonly<Record<string, { updates: string; how: string } | undefined>> =
    ACP_UPDATE_MAPPING;
  const rows = readEventCatalogue(set).map((e) => {
    const entry = mapping[e.type];
    if (entry === undefined) {
      throw new Error(`expected ACP_UPDATE_MAPPING to map ${e.type}, got no entry`);
    }
    return row([code(e.type), cell(entry.updates), cell(entry.how)]);
  });
  return table(["event", "ACP `session/update`", "how"], rows);
}

/**
 * The SQLite DDL of the layout document, in a `sql` fence: the same statements as
 * generated/sqlite-layout.gen.sql, without its file header.
 * @throws SqliteLayoutError when the layout document is invalid.
 */
export function renderSqliteDdlBlock(set: SchemaSet): string {
  const layout = validateSqliteLayout(
    schemaFile(set, SQLITE_LAYOUT_PATH),
    schemaFile(set, SQLITE_LAYOUT_SCHEMA_PATH),
  );
  return `\`\`\`sql\n${sqliteDdlBody(layout)}\`\`\`\n`;
}

/**
 * The JSON-RPC methods as a Markdown table, in the method table's order: wire name, params and
 * result types, the domain errors it may return beyond those every method may return, summary.
 * @throws Error as `readRpcTables` does.
 */
export function renderRpcMethodTable(set: SchemaSet): string {
  const { methods } = readRpcTables(set);
  const everywhere = methods
    .map((m) => m.errors)
    .reduce((common, errors) => common.filter((c) => errors.includes(c)));
  const rows = methods.map((m) => {
    const own = m.errors.filter((e) => !everywhere.includes(e));
    return row([
      code(m.method),
      code(m.paramsTitle),
      code(m.resultTitle),
      own.length === 0 ? "—" : own.map(code).join(", "),
      cell(m.summary),
    ]);
  });
  const lead =
    everywhere.length === 0
      ? ""
      : `Every method may also fail with ${everywhere.map(code).join(" or ")}.\n\n`;
  return lead + table(["method", "params", "result", "may fail with", "does"], rows);
}

/**
 * The error table as Markdown: the JSON-RPC protocol errors, then the domain errors (matched on
 * `data.code`), each with its fixed number, when it is returned and the members of its `data`
 * besides `code` (`?` marks an optional one).
 * @throws Error as `readRpcTables` does.
 */
export function renderRpcErrorTable(set: SchemaSet): string {
  const { protocolErrors, domainErrors } = readRpcTables(set).errors;
  const dataMembers = (data: { properties: object; required: readonly string[] } | undefined) =>
    data === undefined
      ? ""
      : Object.keys(data.properties)
          .filter((name) => name !== "code")
          .map((name) => code(data.required.includes(name) ? name : `${name}?`))
          .join(", ");
  const rows = [
    ...protocolErrors.map((e) =>
      row([`(${e.name})`, String(e.jsonrpcCode), cell(e.when), dataMembers(e.data)]),
    ),
    ...domainErrors.map((e) =>
      row([code(e.code), String(e.jsonrpcCode), cell(e.when), dataMembers(e.data)]),
    ),
  ];
  return table(["`data.code`", "JSON-RPC code", "when", "`data` members"], rows);
}

/**
 * Every generated region's text (ending in a newline), keyed by region name.
 * @throws Error when a schema document is missing or invalid.
 */
export function renderDocRegions(set: SchemaSet): Record<DocRegionName, string> {
  return {
    "event-catalogue": renderEventCatalogueTable(set),
    "sqlite-ddl": renderSqliteDdlBlock(set),
    "rpc-methods": renderRpcMethodTable(set),
    "rpc-errors": renderRpcErrorTable(set),
    "acp-updates": renderAcpUpdateTable(set),
  };
}

function table(head: readonly string[], rows: readonly string[]): string {
  return `${[row(head), row(head.map(() => "---")), ...rows].join("\n")}\n`;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

/** Text for a table cell: one line, with `|` escaped so it cannot end the cell. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replaceAll("|", "\\|");
}

function code(text: string): string {
  return `\`${text}\``;
}
