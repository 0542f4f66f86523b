import { describe, expect, it } from "vitest";
import { validateCreateSessionOptions } from "../../src/generated.js";
import { SessionStore } from "../../src/index.js";
import { MemoryBackend } from "../../src/store/memory/memory-backend.js";
import { problemText, schemaProblem, schemaProblems } from "../../src/util/schema-problem.js";

describe("schemaProblem: a validator's findings told one way", () => {
  it("names the member an unknown property is, with the path into the value", () => {
    expect(validateCreateSessionOptions({ meta: { bogus: 1 } })).toBe(false);
    const found = schemaProblem(validateCreateSessionOptions.errors);
    expect(found).toEqual({
      instancePath: "/meta",
      message: "must NOT have additional properties (bogus)",
    });
    expect(problemText(found)).toBe("/meta must NOT have additional properties (bogus)");
  });

  it("says the value itself is invalid when the validator left no errors", () => {
    expect(schemaProblems(null)).toEqual([{ instancePath: "", message: "is invalid" }]);
    expect(problemText(schemaProblem(undefined))).toBe("/ is invalid");
  });

  // Before the one formatter, create options told the message without its path or the member
  // ("got must NOT have additional properties"); this failed then.
  it("tells a store's caller where a create option is wrong and which member", async () => {
    const store = new SessionStore({ backend: new MemoryBackend() });
    await expect(store.create({ meta: { bogus: 1 } } as never)).rejects.toMatchObject({
      code: "INVALID_PARAMS",
      message: expect.stringContaining("/meta must NOT have additional properties (bogus)"),
    });
    await store.close();
  });
});
