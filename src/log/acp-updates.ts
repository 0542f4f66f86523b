// Stored events as Agent Client Protocol session/update updates: what session/load and an ACP watch send.
import type {
  AcpSessionUpdate,
  AcpTextContent,
  AcpToolKind,
  ContentBlock,
  EventType,
  SessionEvent,
  ToolCallData,
} from "../generated.js";

/** How a client shows a tool call: its title and ACP tool kind. */
export interface AcpToolPresentation {
  readonly title: string;
  readonly kind: AcpToolKind;
}

/**
 * A harness's own presentation of its tools: the title and kind of a call, or `undefined` (or
 * a member left out) to keep what {@link defaultToolPresentation} gives.
 */
export type AcpToolPresenter = (call: ToolCallData) => Partial<AcpToolPresentation> | undefined;

/** How {@link toAcpUpdates} maps events. */
export interface AcpUpdateOptions {
  /** Titles and kinds for tool calls; the tool name and a kind guessed from it unless given. */
  readonly presentTool?: AcpToolPresenter;
}

/** One row of the mapping: which updates an event type gives. */
export interface AcpUpdateMappingRow {
  /** The ACP update kinds the event gives, `—` when it gives none. */
  readonly updates: string;
  /** How the event's data becomes the updates, or why it gives none. */
  readonly how: string;
}

/**
 * The mapping of every event type to ACP updates, in the vocabulary's order; docs/persistence.md
 * renders it as a table.
 */
export const ACP_UPDATE_MAPPING: Readonly<Record<EventType, AcpUpdateMappingRow>> = {
  "turn/start": { updates: "—", how: "A marker: ACP has no turn update." },
  "turn/end": {
    updates: "—",
    how: "A marker: ACP ends a turn with the prompt's answer, which a load does not send.",
  },
  "step/start": { updates: "—", how: "A marker: ACP has no step update." },
  "step/end": { updates: "—", how: "A marker (its usage included)." },
  "user/message": {
    updates: "`user_message_chunk`",
    how: "One per text block of `content`, in order.",
  },
  "prompt/blocked": { updates: "—", how: "A vetoed prompt never reached the agent." },
  "context/message": { updates: "—", how: "Injected context, not something the user said." },
  "assistant/chunk": {
    updates: "`agent_message_chunk`, `agent_thought_chunk`",
    how: "A `text-delta` gives `agent_message_chunk`, a `reasoning-delta` gives `agent_thought_chunk`, each with the delta's text as streamed; other chunks (block start and end, tool-call argument deltas, usage, finish) give none.",
  },
  "assistant/message": {
    updates: "—",
    how: "Its text was sent already, chunk by chunk.",
  },
  "tool/call": {
    updates: "`tool_call`",
    how: "`toolCallId` is the call id scoped to its step, `TURN.STEP/CALLID` (see `acpToolCallId`), `title` and `kind` come from the tool presenter (the tool name and a kind guessed from it by default), `rawInput` is the parsed arguments (the raw string when they are not JSON), `status` is `in_progress`.",
  },
  "tool/result": {
    updates: "`tool_call_update`",
    how: "For the call it answers, named as its `tool_call` named it (`TURN.STEP/CALLID`: the call of the same step with the result's call id): `status` `failed` when `isError`, else `completed`; `content` holds the result's text blocks.",
  },
  "steering/message": {
    updates: "`user_message_chunk`",
    how: "One per text block of `content`: the user spoke during the turn.",
  },
  "todo/write": {
    updates: "`plan`",
    how: "`entries` are the todos with their content and status; `priority` is `medium` (ACP requires one, a todo has none).",
  },
  "compact/start": { updates: "—", how: "A marker of the surface's compaction." },
  "compact/summary": { updates: "—", how: "Log-only: what the compaction summarised." },
  "compact/end": { updates: "—", how: "A marker of the surface's compaction." },
  "hook/invoked": { updates: "—", how: "The harness's own hooks." },
  "hook/result": { updates: "—", how: "The harness's own hooks." },
  "foreign/record": {
    updates: "—",
    how: "Another tool's transcript line kept as it was: nothing ACP has a name for.",
  },
};

/**
 * The ACP updates of `event`, in order (none for most types; see {@link ACP_UPDATE_MAPPING}).
 * Pure: the same event gives the same updates.
 */
