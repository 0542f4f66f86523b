// Derived messages kept deflated in blocks, so that a live surface holds its older messages at a fraction of their size.
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { DerivedMessage } from "../generated.js";

/**
 * Some derived messages as deflated JSON. A writer's surface keeps its text for as long as the
 * session is open, and most of it is read rarely (by `deriveMessages`): deflated, a server with
 * many open sessions holds a third or less of it. The messages come back equal, frozen throughout.
 */
export class PackedBlock {
  /**
   * The deflated bytes, one character each (latin1): a string costs a small header, where a byte
   * array costs an array buffer and its backing store (a few hundred bytes a block).
   */
  readonly #bytes: string;
  /** The expanded messages while anyone holds them: expanded again only once they are collected. */
  #expanded: WeakRef<readonly DerivedMessage[]> | undefined;

  constructor(messages: readonly DerivedMessage[]) {
    // Level 1: the text is read back rarely; the deflate runs on the append path.
    // From bytes: zlib converts a string argument on a slower path (about twice the time).
    this.#bytes = deflateRawSync(Buffer.from(JSON.stringify(messages)), { level: 1 }).toString(
      "latin1",
    );
  }

  /** The block's messages, in order, frozen throughout. */
  messages(): readonly DerivedMessage[] {
    let expanded = this.#expanded?.deref();
    if (expanded === undefined) {
      const text = inflateRawSync(Buffer.from(this.#bytes, "latin1")).toString("utf8");
      expanded = deepFreeze(JSON.parse(text) as DerivedMessage[]);
      this.#expanded = new WeakRef(expanded);
    }
    return expanded;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
