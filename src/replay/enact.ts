// Enacts a replay entry as a model stream: the recorded chunks, then the recorded ending.
import type { ReplayEntry, StreamChunk } from "../generated.js";

/** The recorded provider error a `throw` entry replays: its message and, when recorded, its code. */
export class RecordedModelError extends Error {
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.name = "RecordedModelError";
    this.code = code;
  }
}

/** How an entry is enacted. */
export interface EnactOptions {
  /** Cancels the stream: checked before each chunk; the only way a `hang` entry ends. */
  readonly signal?: AbortSignal;
}

/**
 * Streams an entry as the recorded model call did: yields its chunks, then ends (`chunks`),
 * throws a `RecordedModelError` with the recorded message and code (`throw`), or waits until
 * `options.signal` aborts and throws its reason (`hang`, a stream the user cut off).
 * @throws the signal's reason once it aborts; TypeError for a `hang` entry without a signal
 *   (nothing could ever end it, so it fails instead of hanging the test).
 */
export async function* enactEntry(
  entry: ReplayEntry,
  options: EnactOptions = {},
): AsyncGenerator<StreamChunk> {
  const { signal } = options;
  if (entry.kind === "hang" && signal === undefined) {
    throw new TypeError("expected options.signal to end a hang entry, got none");
  }
  for (const chunk of entry.chunks) {
    signal?.throwIfAborted();
    yield chunk;
  }
  signal?.throwIfAborted();
  if (entry.kind === "throw") throw new RecordedModelError(entry.message, entry.code);
  if (entry.kind === "hang" && signal !== undefined) await aborted(signal);
}

/** Settles (rejecting with the reason) when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
