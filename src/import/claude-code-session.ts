// One seedline session written from the Claude Code lines of one branch: turns, steps, messages, tool calls and results, compaction, and what has no event kept whole.
import type {
  ContentBlock,
  MessageSource,
  ModelResponse,
  SessionEvent,
  SurfaceOp,
  TurnEndReason,
  TurnTrigger,
} from "../generated.js";
import {
  assistantContent,
  type ConvertedContent,
  plainText,
  tokenUsage,
  toolResultContent,
  userContent,
} from "./claude-code-content.js";
import type { TranscriptLine } from "./transcript-lines.js";

/** The `source` of every foreign record this mapping writes. */
export const CLAUDE_CODE = "claude-code";

/**
 * What mapping one line in its own session gave: events, or the line kept whole (and why;
 * `unknown` for a record type the mapping does not know).
 */
export type LineOutcome =
  | { readonly verbatim: false }
  | { readonly verbatim: true; readonly message: string; readonly unknown?: true };

const MAPPED: LineOutcome = { verbatim: false };
const USER: MessageSource = { kind: "user" };
const HARNESS: MessageSource = { kind: "plugin", plugin: CLAUDE_CODE };
const BY_USER: TurnTrigger = { kind: "message", source: USER };
const BY_HARNESS: TurnTrigger = { kind: "injection", source: HARNESS };
/** The record types Claude Code writes that no seedline event expresses (kept whole, not unknown). */
const KNOWN_TYPES = new Set([
  "summary",
  "progress",
  "file-history-snapshot",
  "queue-operation",
  "last-prompt",
  "custom-title",
  "attachment",
]);
/** The text Claude Code writes as a user line when the user stops the running turn. */
const INTERRUPTED = "[Request interrupted by user";
const API = "anthropic-messages";

type Json = Record<string, unknown>;

/**
 * Maps the lines of one branch, in file order, to one session's events. Each line's events are
 * written when the line is read and never changed after: only the closers of a step or turn
 * (`step/end`, `turn/end`) wait for the line that shows the step or turn is over, so mapping a
 * longer file gives the events of the shorter one as a prefix, and a file that ends inside a turn
 * leaves it open. Lines of one API response (one `message.id`) are one step, each line its own
 * `assistant/message`; tool results answer the calls of the open step.
 */
export class ClaudeSessionMapper {
  readonly events: SessionEvent[] = [];
  /** The seqs on the surface, in order (a compaction replaces them all). */
  #surface: number[] = [];
  #turn = 0;
  #turnOpen = false;
  #step = 0;
  #stepOpen = false;
  /** The `message.id` of the open step's response. */
  #stepMessage: string | undefined;
  /** What the open step's response said besides its content (for its `step/end`). */
  #stepMeta: Json | undefined;
  /** Calls of the open step not answered yet, by call id: the seq of their `tool/call`. */
  #calls = new Map<string, number>();
  /** Set while the open turn's last step is a call that failed (an API error line). */
  #failure: { step: number; message: string; code?: string } | undefined;
  /** Set between a compaction's start and its summary: the tokens it shadows. */
  #compacting: { tokens: number } | undefined;
  /** The time of the last line that had one. */
  #time = 0;
  /** The working directory, branch and version last recorded. */
  #context: string | undefined;
  /**
   * While the open turn holds nothing but its prompt: the timestamp of its prompt lines (the lines
   * of one prompt — text, a pasted image — are written at once, with one timestamp).
   */
  #prompt: unknown;
  /** The line last kept whole: a line is kept once, however many reasons it has. */
  #recorded: number | undefined;

  /** The session's last line time (epoch ms), or `fallback` before its first. */
  constructor(fallbackTime = 0) {
    this.#time = fallbackTime;
  }

