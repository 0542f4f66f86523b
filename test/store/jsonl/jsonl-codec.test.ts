// One JSONL codec: the store's reader, import, replay files and validate refuse a header or event line with the same error.
import { describe, expect, it } from "vitest";
import { checkLogText } from "../../../src/cli/validate-log.js";
import { type SessionEvent, SessionStore, StorageError } from "../../../src/index.js";
import { formatEventLine, parseHeaderLine } from "../../../src/log/jsonl-codec.js";
import { parseSessionHeader, parseSessionLog } from "../../../src/replay/session-file.js";
import { parseLogText } from "../../../src/store/jsonl/log-reader.js";
import { simpleTurn } from "../../helpers/builders.js";
import { rejectionOf } from "../../helpers/store-builders.js";

const LOCATION = "f.jsonl";
const GOOD_HEADER = '{"type":"session","version":0,"id":"s","createdAt":0}';

function thrownBy(fn: () => unknown): StorageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StorageError);
    return error as StorageError;
  }
  throw new Error("expected a throw");
}

/** Headers every reader refuses, with the code each must give. */
const BAD_HEADERS: readonly (readonly [string, string])[] = [
  ['{"type":"session","version":1,"id":"s","createdAt":0}', "FORMAT_UNSUPPORTED"],
  ['{"type":"session","version":-1,"id":"s","createdAt":0}', "FORMAT_UNSUPPORTED"],
  // Before the codec was shared, replay files took a string version as found "0" (the raw
  // string) and a null or boolean version as CORRUPT_LOG; every reader now refuses any present
  // `version` other than 0 as FORMAT_UNSUPPORTED, found shown as JSON.
  ['{"type":"session","version":"0","id":"s","createdAt":0}', "FORMAT_UNSUPPORTED"],
  ['{"type":"session","version":null,"id":"s","createdAt":0}', "FORMAT_UNSUPPORTED"],
  ['{"type":"session","version":true,"id":"s","createdAt":0}', "FORMAT_UNSUPPORTED"],
  ['{"type":"session","id":"s","createdAt":0}', "CORRUPT_LOG"],
  ['{"type":"session","version":0,"id":"s","createdAt":0,"colour":"red"}', "CORRUPT_LOG"],
  ["[0]", "CORRUPT_LOG"],
  ["not json", "CORRUPT_LOG"],
];

describe("a bad header line", () => {
  it.each(BAD_HEADERS)("%s is refused the same way by every reader", async (header, code) => {
    const text = `${header}\n`;
    const codec = thrownBy(() => parseHeaderLine(header, LOCATION));
    expect(codec.code).toBe(code);
    const same = { code: codec.code, message: codec.message, details: codec.details };
    expect(thrownBy(() => parseLogText(text, LOCATION))).toMatchObject(same);
    expect(thrownBy(() => parseSessionHeader(text, LOCATION))).toMatchObject(same);
    expect(thrownBy(() => parseSessionLog(text, LOCATION))).toMatchObject(same);
    const imported = await rejectionOf(new SessionStore().importLog(text));
    expect(imported).toMatchObject({ code, details: { location: "imported log" } });
    expect(checkLogText(text, LOCATION).problems).toEqual([
      {
        file: LOCATION,
        line: 1,
        rule: code === "FORMAT_UNSUPPORTED" ? "format-version" : "header",
        message: codec.message,
      },
    ]);
  });

  it("names the member a header must not have", () => {
    const error = thrownBy(() => parseHeaderLine(BAD_HEADERS[6]?.[0] as string, LOCATION));
    expect(error.message).toContain("(colour)");
  });

  it("is named by its own line in a replay file that starts with blank lines", () => {
    const error = thrownBy(() => parseSessionHeader(`\n \n${BAD_HEADERS[5]?.[0]}\n`, LOCATION));
    expect(error.details).toEqual({ location: LOCATION, line: 3 });
    expect(error.message).toContain("on line 3 of f.jsonl");
  });

  it("is missing from an empty text, for every reader", () => {
    const codec = thrownBy(() => parseLogText("", LOCATION));
    expect(codec.details).toEqual({ location: LOCATION, line: 1 });
    const same = { code: "CORRUPT_LOG", message: codec.message, details: codec.details };
    expect(thrownBy(() => parseSessionHeader("\n\n", LOCATION))).toMatchObject(same);
    expect(thrownBy(() => parseSessionLog("", LOCATION))).toMatchObject(same);
    expect(checkLogText("", LOCATION).problems).toMatchObject([{ line: 1, rule: "header" }]);
  });
});

describe("an event line", () => {
  const turn = simpleTurn(0, 1) as SessionEvent[];

  it.each(["[0]", "5", "null", '"text"'])(
    "that is JSON but not an object (%s) is refused by replay files as not a JSON object, as by the store",
    (line) => {
      // Before the codec was shared, replay files passed such a line on to the schema check
      // (CORRUPT_LOG with seq and rule "schema"); it is now what the store's reader calls a bad
      // line: CORRUPT_LOG naming the file and line.
      const text = `${GOOD_HEADER}\n${formatEventLine(turn[0] as SessionEvent)}${line}\n`;
      const error = thrownBy(() => parseSessionLog(text, LOCATION));
      expect(error).toMatchObject({
        code: "CORRUPT_LOG",
        details: { location: LOCATION, line: 3 },
      });
      expect(error.details).toEqual({ location: LOCATION, line: 3 });
      expect(parseLogText(text, LOCATION)).toMatchObject({ tornTail: true, tornAt: { line: 3 } });
      expect(checkLogText(text, LOCATION).problems).toMatchObject([{ line: 3, rule: "json" }]);
    },
  );

  it("of an unknown type is refused with the same error by the store's reader and replay files", () => {
    const text = `${GOOD_HEADER}\n{"type":"x/new","seq":0,"time":0,"data":{}}\n`;
    const store = thrownBy(() => parseLogText(text, LOCATION));
    expect(store).toMatchObject({
      code: "FORMAT_UNSUPPORTED",
      details: { found: "x/new", supported: 0, location: LOCATION },
    });
    expect(thrownBy(() => parseSessionLog(text, LOCATION))).toMatchObject({
      code: store.code,
      message: store.message,
      details: store.details,
    });
  });

  it("of an unknown type at the wrong seq is a seq problem first, in replay files as in the store", () => {
    const text = `${GOOD_HEADER}\n{"type":"x/new","seq":4,"time":0,"data":{}}\n`;
    expect(thrownBy(() => parseSessionLog(text, LOCATION))).toMatchObject({
      code: "CORRUPT_LOG",
      details: { location: LOCATION, line: 2, seq: 4, rule: "seq-contiguous" },
    });
    expect(parseLogText(text, LOCATION)).toMatchObject({ events: [], tornTail: true });
  });
});
