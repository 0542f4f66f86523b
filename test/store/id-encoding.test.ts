// The file-name encoding of session ids: injective, a long id's shortened name never another id's plain name.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodeSessionId,
  isShortenedName,
  legacySessionIdName,
  mayBeLegacyHashedName,
} from "../../src/store/ids/id-encoding.js";
import { collidingIds } from "../helpers/id-fixtures.js";

/** A plain encoding: kept characters and `~` followed by exactly 4 upper-case hex digits. */
const PLAIN = /^(?:[a-z0-9._-]|~[0-9A-F]{4})*$/;

/** Ids the encoder must keep apart: any UTF-16 units, biased towards the escape character. */
const anyId = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom("~", "A", "a", "0", "."),
      fc.string({ unit: "binary", maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 256,
  })
  .filter((id) => id.length > 0);

describe("encodeSessionId", () => {
  it("writes every unshortened name as kept characters and `~XXXX` escapes only, so `~~` never occurs in one", () => {
    fc.assert(
      fc.property(anyId, (id) => {
        const name = encodeSessionId(id);
        if (isShortenedName(name)) return;
        expect(name).toMatch(PLAIN);
        expect(name).not.toContain("~~");
      }),
      { numRuns: 2000 },
    );
  });

  it("shortens a name over 200 bytes to 150 bytes, `~~` and 40 hex digits of the id's SHA-256", () => {
    const long = "A".repeat(41);
    const hash = createHash("sha256").update(long, "utf8").digest("hex").slice(0, 40);
    expect(encodeSessionId(long)).toBe(`${"~0041".repeat(30)}~~${hash}`);
    expect(isShortenedName(encodeSessionId(long))).toBe(true);
    expect(legacySessionIdName(long)).toBe(`${"~0041".repeat(30)}~${hash}`);
    expect(legacySessionIdName("A".repeat(40))).toBeUndefined();
    expect(encodeSessionId("A".repeat(40))).toBe("~0041".repeat(40));
  });

  // Before the fix, a long id's shortened name was 150 bytes, one `~` and the hash, and this test
  // failed on its first expectation: both ids encoded to that same name, so they shared one file.
  it("gives a long id and a short id that spells the long id's old shortened name two names", () => {
    const { long, short, hash } = collidingIds();
    expect(encodeSessionId(long)).not.toBe(encodeSessionId(short));
    expect(encodeSessionId(short)).toBe(`${"~0041".repeat(30)}~${hash}`);
    expect(encodeSessionId(short)).toBe(legacySessionIdName(long));
    expect(mayBeLegacyHashedName(encodeSessionId(short))).toBe(true);
    expect(encodeSessionId(long)).toBe(`${"~0041".repeat(30)}~~${hash}`);
  });

  it("maps distinct ids to distinct names, shortened or not", () => {
    fc.assert(
      fc.property(anyId, anyId, (a, b) => {
        fc.pre(a !== b);
        expect(encodeSessionId(a)).not.toBe(encodeSessionId(b));
      }),
      { numRuns: 2000 },
    );
  });
});
