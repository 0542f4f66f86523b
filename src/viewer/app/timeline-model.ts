// Joins pages of view items (a step cut by a page boundary becomes one item again) and pairs tool calls with their results.
import type { ViewItem } from "./api-types.js";

type Assistant = Extract<ViewItem, { kind: "assistant" }>;
type ToolCall = Extract<ViewItem, { kind: "tool-call" }>;
type ToolResult = Extract<ViewItem, { kind: "tool-result" }>;

function joined(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a + b;
}

/** Two assistant items of one step, `first` earlier in the log: one item. */
function mergeAssistant(first: Assistant, second: Assistant): Assistant {
  const reasoning = joined(first.reasoning, second.reasoning);
  const usage = second.usage ?? first.usage;
  const finish = second.finish ?? first.finish;
  return {
    ...first,
    text: first.text + second.text,
    chunkSeqs: [first.chunkSeqs[0], second.chunkSeqs[1]],
    chunkCount: first.chunkCount + second.chunkCount,
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(usage === undefined ? {} : { usage }),
    ...(finish === undefined ? {} : { finish }),
    partial: first.continued === true || second.unfinished === true ? true : undefined,
    continued: first.continued,
    unfinished: second.unfinished,
  } as Assistant;
}

function sameStep(a: ViewItem | undefined, b: ViewItem | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.kind === "assistant" &&
    b.kind === "assistant" &&
    a.turn === b.turn &&
    a.step === b.step &&
    (a.partial === true || b.partial === true)
  );
}

/** `earlier` followed by `later` (pages in log order), the step cut between them joined. */
export function joinPages(earlier: readonly ViewItem[], later: readonly ViewItem[]): ViewItem[] {
  const last = earlier[earlier.length - 1];
  const first = later[0];
  if (sameStep(last, first)) {
    return [
      ...earlier.slice(0, -1),
      mergeAssistant(last as Assistant, first as Assistant),
      ...later.slice(1),
    ];
  }
  return [...earlier, ...later];
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
 * The rows of `items`: each tool result drawn with its call (matched by callId), at the call's
 * place; a result whose call is not loaded (an earlier page) stands alone.
 */
export function rowsOf(items: readonly ViewItem[]): Row[] {
  const results = new Map<string, ToolResult>();
  const calls = new Set<string>();
  for (const item of items) {
    if (item.kind === "tool-result" && !results.has(item.callId)) results.set(item.callId, item);
    if (item.kind === "tool-call") calls.add(item.callId);
  }
  const rows: Row[] = [];
  for (const item of items) {
    if (item.kind === "tool-call") {
      const result = results.get(item.callId);
      rows.push({ kind: "tool", seq: item.seq, call: item, ...(result ? { result } : {}) });
    } else if (item.kind === "tool-result") {
      const drawnWithCall = calls.has(item.callId) && results.get(item.callId) === item;
      if (!drawnWithCall) rows.push({ kind: "tool", seq: item.seq, result: item });
    } else rows.push({ kind: "item", item });
  }
  return rows;
}

/** The seq range an item covers: an assembled step its chunks, others their one event. */
export function seqRange(item: ViewItem): readonly [number, number] {
  return item.kind === "assistant" ? item.chunkSeqs : [item.seq, item.seq];
}
