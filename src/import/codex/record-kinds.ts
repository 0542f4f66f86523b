// The kinds of Codex rollout records the mapping knows, and which members of each the seedline events made from it carry.
import type { MessageSource, TurnTrigger } from "../../generated.js";
import { any, type Carried, empty, is } from "./items.js";

/** The record types of a rollout line. */
export const RECORD_TYPES: ReadonlySet<string> = new Set([
  "session_meta",
  "turn_context",
  "response_item",
  "event_msg",
  "compacted",
]);

/** A prompt's trigger: the user spoke. */
export const BY_USER: TurnTrigger = { kind: "message", source: { kind: "user" } };
/** The trigger of a turn opened by model output with no prompt or task marker before it. */
export const BY_CODEX: TurnTrigger = {
  kind: "injection",
  source: { kind: "plugin", plugin: "codex" },
};
export const plugin = (name: string): MessageSource => ({
  kind: "plugin",
  plugin: `codex:${name}`,
});

/** The members of a rollout line: `timestamp` is carried by `time` when it gives the same text back. */
export const LINE: Carried = { timestamp: any, type: any, payload: any };

/** What each mapped item's events carry (see docs/import-codex.md). */
export const CARRIED = {
  message: { type: any, role: any, content: any },
  reasoning: { type: any, summary: any, content: any, encrypted_content: empty },
  functionCall: { type: any, name: any, arguments: any, call_id: any },
  customToolCall: { type: any, name: any, input: any, call_id: any, status: is("completed") },
  output: { type: any, call_id: any, output: any },
  userCopy: {
    type: any,
    message: any,
    images: any,
    local_images: empty,
    text_elements: empty,
    kind: is("plain"),
  },
  agentCopy: { type: any, message: any, phase: any, memory_citation: empty },
  reasoningCopy: { type: any, text: any },
  marker: { type: any },
  aborted: { type: any, reason: (value: unknown) => typeof value === "string" },
  compacted: { message: any, replacement_history: (v: unknown) => v == null || Array.isArray(v) },
} satisfies Record<string, Carried>;

/** Response items with no seedline event, kept whole as foreign records. */
export const KEPT_ITEMS: ReadonlySet<string> = new Set([
  "ghost_snapshot",
  "compaction",
  "compaction_summary",
  "tool_search_call",
  "tool_search_output",
  "image_generation_call",
]);

/** Event messages Codex persists that have no seedline event, kept whole as foreign records. */
export const KEPT_EVENTS: ReadonlySet<string> = new Set([
  "token_count",
  "thread_name_updated",
  "web_search_end",
  "entered_review_mode",
  "exited_review_mode",
  "thread_rolled_back",
  "process_rolled_back",
  "undo_completed",
  "image_generation_end",
  "item_completed",
  "error",
  "warning",
  "stream_error",
  "guardian_assessment",
  "exec_command_end",
  "patch_apply_end",
  "mcp_tool_call_end",
  "view_image_tool_call",
  "collab_agent_spawn_end",
  "collab_agent_interaction_end",
  "collab_waiting_end",
  "collab_close_end",
  "collab_resume_end",
  "dynamic_tool_call_request",
  "dynamic_tool_call_response",
]);
