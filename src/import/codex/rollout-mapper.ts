// Maps the records of a Codex rollout, line by line, to the events of one seedline session (docs/import-codex.md).
import type {
  ContentBlock,
  SessionHeader,
  TokenUsage,
  TurnEndReason,
  TurnTrigger,
} from "../../generated.js";
import { importedSessionId, type LineProblem } from "../transcript.js";
import { ImportedLog, type OpenTurn, type TurnOrigin } from "./imported-log.js";
import {
  any,
  type Carried,
  contextTokensOf,
  holdsMore,
  is,
  isObject,
  type JsonObject,
  messageBlocks,
  outputBlocks,
  reasoningBlocks,
  stringAt,
  timeOf,
  usageOf,
} from "./items.js";
import type { ParsedLine, SourceLine } from "./lines.js";
import {
  BY_CODEX,
  BY_USER,
  CARRIED,
  KEPT_EVENTS,
  KEPT_ITEMS,
  LINE,
  plugin,
  RECORD_TYPES,
} from "./record-kinds.js";

/** A user-role message item, waiting for the next line to tell whether the user typed it. */
interface PendingUserItem {
  readonly line: SourceLine;
  readonly record: unknown;
  readonly content: ContentBlock[];
  readonly keep: boolean;
  readonly time: number;
}

/**
 * The mapping of one rollout, fed its lines in order ({@link take}). Pure: the same lines give the
 * same events, and more lines only add events after them.
 */
export class RolloutMapper {
  readonly log = new ImportedLog("codex");
  header: SessionHeader | undefined;
  title: string | undefined;
  mapped = 0;
  verbatim = 0;
  refused = 0;
  readonly problems: LineProblem[] = [];
  /** The offset just past the last line whose mapping is settled. */
  consumed = 0;
  #pending: PendingUserItem | undefined;
  /** Whether the last user-role item settled was a prompt (so an event_msg user_message next is its copy). */
  #promptCopyDue = false;
  /** `total_token_usage` of the last token count, as JSON: a count repeating it says nothing new. */
  #lastTotal: string | undefined;
  /** The usage of a model call reported before its step was answered (older rollouts report it first). */
  #usage: TokenUsage | undefined;
  /** The tokens of the last model call's context, for a compaction's `shadowedTokenCount`. */
  #contextTokens = 0;
  /** The call id of a web search reported on the line just before (its item has none). */
  #webSearch: { readonly id: string; readonly line: number } | undefined;