export function acpUpdatesOf(
  event: SessionEvent,
  options: AcpUpdateOptions = {},
): AcpSessionUpdate[] {
  switch (event.type) {
    case "user/message":
    case "steering/message":
      return textsOf(event.data.content).map((content) => ({
        sessionUpdate: "user_message_chunk",
        content,
      }));
    case "assistant/chunk": {
      const { chunk } = event.data;
      if (chunk.type === "text-delta") {
        return [{ sessionUpdate: "agent_message_chunk", content: text(chunk.text) }];
      }
      if (chunk.type === "reasoning-delta") {
        return [{ sessionUpdate: "agent_thought_chunk", content: text(chunk.text) }];
      }
      return [];
    }
    case "tool/call": {
      const given = options.presentTool?.(event.data);
      const fallback = defaultToolPresentation(event.data.name);
      return [
        {
          sessionUpdate: "tool_call",
          toolCallId: acpToolCallId(event.data),
          title: given?.title ?? fallback.title,
          kind: given?.kind ?? fallback.kind,
          status: "in_progress",
          rawInput: parsedArguments(event.data.arguments),
        },
      ];
    }
    case "tool/result":
      return [
        {
          sessionUpdate: "tool_call_update",
          toolCallId: acpToolCallId(event.data),
          status: event.data.isError ? "failed" : "completed",
          content: textsOf(event.data.content).map((content) => ({ type: "content", content })),
        },
      ];
    case "todo/write":
      return [
        {
          sessionUpdate: "plan",
          entries: event.data.todos.map((todo) => ({
            content: todo.content,
            priority: "medium",
            status: todo.status,
          })),
        },
      ];
    default:
      return [];
  }
}

/**
 * The ACP `toolCallId` of a tool call or result: `TURN.STEP/CALLID`, the call id scoped to its
 * step. Agents use call ids again in later steps and turns (`call_1` in every response), but ACP
 * asks a tool call id to be unique in the session; the log pairs a result with the pending call of
 * its own step with the same call id, so scoping the id to the step names each call once and each
 * result's update names the call it answers (the updates come in log order: a call id used again
 * within one step, after its result, begins a new call under the same id once the last ended).
 */
export function acpToolCallId(data: {
  readonly turn: number;
  readonly step: number;
  readonly callId: string;
}): string {
  return `${data.turn}.${data.step}/${data.callId}`;
}

/**
 * The ACP updates of `events`, in order: what an agent sends as session/update notifications to
 * show a stored session (session/load) or its live appends.
 */
export function toAcpUpdates(
  events: Iterable<SessionEvent>,
  options: AcpUpdateOptions = {},
): AcpSessionUpdate[] {
  const updates: AcpSessionUpdate[] = [];
  for (const event of events) updates.push(...acpUpdatesOf(event, options));
  return updates;
}

/** Words in a tool name that say its kind, first match wins (the name's words in order). */
const KIND_WORDS: ReadonlyMap<string, AcpToolKind> = new Map<string, AcpToolKind>(
  Object.entries({
    read: "read",
    view: "read",
    cat: "read",
    open: "read",
    edit: "edit",
    write: "edit",
    patch: "edit",
    replace: "edit",
    create: "edit",
    delete: "delete",
    remove: "delete",
    rm: "delete",
    move: "move",
    rename: "move",
    mv: "move",
    search: "search",
    grep: "search",
    glob: "search",
    find: "search",
    ls: "search",
    list: "search",
    bash: "execute",
    shell: "execute",
    exec: "execute",
    execute: "execute",
    run: "execute",
    terminal: "execute",
    command: "execute",
    think: "think",
    fetch: "fetch",
    web: "fetch",
    http: "fetch",
    download: "fetch",
  } satisfies Record<string, AcpToolKind>),
);

/**
 * The presentation of a tool by name alone: the name as title, and the kind of the first word of
 * the name that says one (`read_file` is `read`, `bash` is `execute`), else `other`.
 */
export function defaultToolPresentation(name: string): AcpToolPresentation {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  for (const word of words) {
    const kind = KIND_WORDS.get(word);
    if (kind !== undefined) return { title: name, kind };
  }
  return { title: name, kind: "other" };
}

function textsOf(blocks: readonly ContentBlock[]): AcpTextContent[] {
  return blocks.flatMap((block) => (block.type === "text" ? [text(block.text)] : []));
}

function text(value: string): AcpTextContent {
  return { type: "text", text: value };
}

/** The arguments as JSON when they parse, else the raw string (nothing is made up for them). */
function parsedArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
