// Proves the frame limit's pieces in-process: the head-id scanner, the writer's size check, export parts, log parts, upload caps.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { logParts } from "../../src/client/log-parts.js";
import { SessionStore } from "../../src/index.js";
import { cuttable, smallerAnswerOf } from "../../src/rpc/frame-limit.js";
import { FrameLimitWriter } from "../../src/rpc/frame-limit-writer.js";
import { headId } from "../../src/rpc/head-id.js";
import { ImportUploads } from "../../src/rpc/import-uploads.js";
import {
  type FramingError,
  NdjsonMessageReader,
  NdjsonMessageWriter,
} from "../../src/rpc/ndjson-framing.js";
import { type ExportAnswer, exportFrom, firstPage, wholeExport } from "../../src/rpc/pages.js";
import { balancedLog } from "../helpers/builders.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

describe("headId", () => {
  it("reads a string or number id met before the first object or array member", () => {
    expect(
      headId(bytes('{"jsonrpc":"2.0","id":7,"method":"session/import","params":{"log":"')),
    ).toBe(7);
    expect(headId(bytes(' { "id" : "a\\"b" , "method":"x", "params": ['))).toBe('a"b');
    expect(headId(bytes('{"jsonrpc":"2.0","id":-1.5e3,"params":{'))).toBe(-1500);
    expect(headId(bytes('{"jsonrpc":"2.0","method":"m","id":"é😀","params":{"x"'))).toBe("é😀");
  });

  it("answers null when the id cannot be trusted from the head", () => {
    // The id after params: out of reach without parsing the params.
    expect(headId(bytes('{"jsonrpc":"2.0","method":"m","params":{"log":"x"},"id":3}'))).toBeNull();
    // No id at all, a null id, an object id, a second id member.
    expect(headId(bytes('{"jsonrpc":"2.0","method":"m","params":{'))).toBeNull();
    expect(headId(bytes('{"id":null,"params":{'))).toBeNull();
    expect(headId(bytes('{"id":{"a":1},"params":{'))).toBeNull();
    expect(headId(bytes('{"id":1,"id":2,"params":{'))).toBeNull();
    // A head cut inside the id, or in a number that may go on.
    expect(headId(bytes('{"jsonrpc":"2.0","id":"abc'))).toBeNull();
    expect(headId(bytes('{"jsonrpc":"2.0","id":12'))).toBeNull();
    // Not an object, not JSON, a batch.
    expect(headId(bytes('[{"id":1}]'))).toBeNull();
    expect(headId(bytes('xx{"id":1,'))).toBeNull();
    expect(headId(bytes('{"id" 1,'))).toBeNull();
    // The id past the scanned head (4 KiB) is not looked for.
    expect(headId(bytes(`{"pad":"${"p".repeat(5000)}","id":1,"params":{`))).toBeNull();
  });
});

describe("NdjsonMessageReader over the limit", () => {
  // Seen failing before: the FramingError carried no id (undefined, not 5).
  it("reports the id read from the head of a line that grows past the limit, across chunks", async () => {
    const input = new PassThrough();
    const reader = new NdjsonMessageReader(input, { maxMessageBytes: 64 });
    const errors: FramingError[] = [];
    const messages: unknown[] = [];
    reader.onError((error) => errors.push(error as FramingError));
    const closed = new Promise<void>((resolve) => reader.onClose(() => resolve()));
    reader.listen((message) => messages.push(message));
    input.write('{"jsonrpc":"2.0","i');
    input.write('d":5,"method":"m","params":{"x":"');
    input.write(`${"a".repeat(100)}"}}\n{"params":{"x":"${"b".repeat(100)}"},"id":6}\n{"id":7}\n`);
    input.end();
    await closed;
    expect(errors.map((e) => [e.failure, e.id])).toEqual([
      ["too-large", 5],
      ["too-large", null],
    ]);
    expect(messages).toEqual([{ id: 7 }]);
  });
});

/** A frame-limit writer over an NDJSON writer into a buffer; `lines()` parses what was written. */
function guardedWriter(maxBytes: number) {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on("data", (chunk: Buffer) => chunks.push(chunk));
  const logs: string[] = [];
  const writer = new FrameLimitWriter(
    new NdjsonMessageWriter(output),
    (l) => logs.push(l),
    maxBytes,
  );
  const lines = () =>
    Buffer.concat(chunks)
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { writer, lines, logs };
}

