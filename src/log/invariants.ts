// The log invariants of docs/log.md as pure "validate, then apply" steps over a small running state.

import { type InvariantRule, StorageError, show } from "../errors.js";
import {
  EVENT_TYPES,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  validateSessionEvent,
} from "../generated.js";
import { problemText, schemaProblem } from "../util/schema-problem.js";
import { invalidEvent, isSeq, missingSurfaceOpMessage } from "./event-errors.js";
import { type JsonValueProblem, jsonValueProblem, parsedDepthProblem } from "./json-value.js";
import { PendingCalls } from "./pending-calls.js";
import { inCanonicalOrder, SerializedEvent } from "./serialized-event.js";
import { isSurfaceEligibleType, isSurfaceEvent, Surface } from "./surface.js";
import type { SurfaceEvent } from "./types.js";

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);
/** The envelope members only surface-eligible events may carry. */
const SURFACE_MARKERS = ["surfaceOp", "sourceEventSeqs"] as const;

/** Where a turn marker stands: the last `turn/start` or `turn/end` seen. */
export interface TurnMarker {
  readonly seq: number;
  readonly type: "turn/start" | "turn/end";
  readonly turn: number;
}

/** The running state that the invariants need; everything else is derived from the events. */
export class LogState {
  /** The next seq (the number of events). */
  length = 0;
  /** The highest turn number started so far (0 before the first turn). */
  lastTurn = 0;
  openTurn: number | undefined;
  /** The highest step number started in the open turn. */
  lastStep = 0;
  openStep: number | undefined;
  /** Unanswered tool calls of the open step (the tool-pairing rule). */
  openCalls = new PendingCalls();
  lastTurnMarker: TurnMarker | undefined;
  surface = new Surface();
  /** While a batch is tried: how to return to the state before it. */
  #journal: { readonly saved: LogState; readonly undo: (() => void)[] } | undefined;

  /** Starts trying a batch: `rollback()` returns the state to this point in O(batch). */
  begin(): void {
    const saved = new LogState();
    saved.length = this.length;
    saved.lastTurn = this.lastTurn;
    saved.openTurn = this.openTurn;
    saved.lastStep = this.lastStep;
    saved.openStep = this.openStep;
    saved.openCalls = this.openCalls.clone();
    saved.lastTurnMarker = this.lastTurnMarker;
    this.#journal = { saved, undo: [] };
  }

  /** Undoes everything applied since `begin()`. */
  rollback(): void {
    const journal = this.#journal;
    if (journal === undefined) return;
    this.#journal = undefined;
    for (let i = journal.undo.length - 1; i >= 0; i--) (journal.undo[i] as () => void)();
    const { saved } = journal;
    this.length = saved.length;
    this.lastTurn = saved.lastTurn;
    this.openTurn = saved.openTurn;
    this.lastStep = saved.lastStep;
    this.openStep = saved.openStep;
    this.openCalls = saved.openCalls;
    this.lastTurnMarker = saved.lastTurnMarker;
  }

  /**
   * Puts the state at the end of a settled log: just after `turnEnd`, its last `turn/end`, where no
   * turn, step or tool call is open (the surface is brought there separately).
   */
  settleAt(turnEnd: SessionEvent & { readonly type: "turn/end" }): void {
    this.length = turnEnd.seq + 1;
    this.lastTurn = turnEnd.data.turn;
    this.openTurn = undefined;
    this.lastStep = 0;
    this.openStep = undefined;
    this.openCalls.clear();
    this.lastTurnMarker = { seq: turnEnd.seq, type: turnEnd.type, turn: turnEnd.data.turn };
  }

  /** A copy that evolves independently. */
  clone(): LogState {
    const copy = new LogState();
    copy.length = this.length;
    copy.lastTurn = this.lastTurn;
    copy.openTurn = this.openTurn;
    copy.lastStep = this.lastStep;
    copy.openStep = this.openStep;
    copy.openCalls = this.openCalls.clone();
    copy.lastTurnMarker = this.lastTurnMarker;
    copy.surface = this.surface.clone();
    return copy;
  }

