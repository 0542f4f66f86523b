// Proves the NDJSON reader/writer (line splitting, UTF-8 across chunks, the size limit) and the inbound guard's
// classification of what arrives (requests, notifications, batches, malformed messages, responses).
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { checkMessage } from "../../src/rpc/inbound.js";
import {
  type FramingError,
  NdjsonMessageReader,
  NdjsonMessageWriter,
} from "../../src/rpc/ndjson-framing.js";

/** Feeds `chunks` to a reader and collects what it delivers and reports. */
async function read(chunks: (string | Buffer)[], maxMessageBytes?: number) {
  const input = new PassThrough();
  const reader = new NdjsonMessageReader(
    input,
    maxMessageBytes === undefined ? {} : { maxMessageBytes },
  );
  const messages: unknown[] = [];
  const errors: FramingError[] = [];
  reader.onError((error) => errors.push(error as FramingError));
  const closed = new Promise<void>((resolve) => reader.onClose(() => resolve()));
  reader.listen((message) => messages.push(message));
  for (const chunk of chunks) input.write(chunk);
  input.end();
  await closed;
  return { messages, failures: errors.map((e) => e.failure) };
}

describe("NdjsonMessageReader", () => {
  it("reads one message per line, whatever the chunking", async () => {
    const text = '{"a":1}\n{"b":2}\n{"c":3}\n';
    const { messages } = await read([text.slice(0, 3), text.slice(3, 10), text.slice(10)]);
    expect(messages).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it("decodes a multi-byte character split across chunks", async () => {
    const bytes = Buffer.from('{"t":"é😀"}\n', "utf8");
    const { messages } = await read([
      bytes.subarray(0, 7),
      bytes.subarray(7, 9),
      bytes.subarray(9),
    ]);
    expect(messages).toEqual([{ t: "é😀" }]);
  });

  it("skips blank lines, accepts CRLF, and reads a last line without a newline", async () => {
    const { messages, failures } = await read(['\n  \n{"a":1}\r\n\n{"b":2}']);
    expect(messages).toEqual([{ a: 1 }, { b: 2 }]);
    expect(failures).toEqual([]);
  });

  it("reports a line that is not JSON, or not UTF-8, and keeps reading", async () => {
    const { messages, failures } = await read([
      "not json\n",
      Buffer.from([0xff, 0xfe, 0x0a]),
      '{"a":1}\n',
    ]);
    expect(failures).toEqual(["parse", "parse"]);
    expect(messages).toEqual([{ a: 1 }]);
  });

  it("refuses a line over the limit once, without keeping it, and reads the next line", async () => {
    const long = `{"x":"${"y".repeat(100)}"}`;
    const { messages, failures } = await read(
      [long.slice(0, 40), long.slice(40), '\n{"ok":true}\n'],
      64,
    );
    expect(failures).toEqual(["too-large"]);
    expect(messages).toEqual([{ ok: true }]);
  });
});

describe("NdjsonMessageWriter", () => {
  it("writes each message as one line, newlines in strings escaped", async () => {
    const output = new PassThrough();
    const writer = new NdjsonMessageWriter(output);
    await writer.write({ jsonrpc: "2.0", id: 1, result: { text: "a\nb\u2028c" } } as Message);
    await writer.write({ jsonrpc: "2.0", method: "m" } as Message);
    writer.end();
    const text = (await output.toArray()).join("");
    const lines = text.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(JSON.parse(lines[0] as string)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { text: "a\nb\u2028c" },
    });
  });
});

describe("checkMessage", () => {
  it("passes requests and notifications with params by name, or none", () => {
    expect(checkMessage({ jsonrpc: "2.0", id: 1, method: "m", params: {} }).kind).toBe("request");
    expect(checkMessage({ jsonrpc: "2.0", id: "x", method: "m" }).kind).toBe("request");
    expect(checkMessage({ jsonrpc: "2.0", method: "m" }).kind).toBe("notification");
  });

  it.each([
    ["a batch", [{ jsonrpc: "2.0", id: 1, method: "m" }], null],
    ["a scalar", 42, null],
    ["null", null, null],
    ["a missing jsonrpc", { id: 3, method: "m" }, 3],
    ["another jsonrpc version", { jsonrpc: "1.0", id: 3, method: "m" }, 3],
    ["a non-string method", { jsonrpc: "2.0", id: 3, method: 7 }, 3],
    ["a null id", { jsonrpc: "2.0", id: null, method: "m" }, null],
    ["an object id", { jsonrpc: "2.0", id: {}, method: "m" }, null],
    ["params by position", { jsonrpc: "2.0", id: "p", method: "m", params: [1] }, "p"],
    ["params that are null", { jsonrpc: "2.0", id: 4, method: "m", params: null }, 4],
    ["neither method nor result", { jsonrpc: "2.0", id: 5 }, 5],
  ])("refuses %s as INVALID_REQUEST, answered with id %s", (_, value, id) => {
    const checked = checkMessage(value);
    if (checked.kind !== "rejected") throw new Error(`expected a rejection, got ${checked.kind}`);
    expect(checked.rejection.id).toEqual(id);
    expect(checked.rejection.error.kind).toBe("INVALID_REQUEST");
  });

  it("says batches are not supported", () => {
    const checked = checkMessage([]);
    expect(checked.kind === "rejected" && checked.rejection.error.message).toContain(
      "batches are not supported",
    );
  });

  it("drops responses and broken notifications without answering them", () => {
    expect(checkMessage({ jsonrpc: "2.0", id: 1, result: {} }).kind).toBe("dropped");
    expect(checkMessage({ jsonrpc: "2.0", id: null, error: { code: 1 } }).kind).toBe("dropped");
    expect(checkMessage({ jsonrpc: "2.0", method: "m", params: [1] }).kind).toBe("dropped");
  });
});
