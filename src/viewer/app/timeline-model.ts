// Joins pages of view items (a step cut by a page boundary becomes one item again) and pairs tool calls with their results.
import { joinPartials } from "../../view/view-items.js";
import type { ViewItem } from "./api-types.js";

type ToolCall = Extract<ViewItem, { kind: "tool-call" }>;
type ToolResult = Extract<ViewItem, { kind: "tool-result" }>;

/**
 * `earlier` followed by `later` (pages or live batches, in log order), a step cut between them
 * joined by the view model's own rule.
 */
export function joinPages(earlier: readonly ViewItem[], later: readonly ViewItem[]): ViewItem[] {
  if (later.length === 0) return [...earlier];
  if (earlier.length === 0) return joinPartials(later);
  // Only the seam can join: the items either side of it, then the rest unchanged.
  const seam = joinPartials([earlier[earlier.length - 1] as ViewItem, ...later.slice(0, 1)]);
  return [...earlier.slice(0, -1), ...seam, ...later.slice(1)];
}

/** A row of the drawn timeline: an item, or a tool call with its result (either may be absent). */
export type Row =
  | { readonly kind: "item"; readonly item: ViewItem }
  | {
      readonly kind: "tool";
      readonly seq: number;
      readonly call?: ToolCall;
      readonly result?: ToolResult;
    };

/**
 * The rows of `items`: each tool result drawn with the call it answers (the call whose seq is its
 * `callSeq`, as the log's tool-pairing rule gave it: a call id used again in another step names
 * that step's call), at the call's place; a result whose call is not loaded (an earlier page) or
 * that answers none stands alone.
 */
export function rowsOf(items: readonly ViewItem[]): Row[] {
  const results = new Map<number, ToolResult>();
  const calls = new Set<number>();
  for (const item of items) {
    if (item.kind === "tool-result" && item.callSeq !== undefined) results.set(item.callSeq, item);
    if (item.kind === "tool-call") calls.add(item.seq);
  }
  const rows: Row[] = [];
  for (const item of items) {
    if (item.kind === "tool-call") {
      const result = results.get(item.seq);
      rows.push({ kind: "tool", seq: item.seq, call: item, ...(result ? { result } : {}) });
    } else if (item.kind === "tool-result") {
      const drawnWithCall = item.callSeq !== undefined && calls.has(item.callSeq);
      if (!drawnWithCall) rows.push({ kind: "tool", seq: item.seq, result: item });
    } else rows.push({ kind: "item", item });
  }
  return rows;
}

/** The first and last seq a row shows: a step its chunks, a tool call through its result. */
export function rowRange(row: Row): readonly [number, number] {
  if (row.kind === "tool") return [row.seq, row.result?.seq ?? row.seq];
  const item = row.item;
  return item.kind === "assistant"
    ? [item.seq, Math.max(item.seq, item.chunkSeqs[1])]
    : [item.seq, item.seq];
}

/**
 * The row a deep link to event `seq` lights: the one whose range holds it, else the last row
 * starting before it (an event that draws no row of its own); -1 when none starts at or before it.
 */
export function rowAt(rows: readonly Row[], seq: number): number {
  let before = -1;
  for (let i = 0; i < rows.length; i++) {
    const [first, last] = rowRange(rows[i] as Row);
    if (first <= seq && seq <= last) return i;
    if (first <= seq) before = i;
  }
  return before;
}