  /**
   * Checks one event against the state (which it does not change).
   * @throws InvalidEventError naming the rule, the seq and the batch index.
   */
  check(event: SessionEvent, index: number): void {
    // No closure per event: `breaks` builds the error only when a rule is broken.
    switch (event.type) {
      case "turn/start":
        if (this.openTurn !== undefined) {
          breaks(
            event,
            index,
            "turn-order",
            "no open turn",
            `turn/start while turn ${this.openTurn} is open`,
          );
        }
        if (event.data.turn !== this.lastTurn + 1) {
          breaks(
            event,
            index,
            "turn-order",
            `turn ${this.lastTurn + 1}`,
            `turn ${event.data.turn}`,
          );
        }
        break;
      case "turn/end":
        this.#needTurn(event, index, "turn-order");
        if (this.openStep !== undefined) {
          breaks(
            event,
            index,
            "turn-order",
            "no open step at turn/end",
            `step ${this.openStep} open`,
          );
        }
        break;
      case "step/start":
        this.#needTurn(event, index, "step-order");
        if (this.openStep !== undefined) {
          breaks(
            event,
            index,
            "step-order",
            "no open step",
            `step/start while step ${this.openStep} is open`,
          );
        }
        if (event.data.step !== this.lastStep + 1) {
          breaks(
            event,
            index,
            "step-order",
            `step ${this.lastStep + 1}`,
            `step ${event.data.step}`,
          );
        }
        break;
      case "step/end":
      case "assistant/chunk":
      case "assistant/message":
      case "tool/call":
        this.#needStep(event, index);
        break;
      case "tool/result":
        this.#needStep(event, index);
        if (!this.openCalls.has(event.data.callId) && !isInterruptedResult(event)) {
          breaks(
            event,
            index,
            "tool-pairing",
            `a tool/call with callId ${show(event.data.callId)} unanswered in step ${this.openStep}`,
            "none",
          );
        }
        break;
      case "steering/message":
      case "compact/start":
      case "compact/end":
      case "hook/invoked":
      case "hook/result":
        this.#needTurn(event, index, "turn-scope");
        break;
      default:
        // user/message, context/message, prompt/blocked, todo/write, compact/summary and
        // foreign/record may stand anywhere.
        break;
    }

    if (isSurfaceEvent(event)) this.#checkSurface(event, index);
  }

