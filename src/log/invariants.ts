// The log invariants of log.md as pure "validate, then apply" steps over a small running state.

import { InvalidEventError, type InvariantRule, StorageError, show } from "../errors.js";
import {
  EVENT_TYPES,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  validateSessionEvent,
} from "../generated.js";
import { copyJsonValue, freezeParsedJsonValue, type JsonValueProblem } from "./json-value.js";
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
  /** Unanswered tool calls of the open step: callId → seq of the `tool/call`, in call order. */
  openCalls = new Map<string, number>();
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
    saved.openCalls = new Map(this.openCalls);
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

  /** A copy that evolves independently. */
  clone(): LogState {
    const copy = new LogState();
    copy.length = this.length;
    copy.lastTurn = this.lastTurn;
    copy.openTurn = this.openTurn;
    copy.lastStep = this.lastStep;
    copy.openStep = this.openStep;
    copy.openCalls = new Map(this.openCalls);
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
        // user/message, context/message, prompt/blocked, todo/write and compact/summary may stand anywhere.
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
    const seen = new Set<number>();
    for (const s of sources) {
      if (s >= event.seq)
        breaks(event, index, "provenance", `source seqs lower than ${event.seq}`, `${s}`);
      if (seen.has(s)) breaks(event, index, "provenance", "no duplicate source seqs", `${s} twice`);
      seen.add(s);
    }
    const op = event.surfaceOp;
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
        this.openCalls.clear();
        break;
      case "step/end":
        this.openStep = undefined;
        this.openCalls.clear();
        break;
      case "tool/call":
        this.openCalls.set(event.data.callId, event.seq);
        break;
      case "tool/result":
        this.openCalls.delete(event.data.callId);
        break;
      default:
        break;
    }
    if (isSurfaceEvent(event)) {
      // Outside a batch being tried nothing is undone: no undo step is made.
      if (this.#journal === undefined) this.surface.advance(event);
      else this.#journal.undo.push(this.surface.apply(event));
    }
  }
}

/** A synthetic result that answers no call: `isError` with `error.code` "interrupted". */
export function isInterruptedResult(event: SessionEvent): boolean {
  return (
    event.type === "tool/result" && event.data.isError && event.data.error?.code === "interrupted"
  );
}

/** How an incoming event is to be taken in. */
export type Ownership =
  /** A caller's value: checked for lossless JSON, then copied and frozen. */
  | "copy"
  /** Fresh from `JSON.parse`: lossless by construction, checked for depth and frozen in place. */
  | "parsed";

/**
 * Admits one raw value as the event at `seq`: seq-contiguous first, then the copy (or the in-place
 * freeze) and the generated validator. A refused value is reported by the first rule it breaks in
 * this order: a known type, the surface marker, json-value, the schema. Returns the frozen event.
 * @throws InvalidEventError for a rule, StorageError FORMAT_UNSUPPORTED for an unknown type.
 */
export function admitEvent(
  raw: unknown,
  seq: number,
  index: number,
  ownership: Ownership,
): SessionEvent {
  const envelope = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const ownSeq = Number.isSafeInteger(envelope.seq) ? (envelope.seq as number) : seq;
  if (Number.isSafeInteger(envelope.seq) && envelope.seq !== seq) {
    throw invalidEvent(
      raw,
      index,
      ownSeq,
      "seq-contiguous",
      `expected seq ${seq} (the index in the log), got ${envelope.seq}`,
      "/seq",
    );
  }
  // The common case first: a lossless value the generated validator accepts is admitted as it is.
  let event: unknown;
  let problem: JsonValueProblem | undefined;
  const admitted = ownership === "copy" ? copyJsonValue(raw) : freezeParsedJsonValue(raw);
  if ("problem" in admitted) problem = admitted.problem;
  else event = admitted.value;
  if (problem === undefined && validateSessionEvent(event)) return event as SessionEvent;

  // Refused: the rules that come before the schema name the reason when one of them applies.
  const type = envelope.type;
  if (typeof type === "string" && !KNOWN_TYPES.has(type)) {
    throw new StorageError(
      "FORMAT_UNSUPPORTED",
      `expected an event type of session format version ${SESSION_FORMAT_VERSION}, got ${show(type)} at seq ${ownSeq}`,
      { found: type, supported: SESSION_FORMAT_VERSION },
    );
  }
  if (typeof type === "string") {
    // A marker present as `undefined` is no marker: JSON drops it, so it would be stored without one.
    const eligible = isSurfaceEligibleType(type);
    if (eligible && envelope.surfaceOp === undefined) {
      throw invalidEvent(
        raw,
        index,
        ownSeq,
        "surface-marker",
        `expected surfaceOp on ${type} (a surface-eligible type), got none`,
        "",
      );
    }
    if (!eligible) {
      for (const key of SURFACE_MARKERS) {
        if (envelope[key] !== undefined)
          throw invalidEvent(
            raw,
            index,
            ownSeq,
            "surface-marker-forbidden",
            `expected no ${key} on ${type}, got one`,
            `/${key}`,
          );
      }
    }
  }
  if (problem !== undefined) {
    throw invalidEvent(
      raw,
      index,
      ownSeq,
      "json-value",
      `expected lossless JSON, got ${problem.found} at ${problem.path || "/"}`,
      problem.path,
    );
  }
  const error = validateSessionEvent.errors?.[0];
  const path = error?.instancePath ?? "";
  const extra =
    error?.params && "additionalProperty" in error.params
      ? ` (${error.params.additionalProperty})`
      : "";
  throw invalidEvent(
    raw,
    index,
    ownSeq,
    "schema",
    `expected a valid ${show(type)} event, got: ${path || "/"} ${error?.message ?? "invalid"}${extra}`,
    path,
  );
}

/** Throws the InvalidEventError of an event that breaks `rule`. */
function breaks(
  event: SessionEvent,
  index: number,
  rule: InvariantRule,
  expected: string,
  got: string,
): never {
  throw invalidEvent(event, index, event.seq, rule, `expected ${expected}, got ${got}`);
}

function invalidEvent(
  raw: unknown,
  index: number,
  seq: number,
  rule: InvariantRule,
  message: string,
  instancePath?: string,
): InvalidEventError {
  const type = (raw as { type?: unknown } | null)?.type;
  const what = typeof type === "string" ? type : "event";
  return new InvalidEventError(
    "INVALID_EVENT",
    `${what} at seq ${seq} (index ${index}) breaks ${rule}: ${message}`,
    { seq, index, rule, ...(instancePath === undefined ? {} : { instancePath }) },
  );
}