  /** Maps one complete line (`parsed` undefined: a blank line, which holds no record). */
  take(line: SourceLine, parsed: ParsedLine | undefined): void {
    if (parsed === undefined) {
      if (this.#pending === undefined) this.consumed = line.end;
      return;
    }
    const record = parsed.ok ? parsed.value : undefined;
    this.#promptCopyDue = false;
    if (this.#pending !== undefined) this.#settle(this.#pending, isUserMessageEvent(record));
    if (!parsed.ok) {
      this.refused++;
      this.problems.push({ line: line.number, outcome: "refused", message: parsed.message });
    } else {
      const time = isObject(record) ? timeOf(record.timestamp) : undefined;
      if (time !== undefined) this.log.time = time.ms;
      this.#map(line, record, time?.exact === true);
    }
    if (this.#pending === undefined) this.consumed = line.end;
  }

  #map(line: SourceLine, record: unknown, exactTime: boolean): void {
    if (!isObject(record)) {
      this.#verbatim(line, record, `expected a JSON object, found ${kindOf(record)}`);
      return;
    }
    const type = record.type;
    const payload = record.payload;
    if (typeof type !== "string") {
      this.#verbatim(line, record, "expected a record with a string type, found none");
      return;
    }
    if (!RECORD_TYPES.has(type)) {
      this.#verbatim(line, record, `unknown record type ${JSON.stringify(type)}`);
      return;
    }
    if (!isObject(payload)) {
      this.#verbatim(line, record, `expected ${type} with a payload object, found none`);
      return;
    }
    const lineMore = !exactTime || holdsMore(record, LINE);
    switch (type) {
      case "session_meta":
        this.#sessionMeta(line, record, payload);
        break;
      case "turn_context":
        this.#mapped(line, record, true);
        break;
      case "response_item":
        this.#responseItem(line, record, payload, lineMore);
        break;
      case "event_msg":
        this.#eventMsg(line, record, payload, lineMore);
        break;
      default:
        this.#compacted(line, record, payload, lineMore);
    }
  }

  /** The header comes from the first session_meta; every one is kept whole (cli version, originator, git, instructions). */
  #sessionMeta(line: SourceLine, record: JsonObject, meta: JsonObject): void {
    if (this.header === undefined) {
      const id = stringAt(meta, "id");
      if (id === undefined || id === "") {
        this.#verbatim(line, record, "expected session_meta.payload.id, a non-empty string");
        return;
      }
      const cwd = stringAt(meta, "cwd");
      this.header = {
        version: 0,
        id: importedSessionId("codex", id),
        createdAt: timeOf(meta.timestamp)?.ms ?? timeOf(record.timestamp)?.ms ?? 0,
        ...(cwd === undefined || cwd === "" ? {} : { cwd }),
      };
    }
    this.#mapped(line, record, true);
  }

  #responseItem(line: SourceLine, record: JsonObject, item: JsonObject, lineMore: boolean): void {
    const type = item.type;
    switch (type) {
      case "message":
        this.#message(line, record, item, lineMore);
        return;
      case "reasoning": {
        const { blocks, carried } = reasoningBlocks(item);
        this.#modelOutput(blocks, false);
        this.#mapped(line, record, lineMore || !carried || holdsMore(item, CARRIED.reasoning));
        return;
      }
      case "function_call":
      case "custom_tool_call": {
        const custom = type === "custom_tool_call";
        const callId = stringAt(item, "call_id");
        const name = stringAt(item, "name");
        const args = stringAt(item, custom ? "input" : "arguments");
        if (callId === undefined || name === undefined || args === undefined) {
          const input = custom ? "input" : "arguments";
          this.#verbatim(line, record, `expected ${type} with string call_id, name and ${input}`);
          return;
        }
        this.#modelOutput([{ type: "tool-call", id: callId, name, arguments: args }], true);
        const carried = custom ? CARRIED.customToolCall : CARRIED.functionCall;
        this.#mapped(line, record, lineMore || holdsMore(item, carried));
        return;
      }
      case "local_shell_call": {
        const callId =
          stringAt(item, "call_id") ?? stringAt(item, "id") ?? `local_shell@${line.number}`;
        const args = item.action === undefined ? "{}" : JSON.stringify(item.action);
        this.#modelOutput(
          [{ type: "tool-call", id: callId, name: "local_shell", arguments: args }],
          true,
        );
        const carried: Carried = {
          type: any,
          call_id: any,
          // The item's own id is carried when it stands for the missing call id.
          id: (value) => item.call_id === undefined || value === undefined,
          status: is("completed"),
          action: any,
        };
        this.#mapped(line, record, lineMore || holdsMore(item, carried));
        return;
      }
      case "web_search_call": {
        // The provider runs the search: no output item answers it, so its tool/call stays unanswered.
        const reported = this.#webSearch?.line === line.number - 1 ? this.#webSearch.id : undefined;
        const callId = stringAt(item, "id") ?? reported ?? `web_search@${line.number}`;
        const args = item.action === undefined ? "{}" : JSON.stringify(item.action);
        this.#modelOutput(
          [{ type: "tool-call", id: callId, name: "web_search", arguments: args }],
          false,
        );
        const carried: Carried = { type: any, id: any, status: is("completed"), action: any };
        this.#mapped(line, record, lineMore || holdsMore(item, carried));
        return;
      }
      case "function_call_output":
      case "custom_tool_call_output":
        this.#toolOutput(line, record, item, lineMore);
        return;
      default:
        if (typeof type === "string" && KEPT_ITEMS.has(type)) this.#mapped(line, record, true);
        else this.#verbatim(line, record, `unknown response_item type ${JSON.stringify(type)}`);
    }
  }

  #message(line: SourceLine, record: JsonObject, item: JsonObject, lineMore: boolean): void {
    const role = item.role;
    const content = messageBlocks(item.content);
    if (typeof role !== "string" || content === undefined) {
      this.#verbatim(line, record, "expected a message with a string role and content parts");
      return;
    }
    const keep = lineMore || holdsMore(item, CARRIED.message);
    switch (role) {
      case "assistant":
        this.#modelOutput(content, false);
        this.#mapped(line, record, keep);
        return;
      case "user":
        // The user typed it when Codex's copy (event_msg user_message) comes next; else Codex put
        // it there (the project's agent instructions, environment context, …). The next line decides.
        this.#pending = { line, record, content, keep, time: this.log.time };
        return;
      case "developer":
      case "system":
        this.log.contextMessage(content, plugin(role));
        this.#mapped(line, record, keep);
        return;
      default:
        this.#verbatim(line, record, `unknown message role ${JSON.stringify(role)}`);
    }
  }

  /** Settles the waiting user-role item: a prompt when Codex's copy follows it, else context. */
  #settle(pending: PendingUserItem, prompt: boolean): void {
    this.#pending = undefined;
    this.log.time = pending.time;
    if (prompt) this.#prompt(pending.content);
    else this.log.contextMessage(pending.content, plugin("user"));
    this.#mapped(pending.line, pending.record, pending.keep);
    this.consumed = pending.line.end;
    this.#promptCopyDue = prompt;
  }

  /**
   * A user prompt: the first prompt of a task's turn is its `user/message`, a later one a
   * `steering/message` (the user spoke while the task ran). Outside a task (rollouts without task
   * markers) a prompt ends the open turn and opens the next.
   */
  #prompt(content: readonly ContentBlock[]): void {
    const turn = this.log.turn;
    if (turn?.origin === "task") {
      if (!turn.prompted && turn.steps === 0) {
        turn.prompted = true;
        this.log.userMessage(content);
      } else {
        this.log.steeringMessage(content);
      }
      return;
    }
    if (turn !== undefined) this.#endTurn({ kind: "completed" });
    this.#startTurn(BY_USER, "prompt").prompted = true;
    this.log.userMessage(content);
  }

  #startTurn(trigger: TurnTrigger, origin: TurnOrigin): OpenTurn {
    this.#usage = undefined;
    return this.log.startTurn(trigger, origin);
  }

  #endTurn(reason: TurnEndReason): void {
    if (this.log.step?.answered === false) this.#answer(reason.kind === "aborted");
    this.log.endTurn(reason);
  }

  /** Completes the streaming step's response with the usage reported for it, if any. */
  #answer(cut: boolean): void {
    this.log.answer(this.#usage, cut);
    this.#usage = undefined;
  }

  /** Model output: into the streaming step (a new step after an answered one; a turn when none is open). */
  #modelOutput(blocks: readonly ContentBlock[], clientCall: boolean): void {
    if (this.log.turn === undefined) this.#startTurn(BY_CODEX, "output");
    const step = this.log.streamingStep();
    if (clientCall) step.clientCalls = true;
    for (const block of blocks) this.log.addBlock(block);
  }

  #toolOutput(line: SourceLine, record: JsonObject, item: JsonObject, lineMore: boolean): void {
    const callId = stringAt(item, "call_id");
    if (callId === undefined) {
      this.#verbatim(line, record, `expected ${String(item.type)} with a string call_id`);
      return;
    }
    if (this.log.step?.answered === false) this.#answer(false);
    const output = item.output;
    const isError = isObject(output) && output.success === false;
    if (!this.log.toolResult(callId, outputBlocks(output), isError)) {
      const found = JSON.stringify(callId);
      this.#verbatim(
        line,
        record,
        `expected a pending call of the open step for ${found}, found none`,
      );
      return;
    }
    this.#mapped(line, record, lineMore || holdsMore(item, CARRIED.output));
  }

  #eventMsg(line: SourceLine, record: JsonObject, event: JsonObject, lineMore: boolean): void {
    const type = event.type;
    const keep = (carried: Carried): boolean => lineMore || holdsMore(event, carried);
    switch (type) {
      case "task_started":
      case "turn_started": {
        const turn = this.log.turn;
        if (turn !== undefined && turn.origin === "prompt" && turn.steps === 0) {
          turn.origin = "task"; // the task of the prompt that opened the turn
        } else {
          const reason = "another task started before this one completed";
          if (turn !== undefined) this.#endTurn({ kind: "aborted", reason });
          this.#startTurn(BY_USER, "task");
        }
        this.#mapped(line, record, keep(CARRIED.marker));
        return;
      }
      case "task_complete":
      case "turn_complete":
      case "turn_aborted": {
        if (this.log.turn === undefined) {
          this.#verbatim(line, record, `expected an open turn for ${type}, found none`);
          return;
        }
        const aborted = type === "turn_aborted";
        const why = stringAt(event, "reason");
        this.#endTurn(
          aborted
            ? { kind: "aborted", ...(why === undefined ? {} : { reason: why }) }
            : { kind: "completed" },
        );
        this.#mapped(line, record, keep(aborted ? CARRIED.aborted : CARRIED.marker));
        return;
      }
      case "user_message":
        this.#userMessageEvent(line, record, event, lineMore);
        return;
      case "agent_message":
        this.#mapped(line, record, keep(CARRIED.agentCopy));
        return;
      case "agent_reasoning":
      case "agent_reasoning_raw_content":
        this.#mapped(line, record, keep(CARRIED.reasoningCopy));
        return;
      case "context_compacted":
        this.#mapped(line, record, keep(CARRIED.marker));
        return;
      case "token_count":
        this.#tokenCount(event);
        break;
      case "thread_name_updated": {
        const name = stringAt(event, "thread_name");
        if (name !== undefined && name !== "") this.title = name;
        break;
      }
      case "web_search_end": {
        const id = stringAt(event, "call_id");
        if (id !== undefined) this.#webSearch = { id, line: line.number };
        break;
      }
    }
    if (typeof type === "string" && KEPT_EVENTS.has(type)) this.#mapped(line, record, true);
    else this.#verbatim(line, record, `unknown event_msg type ${JSON.stringify(type)}`);
  }

  /**
   * Codex's copy of a prompt: dropped when it follows the prompt's item and says nothing more;
   * taken as the prompt itself when no item came before it.
   */
  #userMessageEvent(
    line: SourceLine,
    record: JsonObject,
    event: JsonObject,
    lineMore: boolean,
  ): void {
    const keep = lineMore || holdsMore(event, CARRIED.userCopy);
    if (this.#promptCopyDue) {
      this.#mapped(line, record, keep);
      return;
    }
    const message = stringAt(event, "message");
    if (message === undefined) {
      this.#verbatim(line, record, "expected user_message with a string message");
      return;
    }
    const images = Array.isArray(event.images) ? event.images : [];
    this.#prompt([
      { type: "text", text: message },
      ...images.map(
        (url): ContentBlock => ({
          type: "text",
          text: JSON.stringify({ type: "input_image", image_url: url }),
        }),
      ),
    ]);
    this.#mapped(line, record, keep);
  }

  /**
   * A token count that reports a new model call (its total moved) gives that call's usage: to the
   * step streaming now (newer rollouts count after the response), else to the next step answered
   * (older ones count before it). A repeated count only updates rate limits.
   */
  #tokenCount(event: JsonObject): void {
    const info = event.info;
    if (!isObject(info)) return;
    const total = JSON.stringify(info.total_token_usage);
    if (total === undefined || total === this.#lastTotal) return;
    this.#lastTotal = total;
    this.#contextTokens = contextTokensOf(info.last_token_usage) ?? this.#contextTokens;
    const usage = usageOf(info.last_token_usage);
    if (usage === undefined) return;
    this.#usage = usage;
    if (this.log.step?.answered === false) this.#answer(false);
  }

  /** A compaction: the surface so far is replaced by one context message holding what Codex kept. */
  #compacted(line: SourceLine, record: JsonObject, payload: JsonObject, lineMore: boolean): void {
    const message = payload.message;
    if (typeof message !== "string") {
      this.#verbatim(line, record, "expected compacted with a string message");
      return;
    }
    const kept = Array.isArray(payload.replacement_history) ? payload.replacement_history : [];
    const content: ContentBlock[] = [
      ...(message === "" ? [] : [{ type: "text" as const, text: message }]),
      ...kept.map((item): ContentBlock => ({ type: "text", text: JSON.stringify(item) })),
    ];
    this.log.compaction(message, content, plugin("compaction"), this.#contextTokens);
    this.#mapped(line, record, lineMore || holdsMore(payload, CARRIED.compacted));
  }

  /** A line mapped as designed; `keep`: also kept whole, for what its events do not carry. */
  #mapped(line: SourceLine, record: unknown, keep: boolean): void {
    this.mapped++;
    if (keep) this.log.foreign(line.number, record);
  }

  /** A line no seedline event expresses as it stands: kept whole, and reported. */
  #verbatim(line: SourceLine, record: unknown, message: string): void {
    this.verbatim++;
    this.log.foreign(line.number, record);
    this.problems.push({ line: line.number, outcome: "verbatim", message });
  }
}

function isUserMessageEvent(record: unknown): boolean {
  return (
    isObject(record) &&
    record.type === "event_msg" &&
    isObject(record.payload) &&
    record.payload.type === "user_message"
  );
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return `a ${typeof value}`;
}
