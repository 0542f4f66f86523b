// Long texts of view items cut to a head before they are sent: a timeline page of huge tool outputs stays small.
import type { ViewItem } from "../../view/view-items.js";

/**
 * The most UTF-16 code units of one text member a timeline item carries: a page of 8 MiB tool
 * outputs is sent as their heads (the browser folds them further), the whole event raw on demand.
 */
export const CUT_CHARS = 64 * 1024;

/** The members of view items that hold text of any length. */
const TEXT_MEMBERS = ["text", "reasoning", "arguments"] as const;

/**
 * `items` with every text member longer than `maxChars` cut to its first `maxChars` code units
 * (never inside a surrogate pair), each cut item telling in `cut` the full lengths.
 */
export function cutTexts(items: readonly ViewItem[], maxChars = CUT_CHARS): ViewItem[] {
  return items.map((item) => {
    let cut: Record<string, number> | undefined;
    let out: Record<string, unknown> | undefined;
    for (const member of TEXT_MEMBERS) {
      const value = (item as unknown as Record<string, unknown>)[member];
      if (typeof value !== "string" || value.length <= maxChars) continue;
      out ??= { ...item };
      cut ??= { ...item.cut };
      out[member] = value.slice(0, headEnd(value, maxChars));
      cut[member] = value.length;
    }
    return out === undefined ? item : ({ ...out, cut } as unknown as ViewItem);
  });
}

/** Where a head of at most `maxChars` code units of `text` ends, not splitting a surrogate pair. */
function headEnd(text: string, maxChars: number): number {
  const last = text.charCodeAt(maxChars - 1);
  return last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars;
}
