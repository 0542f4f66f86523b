// A small reader of TypeScript declarations (interfaces, type aliases) and their members, for messages that name members.
//
// TypeScript 7 has no compiler API, and the compiler itself decides type equality (see
// type-checks.ts). This reader only finds what to ask the compiler about and how to word the
// answer: which names a block declares, which members an object shape has, and the type text of
// each member as written.

/** A property of an object shape, as written. */
export interface MemberDecl {
  readonly name: string;
  readonly optional: boolean;
  readonly readonly: boolean;
  /** The member's type as written, whitespace collapsed. */
  readonly type: string;
  /** The 1-based line of the member within the parsed text. */
  readonly line: number;
}

/** A top-level `interface` or `type` declaration. */
export interface TypeDecl {
  readonly name: string;
  readonly kind: "interface" | "type";
  /** The 1-based line of the declaration's head within the parsed text. */
  readonly line: number;
  /** Whether it has type parameters. */
  readonly generic: boolean;
  /**
   * Whether it is an object shape: an interface, or a type alias that is an object literal type or
   * an intersection of them. Only object shapes have members to compare one by one.
   */
  readonly objectShape: boolean;
  /** Its own members, in order (for an interface, not those it inherits through `extends`). */
  readonly members: readonly MemberDecl[];
}

const IDENT = "[A-Za-z_$][\\w$]*";
const HEAD = new RegExp(`\\b(?:export\\s+)?(?:declare\\s+)?(interface|type)\\s+(${IDENT})`, "g");
const MEMBER = new RegExp(`^(readonly\\s+)?(${IDENT}|"[^"]*"|'[^']*')\\s*(\\?)?\\s*:`);

/** Type names of the language and its standard library, never looked up in the package. */
export const BUILTIN_TYPE_NAMES: ReadonlySet<string> = new Set([
  "Array",
  "ArrayLike",
  "AsyncIterable",
  "Awaited",
  "BigInt",
  "Boolean",
  "Capitalize",
  "ConstructorParameters",
  "Date",
  "Error",
  "Exclude",
  "Extract",
  "Function",
  "InstanceType",
  "Iterable",
  "Lowercase",
  "Map",
  "NoInfer",
  "NonNullable",
  "Number",
  "Object",
  "Omit",
  "Parameters",
  "Partial",
  "Pick",
  "Promise",
  "PromiseLike",
  "PropertyKey",
  "Readonly",
  "ReadonlyArray",
  "ReadonlyMap",
  "ReadonlySet",
  "Record",
  "RegExp",
  "Required",
  "ReturnType",
  "Set",
  "String",
  "Symbol",
  "Uncapitalize",
  "Uppercase",
]);

/**
 * The text with comments blanked and string literal contents replaced, keeping every offset and
 * newline, so that brackets and keywords can be found by position without being fooled by text.
 */
