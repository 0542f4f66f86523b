// Lossless JSON: copies a caller's value into frozen plain JSON, refusing anything JSON would change.

/** Where and why a value is not lossless JSON: `path` is a JSON Pointer into the value. */
export interface JsonValueProblem {
  readonly path: string;
  readonly found: string;
}

/**
 * The deepest nesting of arrays and objects a stored value may have. `JSON.stringify` overflows
 * the stack a few thousand levels down, so a deeper value could be accepted and then never be
 * written or read back; it is refused up front instead.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * A problem found below the top of a value. It is returned (not thrown) up the copy, and each
 * level adds its key on the way, so the JSON Pointer is only built when there is a problem.
 */
class Found {
  /** The keys from the problem up to the top (reversed at the end). */
  readonly keys: (string | number)[] = [];
  readonly found: string;
  /** Whether the problem is nesting deeper than {@link MAX_JSON_DEPTH}. */
  readonly tooDeep: boolean;

  constructor(found: string, tooDeep = false) {
    this.found = found;
    this.tooDeep = tooDeep;
  }
}

/**
 * Returns a deep, frozen copy of `value` when it is lossless JSON (null, booleans, finite numbers,
 * strings, dense arrays, plain objects, nested at most {@link MAX_JSON_DEPTH} deep), or the first
 * problem found. BigInt, `undefined`, NaN, ±Infinity, functions, symbols, Map, Set, Date, class
 * instances, sparse arrays and cycles are problems: `JSON.stringify` would drop or change them, so
 * the stored log would differ from what the caller holds.
 *
 * The depth limit bounds the recursion, so no input overflows the stack. A cycle shows as nesting
 * past the limit and is then reported where the value first repeats.
 */
export function copyJsonValue(value: unknown): { value: unknown } | { problem: JsonValueProblem } {
  const ancestors: object[] = [];
  const result = copy(value, ancestors);
  if (!(result instanceof Found)) return { value: result };
  const keys = result.keys.reverse();
  let found = result.found;
  if (result.tooDeep) {
    // `ancestors` still holds the chain down to the problem: a repeated object is a cycle.
    const seen = new Set<object>();
    for (let i = 0; i < ancestors.length; i++) {
      const ancestor = ancestors[i] as object;
      if (seen.has(ancestor)) {
        keys.length = i;
        found = "a cycle";
        break;
      }
      seen.add(ancestor);
    }
  }
  return { problem: { path: keys.map(pointerToken).join(""), found } };
}

function copy(v: unknown, ancestors: object[]): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : new Found(String(v));
    case "object": {
      if (v === null) return null;
      if (ancestors.length >= MAX_JSON_DEPTH) {
        return new Found(`arrays or objects nested more than ${MAX_JSON_DEPTH} deep`, true);
      }
      ancestors.push(v);
      const out = Array.isArray(v) ? copyArray(v, ancestors) : copyObject(v, ancestors);
      // On a problem the chain is left in place for the cycle check.
      if (!(out instanceof Found)) ancestors.pop();
      return out;
    }
    case "undefined":
      return new Found("undefined");
    default:
      return new Found(`a ${typeof v}`);
  }
}

function copyArray(v: readonly unknown[], ancestors: object[]): unknown {
  const length = v.length;
  const out = new Array<unknown>(length);
  for (let i = 0; i < length; i++) {
    if (!(i in v)) return at(new Found("a hole in a sparse array"), i);
    const child = copy(v[i], ancestors);
    if (child instanceof Found) return at(child, i);
    out[i] = child;
  }
  return Object.freeze(out);
}

function copyObject(v: object, ancestors: object[]): unknown {
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    return new Found(`an instance of ${proto?.constructor?.name ?? "a class"}`);
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const child = copy((v as Record<string, unknown>)[key], ancestors);
    if (child instanceof Found) return at(child, key);
    out[key] = child;
  }
  return Object.freeze(out);
}

/** Adds the key a problem was found under, on its way up. */
function at(found: Found, key: string | number): Found {
  found.keys.push(key);
  return found;
}

function pointerToken(member: string | number): string {
  return `/${typeof member === "number" ? member : member.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * Freezes a value that came from `JSON.parse` in place (it is lossless by construction, and shares
 * no object between two places), so a log read from storage holds one copy of its events, not two.
 * A value already frozen at the top is returned as it is.
 */
export function freezeParsed<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) freezeTree(value, 0);
  return value;
}

/** Freezes `value` and everything below it: recursively down to the depth limit, then iteratively. */
function freezeTree(value: object, depth: number): void {
  if (depth === MAX_JSON_DEPTH) {
    freezeIteratively(value);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === "object" && child !== null) freezeTree(child, depth + 1);
    }
  } else {
    for (const key in value) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) freezeTree(child, depth + 1);
    }
  }
  Object.freeze(value);
}

/** Freezes a deeply nested parsed value with an explicit stack (no recursion). */
function freezeIteratively(value: object): void {
  const pending: object[] = [value];
  while (pending.length > 0) {
    const next = pending.pop() as object;
    Object.freeze(next);
    for (const key in next) {
      const child: unknown = (next as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) pending.push(child);
    }
  }
}
