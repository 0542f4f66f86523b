// Reads a JSON-RPC request's id from the head of a message too large to parse, so its refusal can name the request.

/** How many bytes of a message's head the scan looks at, at most. */
export const HEAD_SCAN_BYTES = 4096;

/**
 * The `id` of the JSON object that `head` begins (the first bytes of a message, not necessarily
 * all of it), when it can be read without parsing the rest: the object's top-level members are
 * scanned in order, up to the first member whose value is an object or an array (vscode-jsonrpc
 * writes `{"jsonrpc":"2.0","id":…,"method":…,"params":{…}}`, so the id comes before the params).
 * Returns the id when a member `"id"` with a string or finite-number value is met before that;
 * `null` otherwise (not an object, an id after the first object or array, a head cut before the
 * id, a second `"id"` member, a malformed head). Only the first {@link HEAD_SCAN_BYTES} bytes
 * are read.
 */
export function headId(head: Uint8Array): string | number | null {
  const text = Buffer.from(
    head.buffer,
    head.byteOffset,
    Math.min(head.byteLength, HEAD_SCAN_BYTES),
  ).toString("utf8");
  const scan = new Scanner(text);
  try {
    scan.skipSpace();
    if (!scan.eat("{")) return null;
    let id: string | number | null = null;
    let seen = false;
    for (;;) {
      scan.skipSpace();
      if (scan.peek() === "}") return id;
      const key = scan.string();
      scan.skipSpace();
      if (!scan.eat(":")) return null;
      scan.skipSpace();
      const next = scan.peek();
      if (next === "{" || next === "[") return id;
      const value = scan.scalar();
      if (key === "id") {
        if (seen) return null;
        seen = true;
        id =
          typeof value === "string" || (typeof value === "number" && Number.isFinite(value))
            ? value
            : null;
      }
      scan.skipSpace();
      if (scan.eat(",")) continue;
      if (scan.peek() === "}") return id;
      return null;
    }
  } catch {
    // A head cut inside a member, or not JSON: no id can be trusted.
    return null;
  }
}

/** A cursor over the head's text; its readers throw at a malformed or cut-off value. */
class Scanner {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  peek(): string | undefined {
    return this.#text[this.#at];
  }

  eat(char: string): boolean {
    if (this.#text[this.#at] !== char) return false;
    this.#at++;
    return true;
  }

  skipSpace(): void {
    while (/[ \t\r\n]/.test(this.#text[this.#at] ?? "")) this.#at++;
  }

  /** A JSON string, decoded (JSON.parse checks its escapes and refuses raw control characters). */
  string(): string {
    if (this.#text[this.#at] !== '"') throw new Error("expected a string");
    let end = this.#at + 1;
    while (end < this.#text.length && this.#text[end] !== '"') {
      end += this.#text[end] === "\\" ? 2 : 1;
    }
    if (end >= this.#text.length) throw new Error("expected the string's closing quote");
    const value = JSON.parse(this.#text.slice(this.#at, end + 1)) as string;
    this.#at = end + 1;
    return value;
  }

  /** A string, number, true, false or null. */
  scalar(): unknown {
    if (this.peek() === '"') return this.string();
    const match = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      this.#text.slice(this.#at),
    );
    if (match === null) throw new Error("expected a scalar");
    this.#at += match[0].length;
    // A number cut by the end of the head may not be whole.
    if (this.#at >= this.#text.length) throw new Error("expected more after the value");
    return JSON.parse(match[0]) as unknown;
  }
}
