// An event serialized once, when it is taken in: the JSON text every backend writes, and what the running state reads.
import { CANONICAL_EVENT_MEMBERS, type EventType, type SessionEvent } from "../generated.js";
import { freezeParsed } from "./json-value.js";
import { isSurfaceEligibleType, TakenSurfaceView, TextMessage } from "./surface.js";
import type { SurfaceEvent } from "./types.js";

/**
 * A checked event as the store hands it to a backend: serialized once, when the store took it in,
 * so that nothing the caller does to its value afterwards changes what is written. `data` and the
 * surface markers are serialized apart (the SQL backends keep them in columns of their own) and
 * `json`, the whole event in the canonical member order (its JSONL line without the newline), is
 * made of them. A backend that needs the event as a value (a turn marker's turn) reads
 * {@link event}, which parses `json` back.
 */
export class SerializedEvent {
  readonly seq: number;
  readonly type: EventType;
  readonly time: number;
  /**
   * The event as JSON text: `type`, `seq`, `time`, `data`, then `sourceEventSeqs` and `surfaceOp`
   * when present, whatever order the caller gave them in (the order the SQL backends read rows
   * back in); `data` keeps its members' order.
   */
  readonly json: string;
  /** Where `data`'s text ends in {@link json} (its start is found when it is first asked for). */
  readonly #dataEnd: number;
  #data: string | undefined;
  /** `sourceEventSeqs` as JSON text; undefined when the event has none. */
  readonly sourceEventSeqs: string | undefined;
  /** `surfaceOp` as JSON text; undefined when the event has none. */
  readonly surfaceOp: string | undefined;
  #event: SessionEvent | undefined;
  #view: SessionEvent | undefined;

  private constructor(value: SessionEvent, owned: boolean, text?: string) {
    const { sourceEventSeqs, surfaceOp } = value as {
      readonly sourceEventSeqs?: unknown;
      readonly surfaceOp?: unknown;
    };
    const seqs = sourceEventSeqs === undefined ? undefined : JSON.stringify(sourceEventSeqs);
    const op = surfaceOp === undefined ? undefined : JSON.stringify(surfaceOp);
    if (text !== undefined || inCanonicalOrder(value)) {
      // The common case: one JSON.stringify of the whole event, a flat text (cheaper to write
      // than one joined of parts), and `data` a slice of it, taken when asked for (most events'
      // `data` is only ever written as part of the line): it ends before the surface markers,
      // whose text is the one JSON.stringify gives them alone.
      const json = text ?? JSON.stringify(value);
      let end = json.length - 1;
      if (seqs !== undefined) end -= SEQS_MEMBER.length + seqs.length;
      if (op !== undefined) end -= OP_MEMBER.length + op.length;
      this.json = json;
      this.#dataEnd = end;
    } else {
      // One JSON.stringify of the data (the bulk of an event); the envelope's members are joined
      // around it, in the canonical order, without copying it.
      const data = JSON.stringify(value.data) as string;
      let json = `{"type":${JSON.stringify(value.type)},"seq":${value.seq},"time":${value.time}${DATA_MEMBER}${data}`;
      if (seqs !== undefined) json += `${SEQS_MEMBER}${seqs}`;
      if (op !== undefined) json += `${OP_MEMBER}${op}`;
      this.json = `${json}}`;
      this.#data = data;
      this.#dataEnd = 0;
    }
    this.sourceEventSeqs = seqs;
    this.surfaceOp = op;
    this.seq = value.seq;
    this.type = value.type;
    this.time = value.time;
    if (owned) this.#event = value;
  }

  /**
   * Serializes a valid event that is the store's own (read from storage, or made by the store,
   * like a repair's closers). A frozen one is kept as {@link event}; any other is read back from
   * the text when asked for, so that the result never aliases a value someone may change.
   */
  static of(event: SessionEvent): SerializedEvent {
    return new SerializedEvent(event, Object.isFrozen(event));
  }

