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
    const buffer = this.#buffer + text;
    let at = 0;
    let cr = buffer.indexOf("\r");
    for (;;) {
      const nl = buffer.indexOf("\n", at);
      if (cr !== -1 && cr < at) cr = buffer.indexOf("\r", at);
      let end: number;
      let next: number;
      if (cr !== -1 && (nl === -1 || cr < nl)) {
        // A lone `\r` at the end may be the first half of `\r\n`: wait for the next bytes.
        if (cr === buffer.length - 1) break;
        end = cr;
        next = nl === cr + 1 ? cr + 2 : cr + 1;
      } else if (nl !== -1) {
        end = nl;
        next = nl + 1;
      } else break;
      this.#line(buffer.slice(at, end));
      at = next;
    }
    this.#buffer = at === 0 ? buffer : buffer.slice(at);
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
