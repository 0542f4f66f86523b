// What every provider's response mapping shares: the chunks in order, the envelope kept in meta, the events no chunk kind expresses kept in their places, and the mapped response they make.
import type { ContentBlock, ModelResponse, StreamChunk, TokenUsage } from "../generated.js";
import { assembleMessage } from "../replay/assemble.js";
import { isObject, type Json } from "./openai-chat-request.js";
import type { MappedResponse, StreamMapper } from "./types.js";

type Unmapped = NonNullable<ModelResponse["unmapped"]>[number];

/** A provider's token count as the log takes it: a non-negative safe integer, else 0. */
function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** Token usage in the log's terms; each of `optional` is set only when the provider gave it (not undefined). */
export function tokenUsage(
  input: unknown,
  output: unknown,
  optional: Readonly<
    Partial<Record<"cacheReadTokens" | "cacheWriteTokens" | "reasoningTokens", unknown>>
  >,
): TokenUsage {
  const usage: TokenUsage = { inputTokens: tokenCount(input), outputTokens: tokenCount(output) };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(usage, { [key]: tokenCount(value) });
  }
  return usage;
}

/** The mapping of one response as it is built: what every adapter's builder holds. */
export abstract class ChunkBuilder {
  readonly chunks: StreamChunk[] = [];
  readonly meta: Json = {};
  readonly unmapped: Unmapped[] = [];
  /** An error the provider reported inside a successful response. */
  error: { message: string; code?: string } | undefined;

  /** What the events said: the mapping, with block ends and the finish chunk settled. */
  abstract end(): MappedResponse;

  /** Keeps an event no chunk kind expresses, in its place among the chunks. */
  keep(event: unknown): void {
    this.unmapped.push({ at: this.chunks.length, event: event as Unmapped["event"] });
  }

  /**
   * The mapping: the chunks so far, and when `finish` is given (the provider said the call
   * finished and reported no error) a `block-end` per block of `blocks` (chunk indexes, in the
   * order the message's blocks assemble) and the finish chunk.
   */
  mapped(finish: StreamChunk | undefined, blocks: readonly number[] = [], meta = this.meta) {
    const finished = finish !== undefined && this.error === undefined;
    const chunks = [...this.chunks];
    if (finished) {
      const assembled = assembleMessage(chunks);
      blocks.forEach((index, i) => {
        chunks.push({ type: "block-end", index, block: assembled[i] as ContentBlock });
      });
      chunks.push(finish);
    }
    const mapped: MappedResponse = {
      chunks,
      meta: { ...meta },
      unmapped: [...this.unmapped],
      finished,
      ...(this.error === undefined ? {} : { error: this.error }),
    };
    return mapped;
  }
}

/**
 * A stream mapper over JSON `data:` payloads: an object goes to `onEvent` with its SSE event
 * name; any other JSON value is kept as it came, and a payload that is no JSON as `keepText`
 * says (by default its text).
 */
export function jsonStreamMapper(
  builder: ChunkBuilder,
  onEvent: (event: Json, name: string | undefined) => void,
  keepText: (name: string | undefined, data: string) => unknown = (_name, data) => data,
): StreamMapper {
  return {
    event(name, data) {
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        builder.keep(keepText(name, data));
        return;
      }
      if (isObject(event)) onEvent(event, name);
      else builder.keep(event);
    },
    end: () => builder.end(),
  };
}

/** Maps a whole JSON response body into `builder` with `map`; a body that is no object is kept whole. */
export function mapBody<B extends ChunkBuilder>(
  builder: B,
  body: unknown,
  map: (builder: B, body: Json) => void,
): MappedResponse {
  if (isObject(body)) map(builder, body);
  else builder.keep(body);
  return builder.end();
}
