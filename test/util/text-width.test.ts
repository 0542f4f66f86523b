// Cutting by grapheme and display width: an emoji is never cut in half, CJK counts two columns.
import { describe, expect, it } from "vitest";
import { cutStyledToWidth, cutToWidth, displayWidth, oneLine } from "../../src/util/text-width.js";

/** cutToWidth as its grapheme-by-grapheme rule states it, without any shortcut. */
function referenceCut(text: string, maxWidth: number): string {
  if (displayWidth(text) <= maxWidth) return text;
  let used = 0;
  let kept = "";
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(
    text,
  )) {
    const width = displayWidth(segment);
    if (used + width > maxWidth - 1) break;
    used += width;
    kept += segment;
  }
  return `${kept}…`;
}

describe("cutToWidth", () => {
  // The printable-ASCII shortcut (a slice, where a derived title on every append spent 0.1 ms in
  // the segmenter) must cut where the grapheme rule does, also when what follows the cut is not
  // ASCII: a combining mark or a joiner after the last kept letter belongs to it.
  it("cuts printable ASCII where the grapheme rule cuts, whatever follows", () => {
    const tails = ["", "\u0301", "\u200d", "😀", "漢字", "\u0301x", "\t", "\n"];
    const random = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        String.fromCharCode(0x20 + ((i * 37 + n * 11) % 95)),
      ).join("");
    for (let length = 0; length <= 12; length++) {
      for (const tail of tails) {
        for (let width = 1; width <= 14; width++) {
          const text = random(length) + tail + random(3);
          expect(cutToWidth(text, width), JSON.stringify([text, width])).toBe(
            referenceCut(text, width),
          );
        }
      }
    }
    expect(cutToWidth("abcde\u0301fgh", 6)).toBe("abcde\u0301…");
    expect(cutToWidth("abcde\u0301fgh", 5)).toBe("abcd…");
    expect(cutToWidth("abcdef", 1)).toBe("…");
    expect(cutToWidth("abc", 3)).toBe("abc");
  });

  it("keeps text that fits, whole", () => {
    expect(cutToWidth("hello", 5)).toBe("hello");
    expect(cutToWidth("", 3)).toBe("");
  });

  it("cuts to the width with an ellipsis", () => {
    expect(cutToWidth("hello world", 8)).toBe("hello w…");
    expect(displayWidth(cutToWidth("hello world", 8))).toBe(8);
  });

  // Before: `show` cut by UTF-16 code units and printed half a surrogate pair ("…aaaa\uD83D…").
  it("never cuts inside an emoji or a combined grapheme", () => {
    const text = "aaaa😀😀😀 family 👨‍👩‍👧 e\u0301";
    for (let width = 1; width <= displayWidth(text) + 1; width++) {
      const cut = cutToWidth(text, width);
      expect(displayWidth(cut)).toBeLessThanOrEqual(width);
      expect(cut).not.toMatch(
        /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u,
      );
      const kept = cut.endsWith("…") && cut !== text ? cut.slice(0, -1) : cut;
      expect(text.startsWith(kept)).toBe(true);
      // No grapheme is split: the kept part ends where a grapheme of the text ends.
      const ends = [
        ...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text),
      ].map((s) => s.index + s.segment.length);
      if (kept.length > 0) expect(ends).toContain(kept.length);
    }
  });

  // Before: CJK excerpts were cut at 100 code units, which is ~200 columns.
  it("counts wide characters as two columns", () => {
    const cjk = "修复解析器中的错误并添加测试用例";
    const cut = cutToWidth(cjk, 10);
    expect(displayWidth(cut)).toBeLessThanOrEqual(10);
    expect(cut).toBe("修复解析…");
  });

  it("refuses a width that is not a positive integer", () => {
    expect(() => cutToWidth("x", 0)).toThrow(RangeError);
    expect(() => cutToWidth("x", 1.5)).toThrow(/positive integer, got 1.5/);
  });
});

describe("oneLine", () => {
  it("folds white space runs into single spaces", () => {
    expect(oneLine("  fix\n\tthe   parser \n")).toBe("fix the parser");
  });
});

describe("cutStyledToWidth", () => {
  const red = (text: string) => `\u001b[31m${text}\u001b[39m`;

  it("counts no columns for colour codes and keeps coloured text that fits", () => {
    expect(cutStyledToWidth(red("hello"), 5)).toBe(red("hello"));
  });

  it("cuts between graphemes, never inside a code, and resets the colour after the ellipsis", () => {
    const cut = cutStyledToWidth(`${red("ab😀")}日本`, 4);
    expect(cut).toBe("\u001b[31mab…\u001b[0m");
    expect(displayWidth(cut)).toBe(3);
    expect(cutStyledToWidth(`x ${red("日本語")}`, 5)).toBe("x \u001b[31m日…\u001b[0m");
  });
});
