// Derived messages kept deflated in blocks, so that a live surface holds its older messages at a fraction of their size.
import { deflateRaw, deflateRawSync, inflateRawSync } from "node:zlib";
import type { DerivedMessage } from "../generated.js";

/**
 * Some derived messages as deflated JSON. A writer's surface keeps its text for as long as the
 * session is open, and most of it is read rarely (by `deriveMessages`): deflated, a server with
 * many open sessions holds a third or less of it. The messages come back equal, frozen throughout.
 */
export class PackedBlock {
  readonly #bytes: Uint8Array;
  /** The expanded messages while anyone holds them: expanded again only once they are collected. */
  #expanded: WeakRef<readonly DerivedMessage[]> | undefined;

  /** Deflates `messages` here and now. */
  constructor(messages: readonly DerivedMessage[]);
  /** @internal A block of messages deflated already (see {@link deflate}). */
  constructor(messages: undefined, bytes: Uint8Array);
  constructor(messages: readonly DerivedMessage[] | undefined, bytes?: Uint8Array) {
    // Level 1: the text is read back rarely; the deflate runs on the append path.
    this.#bytes =
      bytes ?? exactCopy(deflateRawSync(jsonBytes(messages as readonly DerivedMessage[]), DEFLATE));
  }

  /**
   * Deflates `messages` on the thread pool: only their JSON text is made on this thread. The
   * messages are read now; the block is the same as the constructor's.
   */
  static deflate(messages: readonly DerivedMessage[]): Promise<PackedBlock> {
    const input = jsonBytes(messages);
    return new Promise((resolve, reject) => {
      deflateRaw(input, DEFLATE, (error, out) => {
        if (error !== null) reject(error);
        else resolve(new PackedBlock(undefined, exactCopy(out)));
      });
    });
  }

  /** The block's messages, in order, frozen throughout. */
  messages(): readonly DerivedMessage[] {
    let expanded = this.#expanded?.deref();
    if (expanded === undefined) {
      const text = inflateRawSync(this.#bytes).toString("utf8");
      expanded = deepFreeze(JSON.parse(text) as DerivedMessage[]);
      this.#expanded = new WeakRef(expanded);
    }
    return expanded;
  }
}

const DEFLATE = { level: 1 } as const;

/** From bytes: zlib converts a string argument on a slower path (about twice the time). */
function jsonBytes(messages: readonly DerivedMessage[]): Buffer {
  return Buffer.from(JSON.stringify(messages));
}

/** A copy of exactly its size: zlib's result may be a view of a larger output chunk. */
function exactCopy(out: Buffer): Uint8Array {
  return new Uint8Array(out);
}

/** One message of a {@link PackedBlock}: where it stands in the block. */
export class PackedMessage {
  readonly block: PackedBlock;
  readonly index: number;

  constructor(block: PackedBlock, index: number) {
    this.block = block;
    this.index = index;
  }

  /** The message, expanded (see {@link PackedBlock.messages}). */
  expand(): DerivedMessage {
    return this.block.messages()[this.index] as DerivedMessage;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
