// Folds a recorded chunk stream back into the content blocks of the assistant message it streamed.
import type { BlockStartChunk, ContentBlock, StreamChunk } from "../generated.js";

type BlockKind = BlockStartChunk["blockType"];

/** A block being streamed: its kind and what its deltas have said so far. */
interface Draft {
  readonly kind: BlockKind;
  text: string;
  id: string;
  name: string;
  args: string;
  /** The assembled block a `block-end` reported; it wins over the deltas. */
  ended: ContentBlock | undefined;
}

/**
 * The content blocks of the assistant message that `chunks` stream, ordered by block `index`.
 * A block closed by `block-end` is that chunk's `block`, as the producer assembled it; a block
 * left open (a stream cut off by cancellation) is built from its deltas, so a partial stream
 * gives the partial message. `usage` and `finish` carry no content and are skipped.
 * @throws TypeError when a delta's kind contradicts the kind its block was started with.
 */
export function assembleMessage(chunks: readonly StreamChunk[]): ContentBlock[] {
  const drafts = new Map<number, Draft>();
  const draft = (index: number, kind: BlockKind): Draft => {
    let found = drafts.get(index);
    if (found === undefined) {
      found = newDraft(kind);
      drafts.set(index, found);
    } else if (found.kind !== kind && found.ended === undefined) {
      throw new TypeError(`expected a ${found.kind} delta for block ${index}, got a ${kind} delta`);
    }
    return found;
  };
  for (const chunk of chunks) {
    switch (chunk.type) {
      case "block-start":
        drafts.set(chunk.index, newDraft(chunk.blockType));
        break;
      case "text-delta":
        draft(chunk.index, "text").text += chunk.text;
        break;
      case "reasoning-delta":
        draft(chunk.index, "reasoning").text += chunk.text;
        break;
      case "tool-call-delta": {
        const d = draft(chunk.index, "tool-call");
        d.id = chunk.id;
        if (chunk.name !== undefined) d.name = chunk.name;
        d.args += chunk.argumentsDelta;
        break;
      }
      case "block-end": {
        const d = drafts.get(chunk.index) ?? newDraft(blockKindOf(chunk.block));
        d.ended = chunk.block;
        drafts.set(chunk.index, d);
        break;
      }
      case "usage":
      case "finish":
        break;
    }
  }
  return [...drafts.entries()].sort(([a], [b]) => a - b).map(([, d]) => d.ended ?? build(d));
}

function newDraft(kind: BlockKind): Draft {
  return { kind, text: "", id: "", name: "", args: "", ended: undefined };
}

/** The draft kind for a block that ended without being started (tool results never stream). */
function blockKindOf(block: ContentBlock): BlockKind {
  return block.type === "tool-result" ? "text" : block.type;
}

function build(d: Draft): ContentBlock {
  switch (d.kind) {
    case "text":
      return { type: "text", text: d.text };
    case "reasoning":
      return { type: "reasoning", text: d.text };
    case "tool-call":
      return { type: "tool-call", id: d.id, name: d.name, arguments: d.args };
  }
}