  /**
   * Serializes a caller's value, checked already (valid and lossless JSON), at once: the result
   * shares nothing with it. Its view for the running state is taken now too: the envelope, the
   * surface markers and the members of `data` the invariants read (turn, step, callId, and a
   * result's error code); for a message-producing event, the message it produces is kept as the
   * text of its `data` (see {@link TextMessage}). `text`, when given, is `JSON.stringify(value)` of
   * a value whose members are in the canonical order ({@link inCanonicalOrder}), made by a caller
   * that serializes a whole batch before it takes the views.
   * @internal
   */
  static take(value: SessionEvent, text?: string): SerializedEvent {
    const serialized = new SerializedEvent(value, false, text);
    const data = value.data as {
      turn?: unknown;
      step?: unknown;
      callId?: unknown;
      isError?: unknown;
      error?: { code?: unknown };
      content?: readonly unknown[];
    };
    if (!isSurfaceEligibleType(value.type)) {
      serialized.#view = {
        type: value.type,
        seq: value.seq,
        time: value.time,
        data: { turn: data.turn, step: data.step, callId: data.callId },
      } as unknown as SessionEvent;
      return serialized;
    }
    const { type, surfaceOp, sourceEventSeqs } = value as SurfaceEvent;
    // An assistant message with no content produces no message (see messageOf).
    const produces = type !== "assistant/message" || (data.content?.length ?? 0) > 0;
    serialized.#view = new TakenSurfaceView(
      value as SurfaceEvent,
      {
        turn: data.turn,
        step: data.step,
        callId: data.callId,
        isError: data.isError,
        error: data.error === undefined ? undefined : { code: data.error.code },
      },
      {
        surfaceOp: typeof surfaceOp === "string" ? surfaceOp : { ...surfaceOp },
        sourceEventSeqs: sourceEventSeqs?.slice(),
      },
      produces ? new TextMessage(type, serialized.data) : undefined,
    ) as unknown as SessionEvent;
    return serialized;
  }

  /**
   * `data` as JSON text: a slice of {@link json}, after the envelope's first members (a known
   * type, two numbers: `,"data":` first occurs where data starts).
   */
  get data(): string {
    this.#data ??= this.json.slice(
      this.json.indexOf(DATA_MEMBER) + DATA_MEMBER.length,
      this.#dataEnd,
    );
    return this.#data;
  }

  /** The event read back from {@link json}, frozen: parsed when first asked for, then kept. */
  get event(): SessionEvent {
    this.#event ??= freezeParsed(JSON.parse(this.json) as SessionEvent);
    return this.#event;
  }

  /**
   * `data` as a value, for a reader that only looks at it once (a title): the
   * event's own when it is at hand, else parsed from {@link data} for this read alone (neither
   * frozen nor kept, which {@link event} would do to the whole event).
   * @internal
   */
  readData(): unknown {
    return this.#event === undefined ? JSON.parse(this.data) : this.#event.data;
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

const DATA_MEMBER = ',"data":';
const SEQS_MEMBER = ',"sourceEventSeqs":';
const OP_MEMBER = ',"surfaceOp":';

const CANONICAL_ORDER: readonly string[] = CANONICAL_EVENT_MEMBERS;
/** Where `data`, the last member every event has, stands in the canonical order. */
const DATA_AT = CANONICAL_ORDER.indexOf("data");

/**
 * Whether the members of a valid event come in the canonical order (`type`, `seq`, `time`,
 * `data`, then `sourceEventSeqs` and `surfaceOp` when present), so that `JSON.stringify` of the
 * whole event writes its canonical JSON text.
 */
export function inCanonicalOrder(event: SessionEvent): boolean {
  let next = 0;
  for (const member in event) {
    const at = CANONICAL_ORDER.indexOf(member, next);
    // An unknown member, one out of order, or one every event has (`data` and those before it)
    // skipped: only the surface markers after `data` may be absent.
    if (at === -1 || (next <= DATA_AT && at !== next)) return false;
    next = at + 1;
  }
  return next > DATA_AT;
}

/** Serializes events that are the store's own (see {@link SerializedEvent.of}), e.g. to call a backend directly. */
export function serializeEvents(events: readonly SessionEvent[]): SerializedEvent[] {
  return events.map((event) => SerializedEvent.of(event));
}
