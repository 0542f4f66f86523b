// An event serialized once, when it is taken in: the JSON text every backend writes, and what the running state reads.
import { type EventType, SEARCHABLE_EVENT_MEMBERS, type SessionEvent } from "../generated.js";
import { freezeParsed } from "./json-value.js";
import { searchableText } from "./search-text.js";
import { titleFromContent } from "./session-title.js";
import { isSurfaceEligibleType } from "./surface.js";

const NO_MARKERS = { seqs: undefined, op: undefined } as const;

/** How many characters a non-negative safe integer takes in JSON text. */
function digits(n: number): number {
  let count = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) count++;
  return count;
}

/**
 * A checked event as the store hands it to a backend: serialized once, when the store took it in,
 * so that nothing the caller does to its value afterwards changes what is written. `json` is the
 * whole event (its JSONL line without the newline); the members the SQL backends keep in columns
 * of their own are read out of it when asked for. A backend that needs the event as a value (a search
 * text, a title) reads {@link event}, which parses `json` back.
 */
export class SerializedEvent {
  readonly seq: number;
  readonly type: EventType;
  readonly time: number;
  /** The event as JSON text, its members in the order given (what `JSON.stringify` writes). */
  readonly json: string;
  #event: SessionEvent | undefined;
  #view: SessionEvent | undefined;
  #data: string | undefined;
  #markers: { readonly seqs: string | undefined; readonly op: string | undefined } | undefined;

  private constructor(value: SessionEvent, owned: boolean) {
    // One call: the members the SQL backends keep apart are read out of this text when asked for
    // (it never changes), so a backend that writes lines pays for nothing else.
    this.json = JSON.stringify(value);
    this.seq = value.seq;
    this.type = value.type;
    this.time = value.time;
    if (owned) this.#event = value;
  }

  /**
   * Serializes a valid event that is the store's own (frozen: read from storage, or made by the
   * store, like a repair's closers); {@link event} is then that value.
   */
  static of(event: SessionEvent): SerializedEvent {
    return new SerializedEvent(event, Object.isFrozen(event));
  }

  /**
   * Serializes a caller's value, checked already (valid and lossless JSON), at once: the result
   * shares nothing with it. Its view for the running state is taken now too: the event read back
   * for a surface-eligible type (the surface keeps it), else the envelope and the members of
   * `data` the invariants read of such an event (turn, step, callId).
   * @internal
   */
  static take(value: SessionEvent): SerializedEvent {
    const serialized = new SerializedEvent(value, false);
    if (!isSurfaceEligibleType(value.type)) {
      const data = value.data as { turn?: unknown; step?: unknown; callId?: unknown };
      serialized.#view = {
        type: value.type,
        seq: value.seq,
        time: value.time,
        data: { turn: data.turn, step: data.step, callId: data.callId },
      } as unknown as SessionEvent;
    }
    return serialized;
  }

  /** `data` as JSON text: a slice of {@link json} (no copy) when the members stand in the usual order. */
  get data(): string {
    this.#data ??= this.#dataText();
    return this.#data;
  }

  /**
   * `data`'s text: cut out of {@link json} when the members stand in the usual order (type, seq,
   * time, data, then the surface markers), else serialized from the event read back. Seq and time
   * are safe integers and the type one of the known ones: their texts are what JSON.stringify
   * writes, so where each member's name must stand is known, and checked without building the head.
   */
  #dataText(): string {
    const json = this.json;
    const atSeq = 9 + this.type.length;
    const atTime = atSeq + 8 + digits(this.seq);
    const atData = atTime + 8 + digits(this.time);
    const usual =
      json.startsWith('{"type":"', 0) &&
      json.startsWith('","seq":', atSeq) &&
      json.startsWith(',"time":', atTime) &&
      json.startsWith(',"data":', atData);
    if (usual) {
      const { seqs, op } = this.#surfaceMarkers();
      if (seqs === undefined && op === undefined) {
        // No member may follow data (the schema allows none but the surface markers).
        return json.slice(atData + 8, json.length - 1);
      }
      let tail = op === undefined ? "}" : `,"surfaceOp":${op}}`;
      if (seqs !== undefined) tail = `,"sourceEventSeqs":${seqs}${tail}`;
      if (json.endsWith(tail)) return json.slice(atData + 8, json.length - tail.length);
    }
    return JSON.stringify(this.event.data) as string;
  }

  /** `sourceEventSeqs` as JSON text; undefined when the event has none. */
  get sourceEventSeqs(): string | undefined {
    return this.#surfaceMarkers().seqs;
  }

  /** `surfaceOp` as JSON text; undefined when the event has none. */
  get surfaceOp(): string | undefined {
    return this.#surfaceMarkers().op;
  }

  /** The surface markers' texts: only a surface-eligible event carries them (and is read back). */
  #surfaceMarkers(): { readonly seqs: string | undefined; readonly op: string | undefined } {
    if (this.#markers === undefined) {
      if (isSurfaceEligibleType(this.type)) {
        const { sourceEventSeqs, surfaceOp } = this.event as {
          sourceEventSeqs?: unknown;
          surfaceOp?: unknown;
        };
        this.#markers = {
          seqs: sourceEventSeqs === undefined ? undefined : JSON.stringify(sourceEventSeqs),
          op: surfaceOp === undefined ? undefined : JSON.stringify(surfaceOp),
        };
      } else {
        this.#markers = NO_MARKERS;
      }
    }
    return this.#markers;
  }

  /** The event read back from {@link json}, frozen: parsed when first asked for, then kept. */
  get event(): SessionEvent {
    this.#event ??= freezeParsed(JSON.parse(this.json) as SessionEvent);
    return this.#event;
  }

  /**
   * What the running state checks and applies: the event itself, or (for an event the surface
   * does not keep, taken from a caller) its envelope and the members of `data` the invariants read.
   * @internal
   */
  get view(): SessionEvent {
    return this.#view ?? this.event;
  }
}

/** Serializes events that are the store's own (see {@link SerializedEvent.of}), e.g. to call a backend directly. */
export function serializeEvents(events: readonly SessionEvent[]): SerializedEvent[] {
  return events.map((event) => SerializedEvent.of(event));
}

/** The JSONL lines of `events`: each one's JSON text and a newline. */
export function serializedLines(events: readonly SerializedEvent[]): string {
  let text = "";
  for (let i = 0; i < events.length; i++) text += `${(events[i] as SerializedEvent).json}\n`;
  return text;
}

/** The searchable text of a serialized event (see `searchableText`), reading it back only when its type has any. */
export function serializedSearchText(event: SerializedEvent): string {
  return hasSearchableText(event.type) ? searchableText(event.event) : "";
}

/** The title the first `user/message` among `events` gives a session (see `derivedTitle`). */
export function serializedTitle(events: readonly SerializedEvent[]): string | undefined {
  for (const event of events) {
    if (event.type !== "user/message") continue;
    return titleFromContent((event.event.data as { content?: unknown }).content);
  }
  return undefined;
}

function hasSearchableText(type: string): boolean {
  return Object.hasOwn(SEARCHABLE_EVENT_MEMBERS, type);
}
