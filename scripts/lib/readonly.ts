// Makes generated TypeScript declarations immutable: json-schema-to-typescript has no readonly option.
//
// The input is json-schema-to-typescript's own (prettier-formatted) output, so the transform works on
// tokens rather than a full parser: comments and string literals pass through untouched, every
// property or index signature gains `readonly`, and every array type `T[]` becomes `readonly T[]`
// (nested: `T[][]` → `readonly (readonly T[])[]`).

type TokenKind = "comment" | "string" | "word" | "space" | "punct";

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

/** Adds `readonly` to every member and array type of generated declarations; idempotent. */
export function makeReadonly(source: string): string {
  const input = tokenize(source);
  const out: Token[] = [];
  for (let i = 0; i < input.length; i++) {
    const token = input[i] as Token;
    if (token.text === "[" && input[i + 1]?.text === "]") {
      let depth = 0;
      while (input[i]?.text === "[" && input[i + 1]?.text === "]") {
        depth++;
        i += 2;
      }
      i--;
      wrapArrayAtom(out, depth);
      continue;
    }
    if (isMemberStart(input, i, out)) out.push({ kind: "word", text: "readonly" }, SPACE);
    out.push(token);
  }
  return out.map((t) => t.text).join("");
}

const SPACE: Token = { kind: "space", text: " " };

/** A member starts where the last significant token is `{` or `;` and a name (or `[k: …]`) is followed by `:` or `?:`. */
function isMemberStart(input: readonly Token[], i: number, out: readonly Token[]): boolean {
  const prev = lastSignificant(out);
  if (prev === undefined || (prev.text !== "{" && prev.text !== ";")) return false;
  const token = input[i] as Token;
  if (token.kind === "word" && token.text === "readonly") return false;
  if (token.kind === "word" || token.kind === "string") {
    const next = input[i + 1]?.text;
    return next === ":" || (next === "?" && input[i + 2]?.text === ":");
  }
  // Index signature `[k: string]: …`.
  return token.text === "[" && input[i + 1]?.kind === "word" && input[i + 2]?.text === ":";
}

function lastSignificant(out: readonly Token[]): Token | undefined {
  for (let j = out.length - 1; j >= 0; j--) {
    const t = out[j] as Token;
    if (t.kind !== "space" && t.kind !== "comment") return t;
  }
  return undefined;
}

/** Replaces the atom at the end of `out` with `depth` nested readonly array types around it. */
function wrapArrayAtom(out: Token[], depth: number): void {
  const start = atomStart(out);
  const before = lastSignificant(out.slice(0, start));
  let atom = out
    .splice(start)
    .map((t) => t.text)
    .join("");
  if (before?.text === "readonly") {
    // Already immutable (a second pass): keep the suffixes as they are.
    out.push({ kind: "word", text: atom + "[]".repeat(depth) });
    return;
  }
  for (let d = 0; d < depth; d++) {
    atom = `readonly ${atom}[]`;
    if (d < depth - 1) atom = `(${atom})`;
  }
  out.push({ kind: "word", text: atom });
}

function atomStart(out: readonly Token[]): number {
  let j = out.length - 1;
  const last = out[j];
  if (last === undefined) throw new Error("expected a type before [], found the start of the text");
  const close = last.text;
  if (close !== ")" && close !== "}") return j;
  const open = close === ")" ? "(" : "{";
  let depth = 0;
  for (; j >= 0; j--) {
    const t = (out[j] as Token).text;
    if (t === close) depth++;
    else if (t === open && --depth === 0) return j;
  }
  throw new Error(`expected a matching ${open} before ${close}[], found none`);
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /(\/\*[\s\S]*?\*\/|\/\/[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|([A-Za-z_$][\w$]*|\d+(?:\.\d+)?)|(\s+)|([\s\S])/g;
  for (const m of source.matchAll(pattern)) {
    const kind: TokenKind =
      m[1] !== undefined
        ? "comment"
        : m[2] !== undefined
          ? "string"
          : m[3] !== undefined
            ? "word"
            : m[4] !== undefined
              ? "space"
              : "punct";
    tokens.push({ kind, text: m[0] });
  }
  return tokens;
}