  /** Maps one line; returns whether it was kept whole instead of (or besides) being mapped. */
  map({ line, record }: TranscriptLine): LineOutcome {
    const time = this.#timeOf(record);
    switch (record.type) {
      case "user":
        this.#noteContext(line, record, time);
        return this.#user(line, record, time);
      case "assistant":
        this.#noteContext(line, record, time);
        return this.#assistant(line, record, time);
      case "system":
        this.#noteContext(line, record, time);
        return this.#system(line, record, time);
      default: {
        this.#context = contextOf(record) ?? this.#context;
        if (typeof record.type === "string" && KNOWN_TYPES.has(record.type)) {
          return this.#foreign(
            line,
            record,
            time,
            `no seedline event for a ${describe(record)} line`,
          );
        }
        this.#record(line, record, time);
        return {
          verbatim: true,
          message: `unknown record type ${describe(record)}`,
          unknown: true,
        };
      }
    }
  }

  #user(line: number, record: Json, time: number): LineOutcome {
    const message = record.message;
    if (!isObject(message))
      return this.#foreign(line, record, time, "expected a user line with a message object");
    const content = message.content;
    if (record.isCompactSummary === true) return this.#compactSummary(time, plainText(content));
    if (Array.isArray(content) && content.some((b) => isObject(b) && b.type === "tool_result")) {
      return this.#toolResults(line, record, time, content);
    }
    const text = plainText(content);
    if (text.startsWith(INTERRUPTED) && text.trimEnd().endsWith("]")) {
      if (!this.#turnOpen)
        return this.#foreign(line, record, time, "an interruption outside a turn");
      this.#closeTurn(time, { kind: "aborted", reason: text });
      return MAPPED;
    }
    const converted = userContent(content);
    this.#endCompaction(time);
    // A prompt opens a turn, unless it is a line of the prompt that opened it; a later line ends a
    // turn that got no answer.
    const samePrompt = this.#prompt !== undefined && record.timestamp === this.#prompt;
    if (this.#prompt !== undefined && !samePrompt) this.#closeTurn(time);
    if (record.isMeta === true) {
      this.#surfaceEvent("context/message", time, { content: converted.blocks, source: HARNESS });
    } else {
      if (!samePrompt) {
        this.#openTurn(time, BY_USER);
        this.#prompt = record.timestamp ?? null;
      }
      this.#surfaceEvent("user/message", time, { content: converted.blocks, source: USER });
    }
    return this.#keep(line, record, time, converted);
  }

  #toolResults(line: number, record: Json, time: number, content: unknown[]): LineOutcome {
    this.#endCompaction(time);
    const results = content.filter((b): b is Json => isObject(b) && b.type === "tool_result");
    const others = content.filter((b) => !(isObject(b) && b.type === "tool_result"));
    const problems: string[] = [];
    let kept = false;
    for (const block of results) {
      const callId = block.tool_use_id;
      const callSeq = typeof callId === "string" ? this.#calls.get(callId) : undefined;
      if (callSeq === undefined || typeof callId !== "string") {
        problems.push(
          `a tool_result for ${JSON.stringify(callId)}, a call the open step did not make`,
        );
        continue;
      }
      const converted = toolResultContent(block.content);
      if (converted.kept) kept = true;
      if (converted.unknown.length > 0) problems.push(unknownBlocks(converted.unknown));
      const meta =
        results.length === 1 && record.toolUseResult !== undefined
          ? { meta: record.toolUseResult }
          : {};
      this.#surfaceEvent(
        "tool/result",
        time,
        {
          turn: this.#turn,
          step: this.#step,
          callId,
          content: converted.blocks,
          isError: block.is_error === true,
          ...meta,
        },
        [callSeq],
      );
      this.#calls.delete(callId);
    }
    if (others.length > 0) {
      const converted = userContent(others);
      if (this.#turnOpen) {
        this.#surfaceEvent("steering/message", time, {
          turn: this.#turn,
          content: converted.blocks,
          source: USER,
        });
        if (converted.kept) kept = true;
        if (converted.unknown.length > 0) problems.push(unknownBlocks(converted.unknown));
      } else {
        problems.push("content beside tool results outside a turn");
      }
    }
    if (problems.length > 0) return this.#foreign(line, record, time, problems.join("; "));
    if (kept) this.#record(line, record, time);
    return MAPPED;
  }

  #assistant(line: number, record: Json, time: number): LineOutcome {
    const message = record.message;
    if (!isObject(message)) {
      return this.#foreign(line, record, time, "expected an assistant line with a message object");
    }
    this.#endCompaction(time);
    if (!this.#turnOpen) this.#openTurn(time, BY_HARNESS);
    const id =
      typeof message.id === "string"
        ? message.id
        : typeof record.requestId === "string"
          ? record.requestId
          : undefined;
    const first = !this.#stepOpen || id === undefined || id !== this.#stepMessage;
    if (first) {
      this.#closeStep(time);
      this.#startStep(time, id);
    }
    const converted = assistantContent(message.content);
    const usage = first ? tokenUsage(message.usage) : undefined;
    this.#surfaceEvent("assistant/message", time, {
      turn: this.#turn,
      step: this.#step,
      content: converted.blocks,
      ...(usage === undefined ? {} : { usage }),
    });
    for (const block of converted.blocks) {
      if (block.type !== "tool-call") continue;
      const seq = this.#event("tool/call", time, {
        turn: this.#turn,
        step: this.#step,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
      });
      this.#calls.set(block.id, seq);
    }
    const { content: _content, ...envelope } = message;
    this.#stepMeta =
      typeof record.requestId === "string"
        ? { ...envelope, requestId: record.requestId }
        : envelope;
    this.#failure = undefined;
    if (message.stop_reason === "end_turn" || message.stop_reason === "stop_sequence") {
      this.#closeTurn(time);
    }
    return this.#keep(line, record, time, converted);
  }

  #system(line: number, record: Json, time: number): LineOutcome {
    switch (record.subtype) {
      case "compact_boundary": {
        const metadata = isObject(record.compactMetadata) ? record.compactMetadata : {};
        this.#startCompaction(
          time,
          metadata.trigger === "manual" ? BY_USER : BY_HARNESS,
          metadata.preTokens,
        );
        return MAPPED;
      }
      case "api_error":
        if (!this.#turnOpen)
          return this.#foreign(line, record, time, "an API error outside a turn");
        this.#failedStep(record, time);
        return MAPPED;
      case "turn_duration":
        if (!this.#turnOpen)
          return this.#foreign(line, record, time, "the end of a turn outside a turn");
        this.#closeTurn(time);
        return MAPPED;
      default:
        return this.#foreign(
          line,
          record,
          time,
          `no seedline event for a ${describe(record)} line`,
        );
    }
  }

  /** A call that failed (Claude Code retries it): a step of its own with the error as its response. */
  #failedStep(record: Json, time: number): void {
    this.#endCompaction(time);
    this.#closeStep(time);
    this.#startStep(time, undefined);
    const error = record.error ?? record.cause ?? null;
    const status = statusOf(error);
    const meta: Json = {};
    for (const key of ["level", "retryInMs", "retryAttempt", "maxRetries"]) {
      if (record[key] !== undefined) meta[key] = record[key];
    }
    const response: ModelResponse = {
      api: API,
      ...(status === undefined ? {} : { status }),
      meta,
      error,
    };
    this.#event("step/end", time, { turn: this.#turn, step: this.#step, response });
    this.#stepOpen = false;
    const code = errorCode(error, record.cause);
    this.#failure = {
      step: this.#step,
      message: errorMessage(error, record.cause),
      ...(code === undefined ? {} : { code }),
    };
  }

  #startCompaction(time: number, trigger: TurnTrigger, tokens: unknown): void {
    this.#endCompaction(time);
    if (this.#turnOpen) this.#closeStep(time);
    else this.#openTurn(time, trigger);
    this.#event("compact/start", time, { turn: this.#turn });
    this.#prompt = undefined;
    this.#compacting = {
      tokens:
        typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens >= 0 ? tokens : 0,
    };
  }

  /** The summary a compaction wrote: it replaces the whole surface, as Claude Code's context is replaced. */
  #compactSummary(time: number, summary: string): LineOutcome {
    if (this.#compacting === undefined) this.#startCompaction(time, BY_HARNESS, undefined);
    const shadowed = this.#surface;
    const tokens = this.#compacting?.tokens ?? 0;
    const content: ContentBlock[] = [{ type: "text", text: summary }];
    if (shadowed.length === 0) {
      this.#surfaceEvent("context/message", time, { content, source: HARNESS });
    } else {
      const start = shadowed[0] as number;
      const end = shadowed[shadowed.length - 1] as number;
      this.#event("compact/summary", time, {
        summary,
        shadowedRange: { start, end },
        shadowedSeqs: [...shadowed],
        shadowedTokenCount: tokens,
      });
      this.#surfaceEvent("context/message", time, { content, source: HARNESS }, [...shadowed], {
        op: "replace",
        start,
        end,
      });
    }
    this.#endCompaction(time);
    return MAPPED;
  }

  #endCompaction(time: number): void {
    if (this.#compacting === undefined) return;
    this.#compacting = undefined;
    this.#event("compact/end", time, { turn: this.#turn });
  }

  #openTurn(time: number, trigger: TurnTrigger): void {
    this.#closeTurn(time);
    this.#turn++;
    this.#turnOpen = true;
    this.#prompt = undefined;
    this.#step = 0;
    this.#event("turn/start", time, { turn: this.#turn, trigger });
  }

  /** Ends the open turn (its open step and compaction first), if one is open. */
  #closeTurn(time: number, reason?: TurnEndReason): void {
    if (!this.#turnOpen) return;
    this.#endCompaction(time);
    this.#closeStep(time);
    const failure = this.#failure;
    const why: TurnEndReason =
      reason ?? (failure === undefined ? { kind: "completed" } : { kind: "error", ...failure });
    this.#event("turn/end", time, { turn: this.#turn, reason: why });
    this.#turnOpen = false;
    this.#prompt = undefined;
    this.#failure = undefined;
  }

  #startStep(time: number, messageId: string | undefined): void {
    this.#step++;
    this.#prompt = undefined;
    this.#stepOpen = true;
    this.#stepMessage = messageId;
    this.#stepMeta = undefined;
    this.#event("step/start", time, { turn: this.#turn, step: this.#step });
  }

  /** Ends the open step, with what its response said besides its content, if a step is open. */
  #closeStep(time: number): void {
    if (!this.#stepOpen) return;
    const meta = this.#stepMeta;
    this.#event("step/end", time, {
      turn: this.#turn,
      step: this.#step,
      ...(meta === undefined ? {} : { response: { api: API, meta } }),
    });
    this.#stepOpen = false;
    this.#stepMessage = undefined;
    this.#stepMeta = undefined;
    this.#calls.clear();
  }

  /** Records the line's working directory, git branch and version when they change (the first line too). */
  #noteContext(line: number, record: Json, time: number): void {
    const context = contextOf(record);
    if (context === undefined || context === this.#context) return;
    this.#context = context;
    this.#record(line, record, time);
  }

  /**
   * Keeps the line whole after its events when its content named something it could not hold (an
   * image), or held a block no seedline block expresses (then the line is reported verbatim).
   */
  #keep(line: number, record: Json, time: number, converted: ConvertedContent): LineOutcome {
    if (converted.unknown.length > 0) {
      return this.#foreign(line, record, time, unknownBlocks(converted.unknown));
    }
    if (converted.kept) this.#record(line, record, time);
    return MAPPED;
  }

  /** Keeps a line whole: a foreign record, the line reported verbatim with `why`. */
  #foreign(line: number, record: Json, time: number, why: string): LineOutcome {
    this.#record(line, record, time);
    return { verbatim: true, message: why };
  }

  #record(line: number, record: Json, time: number): void {
    if (this.#recorded === line) return;
    this.#recorded = line;
    this.#event("foreign/record", time, { source: CLAUDE_CODE, line, record });
  }

  #event(type: SessionEvent["type"], time: number, data: object): number {
    const seq = this.events.length;
    this.events.push({ type, seq, time, data } as SessionEvent);
    return seq;
  }

  #surfaceEvent(
    type: SessionEvent["type"],
    time: number,
    data: object,
    sources?: number[],
    op: SurfaceOp = "append",
  ): number {
    const seq = this.events.length;
    const event =
      sources === undefined
        ? { type, seq, time, data, surfaceOp: op }
        : { type, seq, time, data, sourceEventSeqs: sources, surfaceOp: op };
    this.events.push(event as SessionEvent);
    if (op === "append") this.#surface.push(seq);
    else this.#surface = [seq];
    return seq;
  }

  #timeOf(record: Json): number {
    const stamp =
      typeof record.timestamp === "string"
        ? record.timestamp
        : isObject(record.snapshot) && typeof record.snapshot.timestamp === "string"
          ? record.snapshot.timestamp
          : undefined;
    if (stamp !== undefined) {
      const ms = Date.parse(stamp);
      if (Number.isSafeInteger(ms) && ms >= 0) this.#time = ms;
    }
    return this.#time;
  }
}

