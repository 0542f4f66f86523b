// The model calls a session's log recorded, one per step, in log order: what replay answers from.
import type { SessionEvent, StreamChunk } from "../generated.js";
import type { RecordedCall } from "./types.js";

type Draft = { -readonly [K in keyof RecordedCall]: RecordedCall[K] } & { chunks: StreamChunk[] };

/**
 * Every step of `events`, inherited ones included: an agent replayed against a fork child makes
 * the parent's calls first, then the child's own.
 */
export function recordedCalls(events: readonly SessionEvent[]): RecordedCall[] {
  const calls: Draft[] = [];
  let open: Draft | undefined;
  for (const event of events) {
    switch (event.type) {
      case "step/start":
        open = { start: event.data, chunks: [], end: undefined, error: undefined };
        calls.push(open);
        break;
      case "assistant/chunk":
        open?.chunks.push(event.data.chunk);
        break;
      case "step/end":
        if (open !== undefined) open.end = event.data;
        open = undefined;
        break;
      case "turn/end": {
        const reason = event.data.reason;
        if (reason.kind !== "error") break;
        const failed = calls.findLast(
          (c) => c.start.turn === event.data.turn && c.start.step === reason.step,
        );
        if (failed !== undefined) failed.error = reason;
        break;
      }
      default:
        break;
    }
  }
  return calls;
}
