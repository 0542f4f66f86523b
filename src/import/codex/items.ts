// What the members of Codex rollout items become in seedline: content blocks, token usage, times, and which members an event carries.
import type { ContentBlock, TokenUsage } from "../../generated.js";

/** A JSON object as parsed. */
export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A member's string value, or undefined when it is not a string. */
export function stringAt(object: JsonObject, key: string): string | undefined {
  const value = object[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Which members of an object the seedline events made from it carry, each with a test of the
 * values that are carried (a member whose value fails it, or a member not named, is not carried).
 */
export type Carried = Readonly<Record<string, (value: unknown) => boolean>>;

/** Any value of the member is carried. */
export const any = (): boolean => true;
/** Carried only when it says nothing: absent, null, an empty array or an empty string. */
export const empty = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  value === "" ||
  (Array.isArray(value) && value.length === 0);
/** Carried only when it holds `expected`. */
export const is =
  (expected: string) =>
  (value: unknown): boolean =>
    value === expected;

/**
 * Whether `object` holds anything the events made from it do not carry: a member `carried` does
 * not name, or one whose value its test refuses. Such a line is also kept whole, as a foreign
 * record, so that the import loses nothing.
 */
export function holdsMore(object: JsonObject, carried: Carried): boolean {
  for (const key in object) {
    const test = carried[key];
    if (test === undefined || !test(object[key])) return true;
  }
  return false;
}

/**
 * The epoch milliseconds of a rollout timestamp (`2026-02-23T19:34:26.098Z`), or undefined when
 * it is none. `exact` says whether the number gives the same text back (whether `time` carries it).
 */
export function timeOf(value: unknown): { ms: number; exact: boolean } | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  if (!Number.isSafeInteger(ms) || ms < 0) return undefined;
  // Formatting a date back costs more than the rest of a line's mapping: a timestamp in Codex's
  // own form whose day, hour, minute and second every month has gives itself back.
  const plain =
    ISO_MS.test(value) &&
    value.slice(8, 10) <= "28" &&
    value.slice(11, 13) <= "23" &&
    value.slice(14, 16) <= "59" &&
    value.slice(17, 19) <= "59";
  return { ms, exact: plain || new Date(ms).toISOString() === value };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * One content part of a Codex message or tool output as a seedline block: a text part
 * (`input_text`, `output_text` with only `type` and `text`) is a text block; any other part (an
 * image, a refusal, a file) is a text block holding the part's JSON, as docs/proxy.md does for
 * request parts no block kind expresses, so nothing is lost.
 */
export function blockOf(part: unknown): ContentBlock {
  if (
    isObject(part) &&
    (part.type === "input_text" || part.type === "output_text") &&
    typeof part.text === "string" &&
    Object.keys(part).length === 2
  ) {
    return { type: "text", text: part.text };
  }
  return { type: "text", text: JSON.stringify(part) };
}

/** The blocks of a message's `content` (an array of parts, or a string), or undefined for any other value. */
export function messageBlocks(content: unknown): ContentBlock[] | undefined {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return undefined;
  return content.map(blockOf);
}

/** The blocks of a tool call's `output`: a string is one text block, parts as {@link blockOf}, anything else its JSON. */
export function outputBlocks(output: unknown): ContentBlock[] {
  if (typeof output === "string") return [{ type: "text", text: output }];
  if (Array.isArray(output)) return output.map(blockOf);
  return [{ type: "text", text: JSON.stringify(output) }];
}

/**
 * The reasoning blocks of a `reasoning` item: one per `summary_text` part of `summary`, then one
 * per `reasoning_text` (or `text`) part of `content`. `carried` is false when a part is of another
 * shape (it is then left out here and kept with the whole line).
 */
export function reasoningBlocks(item: JsonObject): { blocks: ContentBlock[]; carried: boolean } {
  const blocks: ContentBlock[] = [];
  let carried = true;
  const take = (parts: unknown, kinds: readonly string[]): void => {
    if (parts === null || parts === undefined) return;
    if (!Array.isArray(parts)) {
      carried = false;
      return;
    }
    for (const part of parts) {
      if (
        isObject(part) &&
        typeof part.type === "string" &&
        kinds.includes(part.type) &&
        typeof part.text === "string" &&
        Object.keys(part).length === 2
      ) {
        blocks.push({ type: "reasoning", text: part.text });
      } else {
        carried = false;
      }
    }
  };
  take(item.summary, ["summary_text"]);
  take(item.content, ["reasoning_text", "text"]);
  return { blocks, carried };
}

const COUNT = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/**
 * Codex's token counts of one model call (`last_token_usage`) as seedline usage, named as
 * docs/proxy.md maps the Responses API's: `input_tokens`, `output_tokens`, `cached_input_tokens`
 * (cache reads), `reasoning_output_tokens`. Undefined when the input or output count is missing.
 */
export function usageOf(counts: unknown): TokenUsage | undefined {
  if (!isObject(counts) || !COUNT(counts.input_tokens) || !COUNT(counts.output_tokens)) {
    return undefined;
  }
  return {
    inputTokens: counts.input_tokens,
    outputTokens: counts.output_tokens,
    ...(COUNT(counts.cached_input_tokens) ? { cacheReadTokens: counts.cached_input_tokens } : {}),
    ...(COUNT(counts.reasoning_output_tokens)
      ? { reasoningTokens: counts.reasoning_output_tokens }
      : {}),
  };
}

/** The tokens a model call's context held (`total_tokens` of its counts, else input plus output), or undefined. */
export function contextTokensOf(counts: unknown): number | undefined {
  if (!isObject(counts)) return undefined;
  if (COUNT(counts.total_tokens)) return counts.total_tokens;
  const usage = usageOf(counts);
  return usage === undefined ? undefined : usage.inputTokens + usage.outputTokens;
}
