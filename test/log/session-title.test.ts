// The derived title of a long prompt, taken from its start, is the title of the whole prompt.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DERIVED_TITLE_WIDTH, titleFromContent } from "../../src/log/session-title.js";
import { cutToWidth, oneLine } from "../../src/util/text-width.js";

/** The title as the whole text gives it: every block joined, on one line, cut. */
function wholeTextTitle(texts: readonly string[]): string | undefined {
  const text = oneLine(texts.join(" "));
  return text === "" ? undefined : cutToWidth(text, DERIVED_TITLE_WIDTH);
}

/** Pieces that make graphemes hard to cut: combining marks, ZWJ emoji, flags, CJK, white space. */
const piece = fc.constantFrom(
  "a",
  "word ",
  "e\u0301",
  "👩‍👩‍👧",
  "🇫🇷",
  "🇫",
  "漢字",
  "  \n\t ",
  "\u200d",
  "x".repeat(40),
  " ".repeat(300),
  "\ud83d",
);

describe("titleFromContent", () => {
  it("gives a long prompt the title its whole text gives", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(piece, { maxLength: 400 }).map((p) => p.join("")),
          { minLength: 1, maxLength: 3 },
        ),
        (texts) => {
          const content = texts.map((text) => ({ type: "text", text }));
          expect(titleFromContent(content)).toBe(wholeTextTitle(texts));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("cuts a prompt of pages at 80 columns with an ellipsis", () => {
    const text = `${"漢".repeat(30)} ${"word ".repeat(5000)}`;
    const title = titleFromContent([{ type: "text", text }]) as string;
    expect(title).toBe(wholeTextTitle([text]));
    expect(title.endsWith("…")).toBe(true);
    expect(title.startsWith("漢".repeat(30))).toBe(true);
  });

  it("still sees past a long run of white space at the start", () => {
    // The first 1,024 characters are blank: the title comes from what follows them.
    const text = `${" ".repeat(2000)}the real prompt`;
    expect(titleFromContent([{ type: "text", text }])).toBe("the real prompt");
  });
});
