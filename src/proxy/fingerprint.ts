// The request fingerprint kept on step/start and the short diff replay answers when a request does not match it.
import { createHash } from "node:crypto";
import type { ModelRequest } from "../generated.js";
import type { NeutralMessage, NeutralRequest } from "./types.js";

/** JSON with object keys sorted at every depth: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 (hex) of a value's canonical JSON. */
export function digestOf(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

/** The fingerprint of a parsed request, as step/start keeps it. */
export function fingerprintOf(api: string, request: NeutralRequest): ModelRequest {
  return {
    api,
    model: request.model,
    stream: request.stream,
    params: request.params as Record<string, unknown>,
    messages: request.messages.map((m) => ({ role: m.role, digest: digestOf(m) })),
    tools: request.tools.map((t) => ({ name: t.name, digest: digestOf(t.definition) })),
  };
}

const PREVIEW = 60;

/**
 * How `got` differs from the `recorded` request, one short line per difference (model, params,
 * tools, then the first differing message), or an empty list when it matches. Whether the caller
 * streams is not compared: replay answers in the caller's mode.
 */
export function requestDiff(
  recorded: ModelRequest,
  got: ModelRequest,
  gotMessages: readonly NeutralMessage[],
): string[] {
  const lines: string[] = [];
  if (recorded.model !== got.model) {
    lines.push(
      `model: recorded ${JSON.stringify(recorded.model)}, got ${JSON.stringify(got.model)}`,
    );
  }
  if (canonicalJson(recorded.params) !== canonicalJson(got.params)) {
    lines.push(
      `params: recorded ${clip(canonicalJson(recorded.params))}, got ${clip(canonicalJson(got.params))}`,
    );
  }
  const names = (r: ModelRequest) => r.tools.map((t) => t.name).join(", ");
  if (names(recorded) !== names(got)) {
    lines.push(`tools: recorded [${names(recorded)}], got [${names(got)}]`);
  } else {
    const changed = got.tools.find((t, i) => t.digest !== recorded.tools[i]?.digest);
    if (changed !== undefined) lines.push(`tools: the definition of ${changed.name} changed`);
  }
  const count = Math.max(recorded.messages.length, got.messages.length);
  for (let i = 0; i < count; i++) {
    const r = recorded.messages[i];
    const g = got.messages[i];
    if (r !== undefined && g !== undefined && r.role === g.role && r.digest === g.digest) continue;
    const at = `message ${i + 1}`;
    if (g === undefined) {
      lines.push(`${at}: recorded a ${r?.role} message, got none (${got.messages.length} sent)`);
    } else if (r === undefined) {
      lines.push(
        `${at}: recorded none (${recorded.messages.length} then), got ${preview(gotMessages[i])}`,
      );
    } else {
      lines.push(`${at}: recorded another ${r.role} message, got ${preview(gotMessages[i])}`);
    }
    break;
  }
  return lines;
}

function preview(message: NeutralMessage | undefined): string {
  if (message === undefined) return "nothing";
  const text = message.content
    .map((b) => (b.type === "text" || b.type === "reasoning" ? b.text : `[${b.type}]`))
    .join(" ");
  const calls = (message.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`).join(", ");
  return `${message.role} ${clip(JSON.stringify(text + (calls === "" ? "" : ` ${calls}`)))}`;
}

function clip(text: string): string {
  return text.length <= PREVIEW ? text : `${text.slice(0, PREVIEW - 1)}…`;
}