  /** The event's turn is the open one. */
  #needTurn(event: SessionEvent, index: number, rule: InvariantRule): void {
    const turn = (event.data as { turn?: number }).turn;
    if (this.openTurn === undefined) {
      breaks(event, index, rule, "an open turn", `no open turn for ${event.type}`);
    }
    if (turn !== this.openTurn) breaks(event, index, rule, `turn ${this.openTurn}`, `turn ${turn}`);
  }

  /** The event's turn and step are the open ones. */
  #needStep(event: SessionEvent, index: number): void {
    this.#needTurn(event, index, "step-order");
    const step = (event.data as { step?: number }).step;
    if (this.openStep === undefined) {
      breaks(event, index, "step-order", "an open step", `no open step for ${event.type}`);
    }
    if (step !== this.openStep) {
      breaks(event, index, "step-order", `step ${this.openStep}`, `step ${step}`);
    }
  }

  /** The provenance and replace rules of a surface event. */
  #checkSurface(event: SurfaceEvent, index: number): void {
    const sources = event.sourceEventSeqs ?? [];
    const op = event.surfaceOp;
    // Seqs in increasing order below the event's own (as writers list them: an assistant message
    // lists each of its chunks) break neither rule; only a replace needs them as a set.
    if (op === "append" && increasingBelow(sources, event.seq)) return;
    const seen = new Set<number>();
    for (const s of sources) {
      if (s >= event.seq)
        breaks(event, index, "provenance", `source seqs lower than ${event.seq}`, `${s}`);
      if (seen.has(s)) breaks(event, index, "provenance", "no duplicate source seqs", `${s} twice`);
      seen.add(s);
    }
    if (op !== "append") {
      const from = this.surface.positionOf(op.start);
      const to = this.surface.positionOf(op.end);
      if (from < 0)
        breaks(
          event,
          index,
          "replace",
          `start ${op.start} on the surface`,
          "a seq not on the surface",
        );
      if (to < 0)
        breaks(event, index, "replace", `end ${op.end} on the surface`, "a seq not on the surface");
      if (from > to)
        breaks(
          event,
          index,
          "replace",
          `start ${op.start} not after end ${op.end} in surface order`,
          "start after end",
        );
      const missing = this.surface.range(from, to).filter((s) => !seen.has(s));
      if (missing.length > 0) {
        breaks(
          event,
          index,
          "replace",
          "sourceEventSeqs to include every node it removes",
          `missing ${missing.join(", ")}`,
        );
      }
    }
  }

  /** Applies a checked event. */
  apply(event: SessionEvent): void {
    this.length = event.seq + 1;
    switch (event.type) {
      case "turn/start":
        this.openTurn = event.data.turn;
        this.lastTurn = event.data.turn;
        this.lastStep = 0;
        this.lastTurnMarker = { seq: event.seq, type: event.type, turn: event.data.turn };
        break;
      case "turn/end":
        this.openTurn = undefined;
        this.lastTurnMarker = { seq: event.seq, type: event.type, turn: event.data.turn };
        break;
      case "step/start":
        this.openStep = event.data.step;
        this.lastStep = event.data.step;
        break;
      case "step/end":
        this.openStep = undefined;
        break;
      default:
        break;
    }
    this.openCalls.follow(event);
    if (isSurfaceEvent(event)) {
      // Outside a batch being tried nothing is undone: no undo step is made.
      if (this.#journal === undefined) this.surface.advance(event);
      else this.#journal.undo.push(this.surface.apply(event));
    }
  }
}

/** Whether `seqs` go up strictly, each below `seq`. */
function increasingBelow(seqs: readonly number[], seq: number): boolean {
  let previous = -1;
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i] as number;
    if (s <= previous || s >= seq) return false;
    previous = s;
  }
  return true;
}

/** A synthetic result that answers no call: `isError` with `error.code` "interrupted". */
export function isInterruptedResult(event: SessionEvent): boolean {
  return (
    event.type === "tool/result" && event.data.isError && event.data.error?.code === "interrupted"
  );
}

/** How an incoming event is to be taken in. */
export type Ownership =
  /**
   * A caller's value: checked for lossless JSON and against the schema where it stands, then
   * serialized at once (see {@link SerializedEvent.take}); the value itself is not kept. The
   * message a message-producing event gives is kept as the text of its `data`.
   */
  | "copy"
  /**
   * Fresh from `JSON.parse` and handed over: lossless by construction, checked for depth and kept
   * as it is (unfrozen: nothing else holds it).
   */
  | "parsed";

/** Why a value is refused, as far as it is known before the value's place in the log is. */
type Refusal =
  | { readonly kind: "unsupported"; readonly type: string }
  | {
      readonly kind: "rule";
      readonly rule: InvariantRule;
      readonly message: string;
      readonly instancePath: string;
    };

/**
 * A value {@link takeEvent} refused: the `type` and `seq` the caller gave (read when it was taken)
 * and the reason, turned into the error once the seq it stands at is known.
 */
export class RefusedEvent {
  readonly type: unknown;
  readonly seq: unknown;
  readonly refusal: Refusal;

  constructor(type: unknown, seq: unknown, refusal: Refusal) {
    this.type = type;
    this.seq = seq;
    this.refusal = refusal;
  }
}

/**
 * An incoming value once taken in: the schema-valid event itself (parsed), the serialized one
 * (a caller's), or why it is refused.
 */
