// The canonical member order of an event is read from the event schemas, not written in src/.
import { describe, expect, it } from "vitest";
import { type CatalogueEntry, readEnvelopeMembers } from "../../scripts/render-event-catalogue.js";
import { CANONICAL_EVENT_MEMBERS } from "../../src/generated.js";
import { SerializedEvent } from "../../src/log/serialized-event.js";
import { toolResult, turnStart } from "../helpers/builders.js";

function entry(schemaPath: string, members: string[]): CatalogueEntry {
  return {
    type: schemaPath,
    typeName: "",
    dataTypeName: "",
    surface: false,
    description: "",
    schemaPath,
    members,
  };
}

describe("the canonical event member order", () => {
  it("merges every event schema's members in their common order", () => {
    expect(
      readEnvelopeMembers([
        entry("a", ["type", "seq", "data"]),
        entry("b", ["type", "seq", "data", "surfaceOp"]),
        entry("c", ["type", "seq", "data", "sourceEventSeqs", "surfaceOp"]),
      ]),
    ).toEqual(["type", "seq", "data", "sourceEventSeqs", "surfaceOp"]);
    expect(() =>
      readEnvelopeMembers([entry("a", ["type", "seq"]), entry("b", ["seq", "type"])]),
    ).toThrow(/expected b to list its members in the others' order/);
  });

  it("is the order of a stored line, which one JSON.stringify of an event in it writes", () => {
    expect(CANONICAL_EVENT_MEMBERS).toEqual([
      "type",
      "seq",
      "time",
      "data",
      "sourceEventSeqs",
      "surfaceOp",
    ]);
    for (const event of [
      turnStart(0, 1),
      toolResult(5, 1, 1, "c1", {
        sourceEventSeqs: [3, 4],
        surfaceOp: { op: "replace", start: 3, end: 4 },
      }),
    ]) {
      expect(Object.keys(JSON.parse(SerializedEvent.of(event).json))).toEqual(
        CANONICAL_EVENT_MEMBERS.filter((m) => m in event),
      );
    }
  });
});