export function maskText(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (ch === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (ch === '"' || ch === "'" || ch === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      const stop = Math.min(j + 1, text.length);
      out += ch + "_".repeat(Math.max(0, stop - i - 2)) + (stop - i >= 2 ? ch : "");
      i = stop;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** Parses the top-level interfaces and type aliases of a text. */
export function parseDeclarations(text: string): TypeDecl[] {
  const code = maskText(text);
  const depth = depthAt(code);
  const heads = [...code.matchAll(HEAD)].filter((m) => depth[m.index] === 0);
  return heads.map((m, k): TypeDecl => {
    const kind = m[1] as "interface" | "type";
    const name = m[2] as string;
    const limit = heads[k + 1]?.index ?? code.length;
    let at = skipSpace(code, m.index + m[0].length);
    const generic = code[at] === "<";
    if (generic) at = skipSpace(code, closeOf(code, at) + 1);
    const line = lineOf(text, m.index);
    if (kind === "interface") {
      const open = code.indexOf("{", at);
      if (open === -1 || open >= limit) {
        return { name, kind, line, generic, objectShape: true, members: [] };
      }
      const close = closeOf(code, open);
      return {
        name,
        kind,
        line,
        generic,
        objectShape: true,
        members: membersOf(text, code, open, close),
      };
    }
    const eq = code.indexOf("=", at);
    let end = limit;
    for (let i = eq + 1; i < limit; i++) {
      if (code[i] === ";" && depth[i] === 0) {
        end = i;
        break;
      }
    }
    const parts = objectParts(code, eq + 1, end);
    return {
      name,
      kind,
      line,
      generic,
      objectShape: parts !== undefined,
      members: (parts ?? []).flatMap(([open, close]) => membersOf(text, code, open, close)),
    };
  });
}

/**
 * The type names a text refers to without declaring them: capitalised identifiers outside
 * strings and comments, minus the names it declares, their type parameters, mapped and `infer`
 * variables, member names and the standard library's types. Sorted.
 */
export function referencedTypeNames(text: string): string[] {
  const code = maskText(text);
  const decls = parseDeclarations(text);
  const local = new Set<string>(decls.map((d) => d.name));
  for (const d of decls) for (const m of d.members) local.add(m.name);
  for (const m of code.matchAll(
    new RegExp(`(?:\\[\\s*(${IDENT})\\s+in\\b|\\binfer\\s+(${IDENT}))`, "g"),
  )) {
    local.add((m[1] ?? m[2]) as string);
  }
  for (const m of code.matchAll(
    new RegExp(`\\b(?:interface|type)\\s+${IDENT}\\s*<([^>]*)>`, "g"),
  )) {
    for (const p of (m[1] as string).matchAll(new RegExp(`(?:^|,)\\s*(${IDENT})`, "g"))) {
      local.add(p[1] as string);
    }
  }
  const found = new Set<string>();
  for (const m of code.matchAll(/(?<![\w$.])[A-Z][\w$]*/g)) {
    if (!local.has(m[0]) && !BUILTIN_TYPE_NAMES.has(m[0])) found.add(m[0]);
  }
  return [...found].sort();
}

/** The line starts of the text parsed last: a text is parsed in one go, line after line. */
let indexed: { readonly text: string; readonly starts: readonly number[] } | undefined;

/** The 1-based line of an offset. */
export function lineOf(text: string, offset: number): number {
  if (indexed?.text !== text) {
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
    indexed = { text, starts };
  }
  const { starts } = indexed;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Bracket depth ({, [, () before each offset of masked code. */
function depthAt(code: string): number[] {
  const depth: number[] = new Array(code.length);
  let d = 0;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (ch === "}" || ch === "]" || ch === ")") d = Math.max(0, d - 1);
    depth[i] = d;
    if (ch === "{" || ch === "[" || ch === "(") d++;
  }
  return depth;
}

/** The offset of the bracket closing the one at `open` ({, [, ( or <), or the end of the code. */
function closeOf(code: string, open: number): number {
  let d = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if (ch === "{" || ch === "[" || ch === "(" || ch === "<") d++;
    else if (ch === "}" || ch === "]" || ch === ")" || (ch === ">" && code[i - 1] !== "=")) {
      d--;
      if (d === 0) return i;
    }
  }
  return code.length;
}

function skipSpace(code: string, at: number): number {
  while (at < code.length && /\s/.test(code[at] as string)) at++;
  return at;
}

/** The brace pairs of `{…} & {…}` between `from` and `to`, or undefined when it is not only that. */
function objectParts(code: string, from: number, to: number): [number, number][] | undefined {
  const parts: [number, number][] = [];
  let at = skipSpace(code, from);
  for (;;) {
    if (code[at] !== "{") return undefined;
    const close = closeOf(code, at);
    parts.push([at, close]);
    at = skipSpace(code, close + 1);
    if (at >= to) return parts;
    if (code[at] !== "&") return undefined;
    at = skipSpace(code, at + 1);
  }
}

/** The members between the braces at `open` and `close`. */
function membersOf(text: string, code: string, open: number, close: number): MemberDecl[] {
  const members: MemberDecl[] = [];
  let start = open + 1;
  let d = 0;
  const flush = (end: number) => {
    const member = memberAt(text, code, start, end);
    if (member !== undefined) members.push(member);
    start = end + 1;
  };
  for (let i = open + 1; i < close; i++) {
    const ch = code[i];
    if (ch === "{" || ch === "[" || ch === "(" || ch === "<") d++;
    else if (ch === "}" || ch === "]" || ch === ")" || (ch === ">" && code[i - 1] !== "=")) d--;
    else if (d === 0 && (ch === ";" || ch === ",")) flush(i);
    else if (d === 0 && ch === "\n" && MEMBER.test(code.slice(i + 1, close).trimStart())) flush(i);
  }
  flush(close);
  return members;
}

/** The original text between two offsets, with the comments that masking blanked left blank. */
function withoutComments(text: string, code: string, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i++) {
    const blanked = code[i] === " " && !/\s/.test(text[i] as string);
    out += blanked ? " " : text[i];
  }
  return out;
}

function memberAt(text: string, code: string, start: number, end: number): MemberDecl | undefined {
  const masked = code.slice(start, end);
  const lead = masked.length - masked.trimStart().length;
  const m = MEMBER.exec(masked.trimStart());
  if (m === null) return undefined;
  const from = start + lead;
  const rawName = text.slice(
    from + (m[1]?.length ?? 0),
    from + (m[1]?.length ?? 0) + (m[2] as string).length,
  );
  const name = rawName.startsWith('"') || rawName.startsWith("'") ? rawName.slice(1, -1) : rawName;
  const type = withoutComments(text, code, from + m[0].length, end)
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^\| /, "");
  return {
    name,
    optional: m[3] !== undefined,
    readonly: m[1] !== undefined,
    type,
    line: lineOf(text, from),
  };
}