export type TakenEvent = SessionEvent | SerializedEvent | RefusedEvent;

/**
 * A batch taken in at once: every value checked against the schema and serialized (or, parsed,
 * kept as it is), so that nothing the caller does to its array or values afterwards changes it.
 * Only {@link TakenBatch.take} makes one; the log checks its events against its state when it is
 * prepared, without taking them in again.
 */
export class TakenBatch {
  readonly #events: readonly TakenEvent[];

  private constructor(events: readonly TakenEvent[]) {
    this.#events = events;
  }

  /**
   * Takes every value of `batch` in (see {@link takeEvent}). Refusals are kept, not thrown: the
   * log reports them in batch order, among the rules that depend on its state.
   */
  static take(batch: readonly unknown[], ownership: Ownership): TakenBatch {
    const length = batch.length;
    const events = new Array<TakenEvent>(length);
    if (!takesWhole(batch, ownership)) {
      for (let i = 0; i < length; i++) events[i] = takeEvent(batch[i], ownership);
    } else if (ownership === "parsed") {
      for (let i = 0; i < length; i++) events[i] = batch[i] as SessionEvent;
    } else {
      // Serialized in a pass of its own too, then viewed: a pass at a time costs less.
      const texts = new Array<string | undefined>(length);
      for (let i = 0; i < length; i++) {
        const value = batch[i] as SessionEvent;
        texts[i] = inCanonicalOrder(value) ? JSON.stringify(value) : undefined;
      }
      for (let i = 0; i < length; i++) {
        events[i] = SerializedEvent.take(batch[i] as SessionEvent, texts[i]);
      }
    }
    return new TakenBatch(events);
  }

  /** `batch` itself when it was taken already, else {@link take}n now. */
  static of(batch: readonly unknown[] | TakenBatch, ownership: Ownership): TakenBatch {
    return TakenBatch.is(batch) ? batch : TakenBatch.take(batch as readonly unknown[], ownership);
  }

  /** Whether `value` is a batch {@link take} made (not merely one that looks like it). */
  static is(value: unknown): value is TakenBatch {
    return typeof value === "object" && value !== null && #events in value;
  }

  /** The taken values, in batch order. */
  get events(): readonly TakenEvent[] {
    return this.#events;
  }
}

/**
 * Whether every value of a batch passes {@link takeEvent}'s checks: lossless JSON (a caller's
 * value) or within the depth limit (a parsed one), then the generated validator. Each
 * check runs over the whole batch in turn (the first one first, so the validator never reads a
 * value it refuses), which costs less than taking each value through both: their code and the
 * batch stay in the processor's caches (a caller's batch is taken in about a fifth less time).
 * False at the first value that fails: the batch is then taken a value at a time, which finds each
 * one's refusal.
 */
function takesWhole(batch: readonly unknown[], ownership: Ownership): boolean {
  const lossless = ownership === "copy" ? jsonValueProblem : parsedDepthProblem;
  for (let i = 0; i < batch.length; i++) if (lossless(batch[i]) !== undefined) return false;
  for (let i = 0; i < batch.length; i++) if (!validateSessionEvent(batch[i])) return false;
  return true;
}

/**
 * Takes one raw value in, before its seq is known: checks it for lossless JSON and runs the
 * generated validator, then serializes a caller's value (a parsed value is kept as it is).
 * Returns the serialized or parsed event, or a {@link RefusedEvent} naming the
 * first rule it breaks in this order: a known type, the surface marker, json-value, the schema.
 * Reads the value only now; never throws for a bad value.
 */
export function takeEvent(raw: unknown, ownership: Ownership): TakenEvent {
  // The common case first: a lossless value the generated validator accepts is admitted as it is
  // (a caller's serialized at once, without a copy).
  let problem: JsonValueProblem | undefined;
  if (ownership === "copy") {
    problem = jsonValueProblem(raw);
    if (problem === undefined && validateSessionEvent(raw)) {
      return SerializedEvent.take(raw as SessionEvent);
    }
  } else {
    problem = parsedDepthProblem(raw);
    if (problem === undefined && validateSessionEvent(raw)) return raw as SessionEvent;
  }
  const envelope = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const type = envelope.type;
  return new RefusedEvent(type, envelope.seq, refusalOf(envelope, problem));
}

