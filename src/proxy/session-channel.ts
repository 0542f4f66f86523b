// One session as the proxy drives it: calls one at a time, in arrival order, recorded or replayed.
import type { ModelRequest, ModelResponse, SessionEvent } from "../generated.js";
import { TurnRecorder } from "../recorder/turn-recorder.js";
import type { Session, SessionStore } from "../store/session-store.js";
import { type ForkPoints, forkPoints } from "./fork-points.js";
import { recordedCalls } from "./recorded-calls.js";
import { closeStepOps } from "./turn-inference.js";
import type { RecordedCall } from "./types.js";

/**
 * A session the proxy records into or replays from. Calls take {@link acquire} in arrival order
 * and hold it until their response is recorded (a recorded call's answer goes to its caller
 * without waiting for it), so two agents on one session never interleave inside a step.
 */
export class SessionChannel {
  /** The session calls go to now: in auto mode, the fork child once the replay diverged. */
  id: string;
  /** Auto mode: the session replayed from before the fork, once forked. */
  replayedFrom: string | undefined;
  #tail: Promise<void> = Promise.resolve();
  /** Record mode: the recorder, the last request recorded, a finished step's response kept until the step ends. */
  recorder: TurnRecorder | undefined;
  previous: ModelRequest | undefined;
  pendingResponse: ModelResponse | undefined;
  /** Replay mode: the recorded calls and how many were answered. */
  calls: readonly RecordedCall[] = [];
  cursor = 0;
  /** Auto mode, while replaying: where a fork may cut the replayed session. */
  forkPoints: ForkPoints | undefined;

  private constructor(id: string) {
    this.id = id;
  }

  /** A channel recording into `session` (opened for writing), resuming after its last request. */
  static async recording(session: Session, now: () => number): Promise<SessionChannel> {
    const channel = new SessionChannel(session.id);
    channel.recorder = new TurnRecorder(session, { now });
    const events = await session.readEvents();
    channel.previous = lastRequest(events);
    return channel;
  }

  /** A channel replaying the calls of the session `id` as the store holds it now. */
  static async replaying(store: SessionStore, id: string): Promise<SessionChannel> {
    const channel = new SessionChannel(id);
    const events = await store.readEvents(id);
    channel.calls = recordedCalls(events);
    channel.forkPoints = forkPoints(events);
    return channel;
  }

  /**
   * Auto mode: switches a replaying channel to recording into `child` (the fork made at the
   * divergence), resuming after the last request the child inherited.
   */
  async recordInto(child: Session, now: () => number): Promise<void> {
    this.replayedFrom = this.id;
    this.id = child.id;
    this.recorder = new TurnRecorder(child, { now });
    this.previous = lastRequest(await child.readEvents());
    this.calls = [];
    this.forkPoints = undefined;
  }

  /** Waits for the calls before this one; resolves with the function that lets the next one go. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => turn);
    return ready;
  }

  /**
   * Ends what the recording left open, durably: the open step (pending tool calls answered as
   * unanswered) and the open turn, as completed.
   */
  async close(): Promise<void> {
    const recorder = this.recorder;
    if (recorder === undefined) return;
    const release = await this.acquire();
    try {
      const state = await recorder.record([]);
      if (state.turn === undefined) return;
      await recorder.record([
        ...closeStepOps(state, new Map(), this.pendingResponse),
        { op: "turn_end" },
      ]);
      this.pendingResponse = undefined;
    } finally {
      release();
    }
  }
}

function lastRequest(events: readonly SessionEvent[]): ModelRequest | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent;
    if (event.type === "step/start") return event.data.request;
  }
  return undefined;
}
