// Server-sent events: an incremental parser for a response being teed, and the writer replay renders with.

/** One SSE event: its `event:` name (absent for the default `message`) and its joined `data:`. */
export interface SseEvent {
  readonly name: string | undefined;
  readonly data: string;
}

/**
 * Parses an SSE byte stream as it arrives (any chunking, `\n`, `\r\n` or `\r` line ends), calling
 * `onEvent` per complete event. Comments, `id:` and `retry:` lines carry nothing to record.
 */
export class SseParser {
  readonly #decoder = new TextDecoder();
  readonly #onEvent: (event: SseEvent) => void;
  #buffer = "";
  #name: string | undefined = undefined;
  #data: string[] = [];

  constructor(onEvent: (event: SseEvent) => void) {
    this.#onEvent = onEvent;
  }

  /** Takes the next bytes of the stream. */
  push(bytes: Uint8Array): void {
    this.#feed(this.#decoder.decode(bytes, { stream: true }));
  }

  /** The stream ended: a last event without its blank line still counts. */
  end(): void {
    this.#feed(`${this.#decoder.decode()}\n\n`);
  }

  #feed(text: string): void {
    this.#buffer += text;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next bytes.
      if (match === null || (match[0] === "\r" && match.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      this.#line(line);
    }
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#data.length > 0) this.#onEvent({ name: this.#name, data: this.#data.join("\n") });
      this.#name = undefined;
      this.#data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#name = value;
  }
}

/** One SSE event as text: an `event:` line when named, a `data:` line per line of data. */
export function sseText(data: string, name?: string): string {
  const head = name === undefined ? "" : `event: ${name}\n`;
  return `${head}${data
    .split("\n")
    .map((line) => `data: ${line}`)
    .join("\n")}\n\n`;
}