/** The reason a taken value is refused (the validator's errors are those of the value just checked). */
function refusalOf(
  envelope: Record<string, unknown>,
  problem: JsonValueProblem | undefined,
): Refusal {
  const type = envelope.type;
  if (typeof type === "string" && !KNOWN_TYPES.has(type)) return { kind: "unsupported", type };
  if (typeof type === "string") {
    // A marker present as `undefined` is no marker: JSON drops it, so it would be stored without one.
    const eligible = isSurfaceEligibleType(type);
    if (eligible && envelope.surfaceOp === undefined) {
      return {
        kind: "rule",
        rule: "surface-marker",
        message: missingSurfaceOpMessage(type),
        instancePath: "",
      };
    }
    if (!eligible) {
      for (const key of SURFACE_MARKERS) {
        if (envelope[key] !== undefined) {
          return {
            kind: "rule",
            rule: "surface-marker-forbidden",
            message: `expected no ${key} on ${type}, got one`,
            instancePath: `/${key}`,
          };
        }
      }
    }
  }
  if (problem !== undefined) {
    return {
      kind: "rule",
      rule: "json-value",
      message: `expected lossless JSON, got ${problem.found} at ${problem.path || "/"}`,
      instancePath: problem.path,
    };
  }
  const found = schemaProblem(validateSessionEvent.errors);
  return {
    kind: "rule",
    rule: "schema",
    message: `expected a valid ${show(type)} event, got: ${problemText(found)}`,
    instancePath: found.instancePath,
  };
}

/**
 * Admits a taken value as the event at `seq` (batch index `index`): seq-contiguous first, then the
 * reason it was refused, if it was. Returns the event.
 * @throws InvalidEventError for a rule, StorageError FORMAT_UNSUPPORTED for an unknown type.
 */
export function settleEvent(taken: TakenEvent, seq: number, index: number): SessionEvent {
  const own = taken.seq;
  // The seq the error names: the event's own when it can be one, else the one its place calls for.
  if (Number.isSafeInteger(own) && own !== seq) {
    throw invalidEvent(
      taken.type,
      index,
      isSeq(own) ? own : seq,
      "seq-contiguous",
      `expected seq ${seq} (the index in the log), got ${own}`,
      "/seq",
    );
  }
  if (taken instanceof SerializedEvent) return taken.view;
  if (!(taken instanceof RefusedEvent)) return taken;
  const refusal = taken.refusal;
  if (refusal.kind === "unsupported") {
    throw new StorageError(
      "FORMAT_UNSUPPORTED",
      `expected an event type of session format version ${SESSION_FORMAT_VERSION}, got ${show(refusal.type)} at seq ${seq}`,
      { found: refusal.type, supported: SESSION_FORMAT_VERSION },
    );
  }
  throw invalidEvent(taken.type, index, seq, refusal.rule, refusal.message, refusal.instancePath);
}

/**
 * Admits one raw value as the event at `seq`: {@link takeEvent}, then {@link settleEvent}.
 * Returns the event.
 * @throws InvalidEventError for a rule, StorageError FORMAT_UNSUPPORTED for an unknown type.
 */
export function admitEvent(
  raw: unknown,
  seq: number,
  index: number,
  ownership: Ownership,
): SessionEvent {
  return settleEvent(takeEvent(raw, ownership), seq, index);
}

/** Throws the InvalidEventError of an event that breaks `rule`. */
function breaks(
  event: SessionEvent,
  index: number,
  rule: InvariantRule,
  expected: string,
  got: string,
): never {
  throw invalidEvent(event.type, index, event.seq, rule, `expected ${expected}, got ${got}`);
}
