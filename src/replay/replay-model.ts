// Serves recorded scripts to live callers: a fake model for an agent's tests, and the core of replay/next.
import { ReplayError, show } from "../errors.js";
import type { ReplayNextResult, SessionScript, StreamChunk } from "../generated.js";
import { copyJsonValue } from "../log/json-value.js";
import type { SessionStore } from "../store/session-store.js";
import { type EnactOptions, enactEntry } from "./enact.js";
import { loadFixtureScripts } from "./fixture-scripts.js";
import { type StoredScriptsOptions, storedSessionScripts } from "./store-scripts.js";

/** A script not yet fully served. */
export interface UnservedScript {
  readonly sessionId: string;
  /** The caller bound to it, when one is. */
  readonly callerSessionId: string | undefined;
  /** How many of its entries have not been served. */
  readonly remaining: number;
}

interface Binding {
  readonly callerSessionId: string;
  readonly script: SessionScript;
  next: number;
}

/**
 * A replay over a set of scripts. The first time a caller session id asks for a response it is
 * bound to the next unbound script (in the order given: the primary first, then the children);
 * each later call advances that caller's own cursor. It fails loudly and never wraps around or
 * invents a response.
 */
export class ReplayModel {
  readonly scripts: readonly SessionScript[];
  readonly #byCaller = new Map<string, Binding>();
  readonly #bindings: Binding[] = [];

  /** A replay over `scripts`, copied and frozen (later changes to the argument do not reach it). */
  constructor(scripts: readonly SessionScript[]) {
    const copied = copyJsonValue(scripts);
    if ("problem" in copied) {
      throw new TypeError(
        `expected scripts of plain JSON, got ${copied.problem.found} at ${copied.problem.path}`,
      );
    }
    this.scripts = copied.value as readonly SessionScript[];
  }

  /** A replay over a fixture folder (`session.jsonl`, `session.N.jsonl`, `replay.override.json`). */
  static async fromFixture(dir: string): Promise<ReplayModel> {
    return new ReplayModel(await loadFixtureScripts(dir));
  }

  /** A replay over a stored session and all its descendants. */
  static async fromStore(
    store: SessionStore,
    sessionId: string,
    options: StoredScriptsOptions = {},
  ): Promise<ReplayModel> {
    return new ReplayModel(await storedSessionScripts(store, sessionId, options));
  }

  /**
   * The caller's next recorded response, returned as data (a `throw` or `hang` entry too; the
   * caller enacts it), with its index in the script and the recorded session it came from.
   * @throws ReplayError REPLAY_UNEXPECTED_SESSION when a new caller arrives and every script is
   *   bound; REPLAY_EXHAUSTED when the caller's script has no entry left (the cursor stays put).
   */
  next(callerSessionId: string): ReplayNextResult {
    const binding = this.#bind(callerSessionId);
    const index = binding.next;
    const entry = binding.script.entries[index];
    if (entry === undefined) {
      throw new ReplayError(
        "REPLAY_EXHAUSTED",
        `expected at most ${binding.script.entries.length} call(s) from ${show(callerSessionId)} ` +
          `(the script of ${show(binding.script.sessionId)}), got call ${index + 1}`,
        { sessionId: binding.script.sessionId, callerSessionId },
      );
    }
    binding.next = index + 1;
    return { entry, index, sessionId: binding.script.sessionId };
  }

  /**
   * The caller's next response enacted as a stream: its chunks, then for `throw` a
   * `RecordedModelError`, for `hang` nothing until `options.signal` aborts. Taking the entry is
   * immediate (errors of `next` are thrown here, not on iteration).
   */
  stream(callerSessionId: string, options: EnactOptions = {}): AsyncGenerator<StreamChunk> {
    return enactEntry(this.next(callerSessionId).entry, options);
  }

  /** The recorded session whose script `callerSessionId` is bound to, if it is bound. */
  boundScript(callerSessionId: string): string | undefined {
    return this.#byCaller.get(callerSessionId)?.script.sessionId;
  }

  /** The scripts with entries not yet served (unbound ones included), in script order. */
  unserved(): UnservedScript[] {
    return this.scripts.flatMap((script, i) => {
      const binding = this.#bindings[i];
      const remaining = script.entries.length - (binding?.next ?? 0);
      if (remaining === 0) return [];
      return [
        { sessionId: script.sessionId, callerSessionId: binding?.callerSessionId, remaining },
      ];
    });
  }

  #bind(callerSessionId: string): Binding {
    const bound = this.#byCaller.get(callerSessionId);
    if (bound) return bound;
    const script = this.scripts[this.#bindings.length];
    if (script === undefined) {
      throw new ReplayError(
        "REPLAY_UNEXPECTED_SESSION",
        `expected at most ${this.scripts.length} caller session(s), got a new one ${show(callerSessionId)}`,
        { callerSessionId },
      );
    }
    const binding: Binding = { callerSessionId, script, next: 0 };
    this.#bindings.push(binding);
    this.#byCaller.set(callerSessionId, binding);
    return binding;
  }
}
