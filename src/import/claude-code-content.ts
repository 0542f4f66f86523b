// Claude Code's message content in seedline's terms: text, thinking and tool use become content blocks; what no block expresses is named in the text and the line kept whole.
import type { ContentBlock, TokenUsage } from "../generated.js";

/** Content converted from one Claude Code line. */
export interface ConvertedContent {
  readonly blocks: ContentBlock[];
  /**
   * A block only named in `blocks` (an image, a document, redacted thinking): the line is to be
   * kept whole as a foreign record too, so that nothing of it is lost.
   */
  readonly kept: boolean;
  /** The types of blocks no seedline block expresses, not even by name (the line is kept whole). */
  readonly unknown: readonly string[];
}

type Json = Record<string, unknown>;

/**
 * The blocks of a user line's `content` (a string, or text, image and document blocks). A
 * `tool_result` block is not content of a prompt: it is reported as unknown here (tool results
 * are read apart, see {@link toolResultContent}).
 */
export function userContent(content: unknown): ConvertedContent {
  return convert(content, userBlock);
}

/** The blocks of an assistant line's `content`: text, thinking (as reasoning) and tool use. */
export function assistantContent(content: unknown): ConvertedContent {
  return convert(content, assistantBlock);
}

/** The blocks of a `tool_result`'s `content`: a string, or text and image blocks. */
export function toolResultContent(content: unknown): ConvertedContent {
  if (content === undefined || content === null) return { blocks: [], kept: false, unknown: [] };
  return convert(content, userBlock);
}

/** Anthropic's usage in the log's terms: cache reads and writes counted apart from input. */
export function tokenUsage(raw: unknown): TokenUsage | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const u = raw as Json;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const read = count(u.cache_read_input_tokens);
  const write = count(u.cache_creation_input_tokens);
  return {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    ...(read === undefined ? {} : { cacheReadTokens: read }),
    ...(write === undefined ? {} : { cacheWriteTokens: write }),
  };
}

/** The text of a content value, its text blocks joined by new lines. */
export function plainText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (isObject(block) && block.type === "text" && typeof block.text === "string") {
      parts.push(block.text);
    }
  }
  return parts.join("\n");
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** What one block becomes: a block, a block that only names it (`kept`), or nothing (unknown). */
type BlockOf = (block: Json) => { block: ContentBlock; kept?: boolean } | undefined;

function convert(content: unknown, of: BlockOf): ConvertedContent {
  if (typeof content === "string")
    return { blocks: [{ type: "text", text: content }], kept: false, unknown: [] };
  if (!Array.isArray(content)) {
    return { blocks: [], kept: false, unknown: [content === null ? "null" : typeof content] };
  }
  const blocks: ContentBlock[] = [];
  const unknown: string[] = [];
  let kept = false;
  for (const raw of content) {
    const converted = isObject(raw) ? of(raw) : undefined;
    if (converted === undefined) {
      unknown.push(isObject(raw) && typeof raw.type === "string" ? raw.type : typeof raw);
      continue;
    }
    blocks.push(converted.block);
    if (converted.kept === true) kept = true;
  }
  return { blocks, kept, unknown };
}

function userBlock(block: Json): { block: ContentBlock; kept?: boolean } | undefined {
  switch (block.type) {
    case "text":
      return typeof block.text === "string"
        ? { block: { type: "text", text: block.text } }
        : undefined;
    case "image":
    case "document":
      return { block: { type: "text", text: namedMedia(block) }, kept: true };
    default:
      return undefined;
  }
}

function assistantBlock(block: Json): { block: ContentBlock; kept?: boolean } | undefined {
  switch (block.type) {
    case "text":
      return typeof block.text === "string"
        ? { block: { type: "text", text: block.text } }
        : undefined;
    case "thinking":
      return typeof block.thinking === "string"
        ? { block: { type: "reasoning", text: block.thinking } }
        : undefined;
    case "redacted_thinking":
      return { block: { type: "reasoning", text: "[redacted thinking]" }, kept: true };
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") return undefined;
      return {
        block: {
          type: "tool-call",
          id: block.id,
          name: block.name,
          arguments: JSON.stringify(block.input ?? {}),
        },
      };
    default:
      return undefined;
  }
}

/** "[image: image/png, 12,345 bytes of base64 — kept whole in this line's foreign record]". */
function namedMedia(block: Json): string {
  const source = isObject(block.source) ? block.source : {};
  const media = typeof source.media_type === "string" ? source.media_type : String(block.type);
  const what =
    typeof source.data === "string"
      ? `${source.data.length.toLocaleString("en")} characters of ${String(source.type ?? "data")}`
      : typeof source.url === "string"
        ? source.url
        : String(source.type ?? "no source");
  return `[${String(block.type)}: ${media}, ${what} — kept whole in this line's foreign record]`;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
