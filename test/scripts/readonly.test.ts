import { describe, expect, it } from "vitest";
import { makeReadonly } from "../../scripts/lib/readonly.js";

describe("makeReadonly", () => {
  it("marks every property and index signature readonly", () => {
    const input = [
      "export interface A {",
      "  a: string;",
      '  "b-c"?: number;',
      "  [k: string]: unknown;",
      "}",
    ].join("\n");
    expect(makeReadonly(input)).toBe(
      [
        "export interface A {",
        "  readonly a: string;",
        '  readonly "b-c"?: number;',
        "  readonly [k: string]: unknown;",
        "}",
      ].join("\n"),
    );
  });

  it("reaches members of object types nested in unions", () => {
    const input =
      'export interface A {\n  u?:\n    | "append"\n    | {\n        x: number;\n      };\n}';
    expect(makeReadonly(input)).toContain("readonly u?:");
    expect(makeReadonly(input)).toContain("readonly x: number;");
  });

  it("turns array types into readonly arrays, nested ones included", () => {
    expect(makeReadonly("type A = B[];")).toBe("type A = readonly B[];");
    expect(makeReadonly("type A = string[][];")).toBe("type A = readonly (readonly string[])[];");
    expect(makeReadonly("type A = (string | number)[];")).toBe(
      "type A = readonly (string | number)[];",
    );
    expect(makeReadonly("type A = {\n  x: B[];\n}[];")).toBe(
      "type A = readonly {\n  readonly x: readonly B[];\n}[];",
    );
  });

  it("leaves comments and string literals alone", () => {
    const input = '/**\n * holds ContentBlock[] items; a: b\n */\nexport type A = "x[]";';
    expect(makeReadonly(input)).toBe(input);
  });

  it("is idempotent", () => {
    const input = "export interface A {\n  a: B[][];\n  b?: {\n    c: string[];\n  };\n}";
    const once = makeReadonly(input);
    expect(makeReadonly(once)).toBe(once);
  });

  it("does not touch type aliases, generics or index access", () => {
    const input = 'export type A = B | C;\nexport type D = Record<string, E>;\ntype F = G["h"];';
    expect(makeReadonly(input)).toBe(input);
  });
});
