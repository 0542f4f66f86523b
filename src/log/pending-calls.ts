// The log's tool-pairing rule as running state: the tool calls of the open step not yet answered, and the call each tool/result answers.
import type { SessionEvent, ToolCallEvent } from "../generated.js";

/**
 * The `tool/call`s of the open step that no `tool/result` has answered yet, by call id, in call
 * order. A `tool/result` answers the pending call of its own step with its `callId`; a step's
 * start and end leave no call pending, so a call id an agent uses again in a later step (or turn)
 * names that step's call, never an earlier one. The log's invariants check results against it;
 * every reader that pairs a result with its call (timelines, exports, the viewer) follows it too.
 */
export class PendingCalls {
  #calls = new Map<string, ToolCallEvent>();

  /**
   * Follows one event of the log, in log order: a `step/start` or `step/end` clears the pending
   * calls, a `tool/call` becomes pending, a `tool/result` answers its pending call. Returns the
   * call a `tool/result` answers (no longer pending), undefined for one that answers none (a
   * synthetic interrupted result may) and for every other event.
   */
  follow(event: SessionEvent): ToolCallEvent | undefined {
    switch (event.type) {
      case "step/start":
      case "step/end":
        this.#calls.clear();
        return undefined;
      case "tool/call":
        this.#calls.set(event.data.callId, event);
        return undefined;
      case "tool/result": {
        const call = this.#calls.get(event.data.callId);
        if (call !== undefined) this.#calls.delete(event.data.callId);
        return call;
      }
      default:
        return undefined;
    }
  }

  /** Whether a call with `callId` is pending in the open step. */
  has(callId: string): boolean {
    return this.#calls.has(callId);
  }

  /** How many calls are pending. */
  get size(): number {
    return this.#calls.size;
  }

  /** The pending calls, in call order. */
  calls(): IterableIterator<ToolCallEvent> {
    return this.#calls.values();
  }

  /** No call pending (the state after a step ends). */
  clear(): void {
    this.#calls.clear();
  }

  /** A copy that evolves independently. */
  clone(): PendingCalls {
    const copy = new PendingCalls();
    copy.#calls = new Map(this.#calls);
    return copy;
  }
}
