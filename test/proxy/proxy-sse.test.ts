// The SSE parser the proxy tees responses through: the same events whatever the network's chunking and line ends.
import { describe, expect, it } from "vitest";
import { type SseEvent, SseParser, sseText } from "../../src/proxy/sse.js";
import { HAVE, openaiSse } from "../helpers/proxy-harness.js";

const HAVE_FIXTURES = HAVE["openai-chat"];

function parse(pieces: readonly Uint8Array[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((event) => events.push(event));
  for (const piece of pieces) parser.push(piece);
  parser.end();
  return events;
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe("SseParser", () => {
  it("reads named and unnamed events, multi-line data, comments and CRLF or CR line ends", () => {
    const text =
      ': comment\r\nevent: message_start\r\ndata: {"a":1}\r\n\r\ndata: x\rdata: y\r\rdata: last';
    expect(parse([bytes(text)])).toEqual([
      { name: "message_start", data: '{"a":1}' },
      { name: undefined, data: "x\ny" },
      { name: undefined, data: "last" },
    ]);
  });

  it("gives the same events for a body split at any byte, a multi-byte character or a CRLF included", () => {
    const text = `${sseText('{"t":"café ☕"}')}${sseText("two", "named").replaceAll("\n", "\r\n")}data: [DONE]\n\n`;
    const whole = parse([bytes(text)]);
    expect(whole).toHaveLength(3);
    const all = bytes(text);
    for (let at = 1; at < all.length; at++) {
      expect(parse([all.slice(0, at), all.slice(at)])).toEqual(whole);
    }
  });

  it.skipIf(!HAVE_FIXTURES)(
    `reads every event of a captured Chat Completions stream split in pieces ${HAVE_FIXTURES ? "" : "(skipped: ../shared/fixtures-real is absent)"}`,
    () => {
      const text = openaiSse("chat_parallel_tool_calls_stream.sse");
      const all = bytes(text);
      const pieces = [all.slice(0, 7), all.slice(7, 301), all.slice(301)];
      const events = parse(pieces);
      expect(events.map((e) => e.data)).toEqual(
        text
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6)),
      );
    },
  );
});
