// Splits a PostgreSQL named-query statement into tokens, for the checks the generator makes without a server.

/** The placeholder a named query uses for the target schema (identifiers cannot be bound). */
export const SCHEMA_PLACEHOLDER = "{schema}";
/**
 * The placeholder a named query uses for the schema's change channel (LISTEN takes an identifier,
 * not a parameter).
 */
export const CHANNEL_PLACEHOLDER = "{channel}";
const PLACEHOLDERS = [SCHEMA_PLACEHOLDER, CHANNEL_PLACEHOLDER] as const;

/** What a token is; `placeholder` is {@link SCHEMA_PLACEHOLDER} or {@link CHANNEL_PLACEHOLDER}. */
export type TokenKind = "word" | "quoted" | "string" | "param" | "placeholder" | "punct" | "other";

/** One token of a statement; `start` and `end` are offsets into its text. */
export interface Token {
  readonly kind: TokenKind;
  /** For words: lower-cased; for quoted identifiers: the name inside the quotes; else the text. */
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

/**
 * Splits a statement into tokens: words, quoted identifiers, string literals (`'…'`, `E'…'`),
 * `@name` parameters, the `{schema}` and `{channel}` placeholders and punctuation. Comments are skipped.
 * Calls `fail` (which throws) with what was expected and the offset it was not found at, for `$`
 * (positional parameters and dollar quoting are refused so that rewriting `@name` to `$n` is
 * unambiguous), a bad `@` or `{`, or an unterminated literal.
 */
export function tokenize(sql: string, fail: (expected: string, at: number) => never): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const start = i;
    if (/\s/.test(ch)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (sql.startsWith("/*", i)) {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        if (sql.startsWith("/*", i) || sql.startsWith("*/", i)) {
          depth += sql[i] === "/" ? 1 : -1;
          i += 2;
        } else i++;
      }
      if (depth > 0) fail("a closed comment", start);
    } else if (ch === "'" || ((ch === "E" || ch === "e") && sql[i + 1] === "'")) {
      const escapes = ch !== "'";
      i += escapes ? 2 : 1;
      for (;;) {
        if (i >= sql.length) fail("a closed string literal", start);
        if (escapes && sql[i] === "\\") i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
      tokens.push({ kind: "string", value: sql.slice(start, i), start, end: i });
    } else if (ch === '"') {
      let name = "";
      i++;
      for (;;) {
        if (i >= sql.length) fail("a closed quoted identifier", start);
        if (sql[i] === '"' && sql[i + 1] === '"') {
          name += '"';
          i += 2;
        } else if (sql[i] === '"') break;
        else name += sql[i++];
      }
      i++;
      tokens.push({ kind: "quoted", value: name, start, end: i });
    } else if (ch === "$") {
      fail("named parameters (@name) and no dollar quoting", i);
    } else if (ch === "@") {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0];
      if (name === undefined) fail("a parameter name after @", i);
      i += 1 + (name as string).length;
      tokens.push({ kind: "param", value: name as string, start, end: i });
    } else if (ch === "{") {
      const placeholder = PLACEHOLDERS.find((p) => sql.startsWith(p, i));
      if (placeholder === undefined) fail(`${PLACEHOLDERS.join(" or ")} as the only {…}`, i);
      i += (placeholder as string).length;
      tokens.push({ kind: "placeholder", value: placeholder as string, start, end: i });
    } else if (/[A-Za-z_]/.test(ch)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i))?.[0] as string;
      i += word.length;
      tokens.push({ kind: "word", value: word.toLowerCase(), start, end: i });
    } else if ("(),;.".includes(ch)) {
      i++;
      tokens.push({ kind: "punct", value: ch, start, end: i });
    } else if (ch === ":" && sql[i + 1] === ":") {
      i += 2;
      tokens.push({ kind: "punct", value: "::", start, end: i });
    } else {
      i++;
      tokens.push({ kind: "other", value: ch, start, end: i });
    }
  }
  return tokens;
}
