// Text helpers the generators share: identifier casing, literals, JSDoc comments and error values.

/** `snake_case` → `camelCase`. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `snake_case` → `PascalCase`. */
export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** A TypeScript array literal of strings, on one line: `["a", "b"]`. */
export function stringList(items: readonly string[]): string {
  return `[${items.map((item) => JSON.stringify(item)).join(", ")}]`;
}

/** A JSDoc comment for `text`, on one line when it fits in 100 columns, else wrapped by words. */
export function jsDoc(text: string, indent: string): string[] {
  // A description must not end the comment it is written into.
  const safe = text.replaceAll("*/", "*\\/");
  const oneLine = `${indent}/** ${safe} */`;
  if (oneLine.length <= 100) return [oneLine];
  const lines: string[] = [];
  let line = `${indent} *`;
  for (const word of safe.split(/\s+/)) {
    if (line.length + 1 + word.length > 100 && line !== `${indent} *`) {
      lines.push(line);
      line = `${indent} *`;
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return [`${indent}/**`, ...lines, `${indent} */`];
}

/** A value as an error message quotes it: JSON, cut to 80 characters; `nothing` for undefined. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A JSON pointer as an error message names it: the root is `/`, not the empty string. */
export function pathOf(pointer: string): string {
  return pointer === "" ? "/" : pointer;
}

/** The value at a JSON pointer of `doc`, or undefined when the path does not exist. */
export function valueAt(doc: unknown, pointer: string): unknown {
  let value = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
