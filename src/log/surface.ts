// The surface: the ordered list of message-producing events, and the messages derived from it.
import {
  type ContentBlock,
  type DerivedMessage,
  type SessionEvent,
  SURFACE_ELIGIBLE_TYPES,
  type SurfaceEligibleType,
} from "../generated.js";
import { isAdmitted } from "./admitted-events.js";
import { isSeq, missingSurfaceOp } from "./event-errors.js";
import { copyJsonValue, freezeParsed } from "./json-value.js";
import { PackedBlock } from "./packed-messages.js";
import type { SurfaceEvent } from "./types.js";

const SURFACE_TYPES: ReadonlySet<string> = new Set(SURFACE_ELIGIBLE_TYPES);

/** Whether events of this type carry `surfaceOp` and appear on the surface. */
export function isSurfaceEligibleType(type: string): type is SurfaceEligibleType {
  return SURFACE_TYPES.has(type);
}

/** Whether the event is one of the surface-eligible types. */
export function isSurfaceEvent(event: SessionEvent): event is SurfaceEvent {
  return SURFACE_TYPES.has(event.type);
}

/**
 * A node's message as kept: as derived, as its event's text ({@link TextMessage}), or packed with
 * others (see {@link packOlderMessages}): then the number {@link packedAt} gives, which names its
 * block and its place in it without an object of its own.
 */
type KeptMessage = DerivedMessage | TextMessage | number;

/**
 * A message kept as the JSON text of its event's `data`, as the store serialized the event when it
 * took it in: keeping it costs neither a copy of the caller's value nor any work on the append's
 * path, and it holds about the text's size. It is derived when first read, and the derived message
 * is kept for as long as anyone holds it.
 */
export class TextMessage {
  readonly #type: SurfaceEligibleType;
  readonly #data: string;
  #expanded: WeakRef<DerivedMessage> | undefined;

  /** `data`: the JSON text of the `data` of an event of `type` that produces a message. */
  constructor(type: SurfaceEligibleType, data: string) {
    this.#type = type;
    this.#data = data;
  }

  /** The length of the text kept, in UTF-16 code units. */
  get size(): number {
    return this.#data.length;
  }