/** The working directory, git branch and version a line names, as one key; undefined when it names none. */
function contextOf(record: Json): string | undefined {
  const { cwd, gitBranch, version } = record;
  if (cwd === undefined && gitBranch === undefined && version === undefined) return undefined;
  // Strings as they are (the common case), anything else as JSON: no two contexts share a key.
  return typeof cwd === "string" && typeof gitBranch === "string" && typeof version === "string"
    ? `${cwd}\u0000${gitBranch}\u0000${version}`
    : JSON.stringify([cwd, gitBranch, version]);
}

/** `"progress" (hook_progress)`: a line's type, and its subtype or data type when it has one. */
export function describe(record: Json): string {
  const type = JSON.stringify(record.type ?? null);
  const inner =
    typeof record.subtype === "string"
      ? record.subtype
      : isObject(record.data)
        ? record.data.type
        : undefined;
  return typeof inner === "string" ? `${type} (${inner})` : type;
}

function unknownBlocks(types: readonly string[]): string {
  const named = [...new Set(types)].map((t) => JSON.stringify(t)).join(", ");
  return `content block type ${named} has no seedline equivalent: the line is kept whole after what was mapped`;
}

function statusOf(error: unknown): number | undefined {
  const status = isObject(error) ? error.status : undefined;
  return typeof status === "number" && Number.isInteger(status) && status >= 100 && status <= 599
    ? status
    : undefined;
}

/** The words of an API error line: the provider's message, else the connection error's code. */
function errorMessage(error: unknown, cause: unknown): string {
  return (
    firstString(error, ["error", "error", "message"]) ??
    firstString(error, ["error", "message"]) ??
    firstString(error, ["message"]) ??
    firstString(error, ["cause", "code"]) ??
    firstString(cause, ["code"]) ??
    "API error"
  );
}

function errorCode(error: unknown, cause: unknown): string | undefined {
  return (
    firstString(error, ["error", "error", "type"]) ??
    firstString(error, ["cause", "code"]) ??
    firstString(cause, ["code"])
  );
}

function firstString(value: unknown, path: readonly string[]): string | undefined {
  let at = value;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return typeof at === "string" && at !== "" ? at : undefined;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
