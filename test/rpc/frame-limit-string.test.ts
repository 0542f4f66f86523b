// The outgoing frame guard with answers past the longest string the runtime can make: RESPONSE_TOO_LARGE with its code, never INTERNAL.
import { constants } from "node:buffer";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { RPC_ERROR_CODES } from "../../src/generated.js";
import { checkFits } from "../../src/rpc/frame-limit.js";
import { FrameLimitWriter } from "../../src/rpc/frame-limit-writer.js";
import { NdjsonMessageWriter } from "../../src/rpc/ndjson-framing.js";

/** One string shared by every entry: a result whose JSON is past the longest string, held cheaply. */
function pastLongestString(): string[] {
  const part = "m".repeat(Math.ceil(constants.MAX_STRING_LENGTH / 4));
  return [part, part, part, part, part];
}

describe("answers past the longest string", () => {
  // Fails without the fix: write() threw the RangeError "Invalid string length" of JSON.stringify,
  // which the server answered as a bare -32603 with no data.code (seen with session/messages of a
  // session of 75 tool outputs of 8 MiB).
  it("are answered RESPONSE_TOO_LARGE for the same id by the writer", async () => {
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on("data", (chunk: Buffer) => chunks.push(chunk));
    const logs: string[] = [];
    const writer = new FrameLimitWriter(new NdjsonMessageWriter(output), (l) => logs.push(l));
    const response = { jsonrpc: "2.0", id: 9, result: { messages: pastLongestString() } };
    await writer.write(response as Message);
    const answer = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id: number;
      error: { code: number; data: { code: string; size: number } };
    };
    expect(answer.id).toBe(9);
    expect(answer.error.code).toBe(RPC_ERROR_CODES.RESPONSE_TOO_LARGE);
    expect(answer.error.data.code).toBe("RESPONSE_TOO_LARGE");
    expect(answer.error.data.size).toBeGreaterThanOrEqual(constants.MAX_STRING_LENGTH);
    expect(logs.join("\n")).toContain("RESPONSE_TOO_LARGE");
  }, 60_000);

  it("are refused by checkFits one item at a time, before any text of the whole is built", () => {
    expect(() => checkFits(pastLongestString(), "an answer")).toThrow(
      expect.objectContaining({ code: "RESPONSE_TOO_LARGE" }),
    );
    expect(() => checkFits(["small", "items"], "an answer")).not.toThrow();
  });
});