  /** The message, frozen throughout: the same object while anyone holds it. */
  expand(): DerivedMessage {
    let message = this.#expanded?.deref();
    if (message === undefined) {
      const data = freezeParsed(JSON.parse(this.#data) as unknown);
      message = messageOf({ type: this.#type, data } as SurfaceEvent) as DerivedMessage;
      this.#expanded = new WeakRef(message);
    }
    return message;
  }
}

/**
 * The view of a message-producing event taken from a caller (see `SerializedEvent.take`): the
 * envelope, the surface markers and the members of `data` the log's rules read, and the message
 * the event produces, kept as text (undefined when it produces none).
 * @internal
 */
export class TakenSurfaceView {
  readonly type: SurfaceEligibleType;
  readonly seq: number;
  readonly time: number;
  readonly data: Readonly<Record<string, unknown>>;
  readonly surfaceOp: SurfaceEvent["surfaceOp"];
  readonly sourceEventSeqs: readonly number[] | undefined;
  readonly message: TextMessage | undefined;

  constructor(
    envelope: { readonly type: SurfaceEligibleType; readonly seq: number; readonly time: number },
    data: Readonly<Record<string, unknown>>,
    markers: {
      readonly surfaceOp: SurfaceEvent["surfaceOp"];
      readonly sourceEventSeqs: readonly number[] | undefined;
    },
    message: TextMessage | undefined,
  ) {
    this.type = envelope.type;
    this.seq = envelope.seq;
    this.time = envelope.time;
    this.data = data;
    this.surfaceOp = markers.surfaceOp;
    this.sourceEventSeqs = markers.sourceEventSeqs;
    this.message = message;
  }
}

/** The message an event produces as the surface keeps it: its text for a taken event's view. */
function keptMessageOf(event: SurfaceEvent): KeptMessage | undefined {
  return event instanceof TakenSurfaceView ? event.message : messageOf(event);
}

/** A packed message as kept: message `index` of block `block` of the surface's blocks. */
function packedAt(block: number, index: number): number {
  return -(block * BLOCK_MESSAGES + index) - 1;
}

/**
 * The newest messages kept as derived. None: a server holding many open sessions keeps every
 * unpacked message in its live heap, and its heap grows with its live heap (about 80 MiB less
 * over 1,000 sessions of real-sized messages than keeping the newest four).
 */
const KEEP_RECENT = 0;
/**
 * Messages packed together at most: a turn holds a few dozen, most of their text in a few of
 * them. The newest ones are packed as a smaller block rather than left waiting for a full one.
 */
export const BLOCK_MESSAGES = 8;
/** Blocks packed at most per call, so that one append after a long resume pays a bounded cost. */
const BLOCKS_PER_CALL = 16;

/** Packs a surface's older messages; module-private access to {@link Surface} (set below). */
let packOlder: (surface: Surface, keepText?: number) => void;

/**
 * The surface, maintained incrementally: appending costs the new node; a replace (compaction)
 * costs the surface once. A node is its seq and its kept message, each in an array of its own:
 * no object per node, as a writer's surface holds every message of its log while it stays open.
 * Assumes its events were validated (the `replace` rule): it does not check them again.
 */
export class Surface {
  /** The nodes' seqs, in surface order. */
  #seqs: number[] = [];
  /** The nodes' messages, by position: undefined for a node that produces none (an assistant message with empty content). */
  #kept: (KeptMessage | undefined)[] = [];
  /** The packed blocks, which {@link packedAt} numbers name; only ever appended to (a clone shares them). */
  #blocks: PackedBlock[] = [];
  /** The frozen messages while anyone holds them: none of them is held for the surface's sake. */
  #snapshot: WeakRef<readonly DerivedMessage[]> | undefined;
  /** Every node before this position is packed or has no message. */
  #packedTo = 0;
  /** The size of the unpacked messages kept as text (see {@link TextMessage.size}). */
  #text = 0;
  /** How many unpacked messages are kept as derived. */
  #derived = 0;

  static {
    packOlder = (surface, keepText) =>
      keepText === undefined
        ? surface.#pack(BLOCKS_PER_CALL, Number.NEGATIVE_INFINITY)
        : surface.#pack(Number.POSITIVE_INFINITY, keepText);
  }

  /**
   * How many nodes come after those packed (an upper bound of the messages waiting to be packed).
   * @internal
   */
  get unpacked(): number {
    return this.#seqs.length - this.#packedTo;
  }

  /**
   * The size of the unpacked messages kept as text, in UTF-16 code units.
   * @internal
   */
  get unpackedText(): number {
    return this.#text;
  }

  /**
   * How many unpacked messages are kept as derived (not as text).
   * @internal
   */
  get unpackedDerived(): number {
    return this.#derived;
  }

  /** Counts a node's message in (+1) or out (-1) of the unpacked ones. */
  #count(message: KeptMessage | undefined, sign: 1 | -1): void {
    if (message === undefined || typeof message === "number") return;
    if (message instanceof TextMessage) this.#text += sign * message.size;
    else this.#derived += sign;
  }

  /** A kept message as derived, frozen. */
  #expand(message: KeptMessage): DerivedMessage {
    if (typeof message === "number") {
      const at = -message - 1;
      const block = this.#blocks[Math.floor(at / BLOCK_MESSAGES)] as PackedBlock;
      return block.messages()[at % BLOCK_MESSAGES] as DerivedMessage;
    }
    return message instanceof TextMessage ? message.expand() : message;
  }

  /** The seqs on the surface, in surface order. */
  seqs(): number[] {
    return this.#seqs.slice();
  }

  /** Whether `seq` is currently on the surface. */
  has(seq: number): boolean {
    return this.#seqs.includes(seq);
  }

  /** The position of `seq` in surface order, or -1. */
  positionOf(seq: number): number {
    return this.#seqs.lastIndexOf(seq);
  }

  /** The seqs from position `from` through `to`, inclusive. */
  range(from: number, to: number): number[] {
    return this.#seqs.slice(from, to + 1);
  }

  /**
   * Applies the event's `surfaceOp`; returns what undoes it. Undo in reverse order, before anything
   * else reads the surface: an append costs O(1) either way, a replace O(surface).
   */
  apply(event: SurfaceEvent): () => void {
    const op = event.surfaceOp;
    if (op === "append") {
      this.#append(event);
      return () => {
        this.#seqs.pop();
        this.#count(this.#kept.pop(), -1);
        this.#packedTo = Math.min(this.#packedTo, this.#seqs.length);
        this.#snapshot = undefined;
      };
    }
    const { from, seqs, kept } = this.#replace(event, op);
    return () => {
      this.#seqs.splice(from, 1, ...seqs);
      for (const message of this.#kept.splice(from, 1, ...kept)) this.#count(message, -1);
      for (const message of kept) this.#count(message, 1);
      this.#packedTo = Math.min(this.#packedTo, from);
      this.#snapshot = undefined;
    };
  }

  /** Applies the event's `surfaceOp` for good: {@link apply} without the means to undo it. */
  advance(event: SurfaceEvent): void {
    const op = event.surfaceOp;
    if (op === "append") this.#append(event);
    else this.#replace(event, op);
  }

  #append(event: SurfaceEvent): void {
    const message = keptMessageOf(event);
    this.#count(message, 1);
    this.#snapshot = undefined;
    this.#seqs.push(event.seq);
    this.#kept.push(message);
  }

  /** Replaces the nodes `op` names with the event's node; returns where, and the seqs and messages it removed. */
  #replace(
    event: SurfaceEvent,
    op: Exclude<SurfaceEvent["surfaceOp"], "append">,
  ): { from: number; seqs: number[]; kept: (KeptMessage | undefined)[] } {
    const message = keptMessageOf(event);
    this.#count(message, 1);
    this.#snapshot = undefined;
    const from = this.positionOf(op.start);
    const count = this.positionOf(op.end) - from + 1;
    const seqs = this.#seqs.splice(from, count, event.seq);
    const kept = this.#kept.splice(from, count, message);
    for (const removed of kept) this.#count(removed, -1);
    this.#packedTo = Math.min(this.#packedTo, from);
    return { from, seqs, kept };
  }

  /** The derived messages, frozen; the same array until the surface changes. */
  messages(): readonly DerivedMessage[] {
    let snapshot = this.#snapshot?.deref();
    if (snapshot === undefined) {
      const kept = this.#kept;
      const out: DerivedMessage[] = [];
      for (let i = 0; i < kept.length; i++) {
        const message = kept[i];
        if (message !== undefined) out.push(this.#expand(message));
      }
      snapshot = Object.freeze(out);
      this.#snapshot = new WeakRef(snapshot);
    }
    return snapshot;
  }

  /**
   * Packs the messages before the newest {@link KEEP_RECENT} nodes, oldest first, up to
   * {@link BLOCK_MESSAGES} to a block (the last block may hold fewer): at most `maxBlocks` blocks,
   * and only while more than `keepText` of text is unpacked (see {@link unpackedText}). Must not
   * run while a batch is tried (its undo steps restore nodes by position).
   */
  #pack(maxBlocks: number, keepText: number): void {
    const end = this.#seqs.length - KEEP_RECENT;
    const kept = this.#kept;
    for (let blocks = 0; blocks < maxBlocks && this.#text > keepText; blocks++) {
      const positions: number[] = [];
      let at = this.#packedTo;
      for (; at < end && positions.length < BLOCK_MESSAGES; at++) {
        const message = kept[at];
        if (message !== undefined && typeof message !== "number") positions.push(at);
      }
      if (positions.length === 0 || (positions.length < BLOCK_MESSAGES && at < end)) return;
      const block = this.#blocks.length;
      this.#blocks.push(
        new PackedBlock(positions.map((p) => this.#expand(kept[p] as KeptMessage))),
      );
      positions.forEach((p, index) => {
        this.#count(kept[p], -1);
        kept[p] = packedAt(block, index);
      });
      this.#packedTo = at;
    }
  }

  /** A copy that evolves independently. */
  clone(): Surface {
    const copy = new Surface();
    copy.#seqs = this.#seqs.slice();
    copy.#kept = this.#kept.slice();
    // Blocks never change and are only appended to: a block one copy adds, the other never names.
    copy.#blocks = this.#blocks;
    copy.#packedTo = this.#packedTo;
    copy.#text = this.#text;
    copy.#derived = this.#derived;
    return copy;
  }
}

/**
 * Keeps the surface's older messages deflated (see {@link PackedBlock}): for a writer's log that
 * stays open, after each committed batch. Call it outside a batch being tried. Packs at most
 * {@link BLOCKS_PER_CALL} blocks; with `keepText`, as many as it takes to leave no more than that
 * of text unpacked (see {@link Surface.unpackedText}), oldest first.
 */
export function packOlderMessages(surface: Surface, keepText?: number): void {
  packOlder(surface, keepText);
}

/**
 * The provider message one surface event produces (docs/log.md, derived messages), frozen
 * throughout: a surface keeps its messages and hands the same ones to every caller. Content is
 * shared with the event, not copied, and frozen in place (the rest of the event is left as it is).
 */
export function messageOf(event: SurfaceEvent): DerivedMessage | undefined {
  switch (event.type) {
    case "user/message":
      return freezeMessage("user", event.data.content);
    case "assistant/message":
      return event.data.content.length === 0
        ? undefined
        : freezeMessage("assistant", event.data.content);
    case "tool/result": {
      const { callId, content, isError } = event.data;
      const block: ContentBlock = Object.freeze({
        type: "tool-result",
        toolCallId: callId,
        content: freezeParsed(content),
        isError,
      });
      return freezeMessage("user", [block]);
    }
    case "context/message":
      return freezeMessage("user", wrap("context", event.data.source.kind, event.data.content));
    case "steering/message":
      return freezeMessage("user", wrap("steering", event.data.source.kind, event.data.content));
  }
}

function wrap(tag: string, kind: string, content: readonly ContentBlock[]): ContentBlock[] {
  return [
    Object.freeze({ type: "text", text: `<${tag} source=${JSON.stringify(kind)}>` }),
    ...content,
    Object.freeze({ type: "text", text: `</${tag}>` }),
  ];
}

function freezeMessage(
  role: DerivedMessage["role"],
  content: readonly ContentBlock[],
): DerivedMessage {
  return Object.freeze({ role, content: freezeParsed(content) });
}

/**
 * Derives the messages of a log from scratch (one pass over its surface events). A `SessionLog`
 * keeps the same result incrementally; this is for logs held as plain arrays. The result is
 * frozen throughout. Given an array a read returned (admitted), its messages share content with
 * its events, frozen in place; in any other array an unfrozen event is copied first, so that the
 * result cannot alias a caller's objects and they are left unfrozen.
 * Other rules are not checked again: give it events a log admitted.
 * @throws InvalidEventError (rule surface-marker) for a surface-eligible event without `surfaceOp`.
 */
export function deriveMessages(events: readonly SessionEvent[]): readonly DerivedMessage[] {
  const surface = new Surface();
  if (isAdmitted(events)) {
    const found: SurfaceEvent[] = [];
    const messages = appendedMessages(events, found);
    if (messages !== undefined) return Object.freeze(messages);
    // A replace (compaction): the surface places each node.
    for (const event of found) surface.advance(event);
  } else {
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as SessionEvent;
      if (!isSurfaceEvent(event)) continue;
      const frozen = frozenEvent(event);
      // Without its marker the surface cannot place it: the marker rule's error, as admission gives.
      if ((frozen as { surfaceOp?: unknown }).surfaceOp === undefined) {
        throw missingSurfaceOp(event.type, i, isSeq(event.seq) ? event.seq : i);
      }
      surface.advance(frozen);
    }
  }
  return surface.messages();
}

/**
 * The messages of admitted events, which carry `surfaceOp` exactly when they are
 * surface-eligible, when every surface event appends: the surface is then those events in log
 * order, and each one's message is taken as the pass reads it (while the event is still cached).
 * Else undefined (a replace, which only a surface can place). Either way every surface event is
 * pushed onto `found`, in log order.
 */
function appendedMessages(
  events: readonly SessionEvent[],
  found: SurfaceEvent[],
): DerivedMessage[] | undefined {
  const messages: DerivedMessage[] = [];
  const length = events.length;
  let i = 0;
  // Indexed, not for…of: see deriveReplayScript (a frozen array's iterator is not inlined).
  for (; i < length; i++) {
    const op = surfaceOpOf(events[i] as SessionEvent);
    if (op === undefined) continue;
    const event = events[i] as SurfaceEvent;
    found.push(event);
    if (op !== "append") break;
    const message = messageOf(event);
    if (message !== undefined) messages.push(message);
  }
  if (i === length) return messages;
  for (i++; i < length; i++) {
    if (surfaceOpOf(events[i] as SessionEvent) !== undefined) found.push(events[i] as SurfaceEvent);
  }
  return undefined;
}

/** The event's `surfaceOp`, present exactly on the surface-eligible types of an admitted event. */
function surfaceOpOf(event: SessionEvent): SurfaceEvent["surfaceOp"] | undefined {
  return (event as { surfaceOp?: SurfaceEvent["surfaceOp"] }).surfaceOp;
}

/** The event itself when it is frozen, else a frozen copy (of a caller's event, never aliased). */
function frozenEvent(event: SurfaceEvent): SurfaceEvent {
  if (Object.isFrozen(event)) return event;
  const copied = copyJsonValue(event);
  return "value" in copied ? (copied.value as SurfaceEvent) : event;
}