describe("FrameLimitWriter", () => {
  it("writes a message at the limit as it is, and answers a larger response with RESPONSE_TOO_LARGE for its id", async () => {
    const small = { jsonrpc: "2.0", id: 1, result: { log: "x".repeat(10) } };
    const limit = JSON.stringify(small).length;
    const { writer, lines, logs } = guardedWriter(limit);
    await writer.write(small as Message);
    await writer.write({ jsonrpc: "2.0", id: "b", result: { log: "x".repeat(11) } } as Message);
    expect(lines()).toEqual([
      small,
      {
        jsonrpc: "2.0",
        id: "b",
        error: {
          code: -32021,
          message: expect.stringContaining(`at most ${limit} bytes`),
          data: { code: "RESPONSE_TOO_LARGE", limit, size: limit + 3 },
        },
      },
    ]);
    expect(logs.join("\n")).toContain('answered id "b" with RESPONSE_TOO_LARGE');
  });

  it("writes the smaller answer of a cuttable result over the limit, and the whole one under it", async () => {
    const { writer, lines } = guardedWriter(100);
    const result = (n: number) => ({ events: Array.from({ length: n }, (_, i) => i * 1000) });
    await writer.write({
      jsonrpc: "2.0",
      id: 1,
      result: cuttable(result(30), () => result(2)),
    } as Message);
    await writer.write({
      jsonrpc: "2.0",
      id: 2,
      result: cuttable(result(3), () => result(1)),
    } as Message);
    expect(lines()).toEqual([
      { jsonrpc: "2.0", id: 1, result: result(2) },
      { jsonrpc: "2.0", id: 2, result: result(3) },
    ]);
  });

  it("refuses a notification over the limit without writing it", async () => {
    const { writer, lines } = guardedWriter(64);
    const note = { jsonrpc: "2.0", method: "session/events", params: { events: ["y".repeat(64)] } };
    await expect(writer.write(note as Message)).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
    });
    expect(lines()).toEqual([]);
  });
});

describe("pages and parts", () => {
  it("cuts read pages and export parts by bytes, and the parts concatenate to the whole export", async () => {
    const store = new SessionStore();
    const events = balancedLog(20, { prompt: "p".repeat(1000) });
    const created = await store.create({ id: "paged", seed: events });
    const session = await store.load(created.id);
    const whole = await store.exportLog("paged");
    expect(await wholeExport(store, "paged")).toEqual({
      log: whole,
      nextSeq: events.length,
      done: true,
    });

    const page = firstPage(await session.readEvents(), 3000);
    expect(page.length).toBeGreaterThan(1);
    expect(JSON.stringify(page).length).toBeLessThanOrEqual(3000 + 1100);
    // At least one event, however small the budget.
    expect(firstPage((await session.readEvents()).slice(1), 1)).toHaveLength(1);

    // The rest of a small log fits in one message: all of it, with a smaller part to cut to.
    expect(await exportFrom(store, "paged", 0, 2500)).toEqual({
      log: whole,
      nextSeq: events.length,
      done: true,
    });
    const cutTo = async (fromSeq: number): Promise<ExportAnswer> => {
      const rest = await exportFrom(store, "paged", fromSeq, 2500);
      return (smallerAnswerOf(rest)?.() ?? rest) as ExportAnswer;
    };
    const parts: string[] = [];
    let fromSeq = 0;
    for (;;) {
      const part = await cutTo(fromSeq);
      parts.push(part.log);
      expect(part.nextSeq).toBeGreaterThan(fromSeq);
      fromSeq = part.nextSeq;
      if (part.done) break;
    }
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.join("")).toBe(whole);
    expect(await exportFrom(store, "paged", events.length + 3)).toEqual({
      log: "",
      nextSeq: events.length + 3,
      done: true,
    });
  });

  it("cuts a log into parts within the budget that join back to it, inside a line only when it must", () => {
    const log = `${["a", "b\u0001c", '"q"', "é😀".repeat(40), "d"].join("\n")}\n`;
    for (const budget of [8, 20, 64, 1000]) {
      const parts = logParts(log, budget);
      expect(parts.join("")).toBe(log);
      for (const part of parts) {
        expect(Buffer.byteLength(JSON.stringify(part)) - 2).toBeLessThanOrEqual(budget);
        // No part starts with the low half of a surrogate pair.
        expect(part.charCodeAt(0) >= 0xdc00 && part.charCodeAt(0) <= 0xdfff).toBe(false);
      }
    }
    expect(logParts(log, 1000)).toEqual([log]);
    expect(logParts("x\ny\n", 3)).toEqual(["x\n", "y\n"]);
  });
});

describe("ImportUploads", () => {
  it("joins an upload's parts, and refuses past its caps with INVALID_PARAMS", () => {
    let now = 0;
    const uploads = new ImportUploads({ maxBytes: 10, max: 2, idleMs: 100, now: () => now });
    expect(uploads.add("a", "abc")).toEqual({ importId: "a", parts: 1, bytes: 3 });
    expect(uploads.add("a", "de")).toEqual({ importId: "a", parts: 2, bytes: 5 });
    expect(uploads.take("a", "f")).toBe("abcdef");
    expect(() => uploads.take("a", "")).toThrow(
      /expected an importId whose parts this connection holds/,
    );
    uploads.add("b", "1");
    uploads.add("c", "2");
    expect(() => uploads.add("d", "3")).toThrow(/at most 2 uploads/);
    expect(() => uploads.add("b", "x".repeat(9))).toThrow(/at most 10 bytes/);
    // The upload past the cap is dropped; the other stays until idle.
    expect(uploads.size).toBe(1);
    now = 100;
    uploads.sweep();
    expect(uploads.size).toBe(0);
  });
});
